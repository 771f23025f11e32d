"""The lessons' exercises: answer cells, their self-checks, and the reference solutions.

In a lesson, an exercise is an answer cell (id ``<name>-answer``) that the learner fills
in, followed by a self-check cell (id ``<name>-check``) that calls
:mod:`course_helpers.selfcheck`. The reference solutions live outside the notebooks, in
``exercises/<lesson>.toml``, keyed by answer-cell id, so that a learner opening a lesson
never sees them; CI runs each lesson with them in place and expects every check to pass.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

import nbformat

ANSWER, CHECK = "-answer", "-check"


def answer_cells(notebook: nbformat.NotebookNode) -> list[str]:
    return [cell.id for cell in notebook.cells if cell.get("id", "").endswith(ANSWER)]


def check_outputs(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """What each self-check cell of an executed notebook printed, by cell id."""
    return {
        cell.id: "".join(
            output.get("data", {}).get("text/plain", "") + output.get("text", "")
            for output in cell.get("outputs", [])
        )
        for cell in notebook.cells
        if cell.get("id", "").endswith(CHECK)
    }


@dataclass(frozen=True)
class Exercise:
    """One entry of ``exercises/<lesson>.toml``.

    ``points`` is what the exercise is worth when the lesson is graded as an assignment;
    ``hidden_test`` is code the grader runs after the self-check, unseen by students
    (``None``: the self-check itself decides).
    """

    solution: str
    points: int = 1
    hidden_test: str | None = None


def solutions(root: Path, lesson: str) -> dict[str, str]:
    """Answer-cell id to reference code, read from ``exercises/<lesson>.toml``."""
    return {cell_id: exercise.solution for cell_id, exercise in load(root, lesson).items()}


def load(root: Path, lesson: str) -> dict[str, Exercise]:
    """Answer-cell id to its :class:`Exercise`, read from ``exercises/<lesson>.toml``.

    Raises ValueError, naming the file, for invalid TOML, an entry without a
    ``solution``, points that are not a positive whole number, or an id that is not an
    answer cell of the English lesson.
    """
    path = root / "exercises" / f"{lesson}.toml"
    try:
        entries = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path}: not valid TOML ({error}).") from error
    lesson_path = root / "notebooks" / "en" / f"{lesson}.ipynb"
    answers = answer_cells(nbformat.read(lesson_path, as_version=4))
    found = {}
    for cell_id, entry in entries.items():
        if cell_id not in answers:
            raise ValueError(
                f"{path}: [{cell_id}] is not an answer cell of {lesson_path.name}; "
                f"its answer cells are {', '.join(answers) or 'none'}."
            )
        if not isinstance(entry, dict) or not isinstance(entry.get("solution"), str):
            raise ValueError(
                f"{path}: [{cell_id}] needs solution = '''...''' (the code that "
                "answers the exercise)."
            )
        points = entry.get("points", 1)
        if isinstance(points, bool) or not isinstance(points, int) or points < 1:
            raise ValueError(
                f"{path}: [{cell_id}] points = {points!r}; write a whole number of "
                "points, 1 or more."
            )
        hidden = entry.get("hidden_test")
        if hidden is not None and not isinstance(hidden, str):
            raise ValueError(f"{path}: [{cell_id}] hidden_test must be code in a string.")
        found[cell_id] = Exercise(
            entry["solution"].strip("\n"), points, hidden.strip("\n") if hidden else None
        )
    missing = [cell_id for cell_id in answers if cell_id not in found]
    if missing:
        raise ValueError(f"{path}: no reference solution for {', '.join(missing)}.")
    return found
