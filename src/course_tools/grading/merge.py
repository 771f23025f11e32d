"""Bring the grades of a class graded on several machines into one course folder.

A class too large for one machine is split by student: each machine holds a copy of the
course folder (the same ``source/``, ``release/`` and ``gradebook.db`` after
``nbgrader generate_assignment``) and grades its share with ``course grade --student``.
:func:`merge` then copies, into the instructor's course, what each other copy graded:
every grade and comment, through nbgrader's own ``Gradebook`` API (no SQL of ours), and
each student's ``autograded/`` folder and grading log, which ``nbgrader generate_feedback``
reads. Nothing already in the instructor's course is overwritten: a student graded in
both is refused, by name.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from course_tools.grading.settings import gradebook_url

#: The fields copied for each kind of row, as nbgrader names them.
STUDENT_FIELDS = ("first_name", "last_name", "email", "lms_user_id")
SUBMISSION_FIELDS = ("timestamp", "extension")
NOTEBOOK_FIELDS = ("flagged", "late_submission_penalty")
GRADE_FIELDS = ("auto_score", "manual_score", "extra_credit", "needs_manual_grade")
COMMENT_FIELDS = ("auto_comment", "manual_comment")


def _cells(gradebook, assignment: str) -> dict[str, tuple]:
    """Each notebook's grade cells and their points: two copies must agree on them."""
    found = gradebook.find_assignment(assignment)
    return {
        notebook.name: tuple(sorted((c.name, c.max_score) for c in notebook.grade_cells))
        for notebook in found.notebooks
    }


def merge(course: Path, other: Path, assignment: str) -> list[str]:
    """Copy into ``course`` the submissions of ``assignment`` graded in ``other``, a copy of
    the same course graded on another machine; return the students merged."""
    from nbgrader.api import Gradebook, MissingEntry

    course, other = Path(course).resolve(), Path(other).resolve()
    for folder in (course, other):
        if not (folder / "gradebook.db").exists():
            raise FileNotFoundError(
                f"{folder} has no gradebook.db: is it a course folder where "
                f"`nbgrader generate_assignment {assignment}` has run?"
            )
    if course == other:
        raise ValueError(f"{other} is this course folder itself; give the other copy's folder.")
    with Gradebook(gradebook_url(other)) as source, Gradebook(gradebook_url(course)) as target:
        try:
            theirs, ours = _cells(source, assignment), _cells(target, assignment)
        except MissingEntry:
            raise ValueError(
                f"{assignment} is not in both gradebooks ({other}, {course}): run "
                f"`nbgrader generate_assignment {assignment}` in each first."
            ) from None
        if theirs != ours:
            raise ValueError(
                f"{assignment} has other notebooks or grade cells in {other} than in "
                f"{course}: the two copies were generated from different sources. "
                "Generate the assignment once and copy the course folder to every machine."
            )
        submissions = source.find_assignment(assignment).submissions
        graded = [s.student.id for s in submissions]
        both = sorted(
            student
            for student in graded
            if _has_submission(target, assignment, student)
            or (course / "autograded" / student / assignment).exists()
        )
        if both:
            raise ValueError(
                f"Graded in both {other} and {course}: {', '.join(both)}. Each student "
                "must be graded on one machine only; nothing was merged."
            )
        for submission in submissions:
            student = submission.student
            target.update_or_create_student(
                student.id, **{f: getattr(student, f) for f in STUDENT_FIELDS}
            )
            known = {f: getattr(submission, f) for f in SUBMISSION_FIELDS}
            target.update_or_create_submission(
                assignment, student.id, **{f: v for f, v in known.items() if v is not None}
            )
            for notebook in submission.notebooks:
                mine = target.find_submission_notebook(notebook.name, assignment, student.id)
                for name in NOTEBOOK_FIELDS:
                    setattr(mine, name, getattr(notebook, name))
                for grade in notebook.grades:
                    row = target.find_grade(grade.name, notebook.name, assignment, student.id)
                    for name in GRADE_FIELDS:
                        setattr(row, name, getattr(grade, name))
                for comment in notebook.comments:
                    row = target.find_comment(comment.name, notebook.name, assignment, student.id)
                    for name in COMMENT_FIELDS:
                        setattr(row, name, getattr(comment, name))
            target.db.commit()
    for student in graded:
        for part in ("submitted", "autograded"):
            source_folder = other / part / student / assignment
            destination = course / part / student / assignment
            if source_folder.is_dir() and not destination.exists():
                shutil.copytree(source_folder, destination, symlinks=True)
        log = other / "logs" / assignment / f"{student}.log"
        if log.exists():
            (course / "logs" / assignment).mkdir(parents=True, exist_ok=True)
            shutil.copy2(log, course / "logs" / assignment / log.name)
    return sorted(graded)


def _has_submission(gradebook, assignment: str, student: str) -> bool:
    from nbgrader.api import MissingEntry

    try:
        gradebook.find_submission(assignment, student)
    except MissingEntry:
        return False
    return True
