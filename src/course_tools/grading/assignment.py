"""Turn a lesson, in one language, into an nbgrader source assignment.

The lesson's exercises become graded: each answer cell is an nbgrader solution cell that
keeps the lesson's stub and holds the reference solution in a solution region; each
self-check cell is a locked test cell worth the exercise's points, which keeps the
visible self-check and runs a hidden test before it. ``nbgrader generate_assignment``
then removes the solutions and hidden tests, so the released notebook reads exactly like
the lesson. Solutions, points and hidden tests come from ``exercises/<lesson>.toml``.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from course_helpers.languages import check_language
from course_tools import exercises
from course_tools.grading import settings
from course_tools.grading.feedback import METADATA_KEY

CONFIG_TEMPLATE = """# Written by `course assignment` for the course "{course_id}". It is yours to edit:
# `course assignment` never rewrites this file once it exists. nbgrader reads it from
# every command run in this folder. See docs/en/instructors.md, "Localized texts".
from pathlib import Path

from course_tools.grading import settings

c = get_config()  # noqa: F821 - nbgrader defines get_config() when it loads this file
settings.apply(
    c,
    root=Path(__file__).resolve().parent,
    course_id={course_id!r},
    language={language!r},  # the default; each assignment's own language wins where it can
    exchange={exchange!r},  # shared folder for release/fetch/submit/collect; None: nbgrader's
    cell_timeout=120,       # seconds one cell of a submission may run
    cpu_seconds=900,        # CPU seconds for one submission's kernel and its children
    memory_mb=8192,         # memory of that kernel and its children, in MiB
    file_mb=256,            # largest file it may write, in MiB
    processes=512,          # processes and threads it may run at once
    disk_mb=512,            # what it may write in its folder, in MiB (and in /tmp)
    disk_files=10_000,      # files and folders its folder may hold (and /tmp)
    user=None,              # e.g. "nobody": run student code as that user (grade as root)
    quick=True,             # run the lessons' training loops at their small CI size
)
"""


def assignment_id(lesson: str, language: str) -> str:
    return f"{lesson}-{language}"


def source_notebook(root: Path, lesson: str, language: str) -> nbformat.NotebookNode:
    """The lesson in ``language`` with its exercises marked for nbgrader."""
    check_language(language)
    path = root / "notebooks" / language / f"{lesson}.ipynb"
    if not path.exists():
        lessons = sorted(p.stem for p in (root / "notebooks" / "en").glob("*.ipynb"))
        raise FileNotFoundError(f"{path} does not exist. Lessons: {', '.join(lessons)}.")
    notebook = nbformat.read(path, as_version=4)
    found = exercises.load(root, lesson)
    ids = [cell.id for cell in notebook.cells]
    for answer_id, exercise in found.items():
        check_id = answer_id.removesuffix(exercises.ANSWER) + exercises.CHECK
        missing = [cell_id for cell_id in (answer_id, check_id) if cell_id not in ids]
        if missing:
            raise ValueError(
                f"{path} has no cell {' or '.join(repr(i) for i in missing)}, which "
                f"exercises/{lesson}.toml grades. The localized lesson is older than the "
                f"English one: run 'course l10n update' and 'course l10n build', then try again."
            )
        answer = notebook.cells[ids.index(answer_id)]
        check = notebook.cells[ids.index(check_id)]
        answer.source = "\n".join(
            [
                answer.source.rstrip("\n"),
                "### BEGIN SOLUTION",
                exercise.solution,
                "### END SOLUTION",
            ]
        )
        answer.metadata["nbgrader"] = _nbgrader(answer_id, solution=True)
        hidden = (
            exercise.hidden_test
            or f"_feedback = {check.source.strip()}\nassert _feedback, _feedback.message"
        )
        # The hidden test runs first, so that the visible self-check stays the cell's last
        # expression and still shows its note.
        check.source = "\n".join(
            ["### BEGIN HIDDEN TESTS", hidden, "### END HIDDEN TESTS", check.source.strip()]
        )
        check.metadata["nbgrader"] = _nbgrader(
            check_id, grade=True, locked=True, points=exercise.points
        )
    notebook.metadata[METADATA_KEY] = {"lesson": lesson, "language": language}
    return notebook


def _nbgrader(
    grade_id: str,
    *,
    solution: bool = False,
    grade: bool = False,
    locked: bool = False,
    points: int | None = None,
) -> dict:
    metadata = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if points is not None:
        metadata["points"] = points
    return metadata


def write(
    root: Path, course: Path, lesson: str, language: str, *, exchange: str | None = None
) -> Path:
    """Write ``course/source/<lesson>-<language>/<lesson>.ipynb``; set the course up if new.

    An existing ``nbgrader_config.py`` is left as it is; one that does not apply the
    course's settings gets a clear error instead of a silent change.
    """
    course.mkdir(parents=True, exist_ok=True)
    config = course / "nbgrader_config.py"
    if not config.exists():
        config.write_text(
            CONFIG_TEMPLATE.format(
                course_id=course.resolve().name, language=language, exchange=exchange
            ),
            encoding="utf-8",
        )
    else:
        settings.check_config(config)
    if "course_tools.grading" not in config.read_text(encoding="utf-8"):
        raise ValueError(
            f"{config} exists and does not call course_tools.grading.settings."
            'apply(...). Add that call (see docs/en/instructors.md, "Localized texts"), '
            "or choose an empty folder for the course."
        )
    target = course / "source" / assignment_id(lesson, language) / f"{lesson}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(source_notebook(root, lesson, language), target)
    return target
