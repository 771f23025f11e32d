"""Every exercise's self-check passes on the reference solution and fails on the blank.

The lessons run in quick mode with nbclient with the reference solutions from
exercises/<lesson>.toml in the answer cells. The blank run, as a learner first opens a
lesson, is tests/test_lessons_run_twice.py, which runs every English lesson anyway.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from course_tools import exercises, lessons

ROOT = Path(__file__).resolve().parents[1]
WITH_EXERCISES = sorted(p.stem for p in (ROOT / "exercises").glob("*.toml"))


@pytest.mark.notebook
@pytest.mark.parametrize("lesson", WITH_EXERCISES)
def test_every_self_check_passes_on_the_reference_solutions(lesson, tmp_path):
    path = lessons.run_lesson(
        lesson,
        output=tmp_path / "solved.ipynb",
        quick=True,
        show_progress=False,
        replace=exercises.solutions(ROOT, lesson),
    )
    outputs = exercises.check_outputs(nbformat.read(path, as_version=4))
    assert len(outputs) >= 3
    assert {cell: text[:1] for cell, text in outputs.items()} == dict.fromkeys(outputs, "✔"), (
        outputs
    )


@pytest.mark.parametrize("lesson", WITH_EXERCISES)
def test_each_answer_cell_has_a_solution_and_a_self_check_right_after_it(lesson):
    notebook = nbformat.read(ROOT / "notebooks" / "en" / f"{lesson}.ipynb", as_version=4)
    ids = [cell.id for cell in notebook.cells]
    answers = exercises.answer_cells(notebook)
    assert set(exercises.solutions(ROOT, lesson)) == set(answers)
    for answer in answers:
        check = ids[ids.index(answer) + 1]
        assert check == answer.removesuffix(exercises.ANSWER) + exercises.CHECK
        assert "course.selfcheck." in notebook.cells[ids.index(check)].source


def test_a_solution_for_a_cell_that_is_no_answer_cell_is_refused(tmp_path):
    (tmp_path / "exercises").mkdir()
    (tmp_path / "notebooks" / "en").mkdir(parents=True)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = ...")])
    notebook.cells[0].id = "ex-answer"
    nbformat.write(notebook, tmp_path / "notebooks" / "en" / "01_demo.ipynb")
    (tmp_path / "exercises" / "01_demo.toml").write_text("[ex-typo-answer]\nsolution = 'x = 1'\n")
    with pytest.raises(ValueError, match=r"01_demo.toml: \[ex-typo-answer\] is not an answer cell"):
        exercises.solutions(tmp_path, "01_demo")
