"""A class graded on two machines, each a copy of the course with its share of students,
merged into one gradebook that nbgrader's own export and feedback read."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from course_tools.grading import assignment, grade, merge, settings

ROOT = Path(__file__).resolve().parents[1]
LESSON, LANGUAGE = "01_replay_buffers", "en"
NAME = assignment.assignment_id(LESSON, LANGUAGE)


def nbgrader(*args: str, cwd: Path) -> None:
    grade.run_nbgrader(*args, course=cwd)


def graded(course: Path, student: str, points: dict[str, float]) -> None:
    """What autograding one student leaves: a graded notebook and grades in the gradebook
    (written here with nbgrader's API, so that this test takes seconds)."""
    from nbgrader.api import Gradebook

    folder = course / "autograded" / student / NAME
    folder.mkdir(parents=True)
    shutil.copy(course / "release" / NAME / f"{LESSON}.ipynb", folder / f"{LESSON}.ipynb")
    with Gradebook(settings.gradebook_url(course)) as gradebook:
        gradebook.update_or_create_student(student, first_name=student.title())
        submission = gradebook.update_or_create_submission(NAME, student)
        for notebook in submission.notebooks:
            for row in notebook.grades:
                row.auto_score = points.get(row.name, row.max_score)
                row.needs_manual_grade = False
        gradebook.db.commit()


@pytest.fixture(scope="module")
def two_machines(tmp_path_factory):
    base = tmp_path_factory.mktemp("merge")
    first = base / "machine-1"
    assignment.write(ROOT, first, LESSON, LANGUAGE)
    nbgrader("generate_assignment", NAME, cwd=first)
    second = base / "machine-2"
    shutil.copytree(first, second)  # the course folder, copied once generated
    graded(first, "ana", {})
    graded(first, "ben", {"ex-time-check": 0.0})
    graded(second, "chen", {"ex-shapes-check": 0.0})
    graded(second, "dana", {})
    return first, second


def test_grades_from_another_machine_reach_nbgraders_export(two_machines):
    first, second = two_machines
    assert merge.merge(first, second, NAME) == ["chen", "dana"]
    nbgrader("export", cwd=first)
    with open(first / "grades.csv", newline="") as handle:
        scores = {row["student_id"]: float(row["score"]) for row in csv.DictReader(handle)}
    from course_tools import exercises

    points = {
        a.removesuffix(exercises.ANSWER): e.points for a, e in exercises.load(ROOT, LESSON).items()
    }
    full = sum(points.values())
    assert scores == {
        "ana": full,
        "ben": full - points["ex-time"],
        "chen": full - points["ex-shapes"],
        "dana": full,
    }
    assert (first / "autograded" / "dana" / NAME / f"{LESSON}.ipynb").exists()
    nbgrader("generate_feedback", NAME, cwd=first)
    pages = sorted(p.parts[-3] for p in (first / "feedback").glob(f"*/{NAME}/{LESSON}.html"))
    assert pages == ["ana", "ben", "chen", "dana"]


def test_a_student_graded_on_both_machines_is_refused_and_nothing_changes(tmp_path):
    first = tmp_path / "machine-1"
    assignment.write(ROOT, first, LESSON, LANGUAGE)
    nbgrader("generate_assignment", NAME, cwd=first)
    second = tmp_path / "machine-2"
    shutil.copytree(first, second)
    graded(first, "ana", {})
    graded(second, "ana", {"ex-time-check": 0.0})
    graded(second, "ben", {})
    before = (first / "gradebook.db").read_bytes()
    with pytest.raises(ValueError, match="Graded in both .*: ana. Each student"):
        merge.merge(first, second, NAME)
    assert (first / "gradebook.db").read_bytes() == before
    assert not (first / "autograded" / "ben").exists()


def test_copies_generated_from_different_sources_are_refused(tmp_path):
    first, second = tmp_path / "machine-1", tmp_path / "machine-2"
    for course, lesson in ((first, LESSON), (second, "02_dqn_cartpole")):
        assignment.write(ROOT, course, lesson, LANGUAGE)
        nbgrader("generate_assignment", assignment.assignment_id(lesson, LANGUAGE), cwd=course)
    with pytest.raises(ValueError, match="not in both gradebooks"):
        merge.merge(first, second, NAME)
