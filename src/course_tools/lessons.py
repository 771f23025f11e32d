"""Finding the lessons on disk and running one headless, for `course run`.

nbclient does the execution; this module adds what an instructor needs around it:
lesson names instead of paths, quick mode as a flag, a progress bar over cells, an
output file that never replaces the lesson itself, and an error that names the cell.
"""

from __future__ import annotations

import difflib
import json
import os
import tempfile
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path

from course_helpers.languages import check_language
from course_helpers.quick import QUICK_MODE_VARIABLE
from course_helpers.runs import RUNS_VARIABLE
from course_tools import notebook_json

#: The id of the markdown cell that opens every lesson with its two badges (``course links``).
BADGES_CELL = "badges"
#: The id of every lesson's first code cell, which calls ``course.setup(language=...)``.
SETUP_CELL = "setup"


def project_root() -> Path:
    """The checkout holding ``notebooks/``: the working folder or one above it, else the package's."""
    candidates = [Path.cwd(), *Path.cwd().parents, *Path(__file__).resolve().parents]
    for folder in candidates:
        if (folder / "notebooks" / "en").is_dir():
            return folder
    raise FileNotFoundError(
        "Cannot find the course's notebooks/en folder. Run this command inside the "
        "course repository (the folder with notebooks/ and README.md)."
    )


def lesson_names(language: str = "en", root: Path | None = None) -> list[str]:
    """Lesson names in order, e.g. ``['01_replay_buffers', '02_dqn_cartpole', ...]``.

    ``root`` is the checkout (by default :func:`project_root`).
    """
    folder = (root or project_root()) / "notebooks" / check_language(language)
    return sorted(p.stem for p in folder.glob("[0-9][0-9]_*.ipynb"))


def lesson_path(name: str, language: str = "en") -> Path:
    """Resolve ``02_dqn_cartpole``, ``02`` or ``dqn_cartpole`` to the notebook's path."""
    names = lesson_names(language)
    stem = Path(name).stem
    matches = [n for n in names if stem in (n, n[:2], n[3:])]
    if len(matches) != 1:
        close = difflib.get_close_matches(stem, names + [n[3:] for n in names], n=2, cutoff=0.5)
        hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
        raise ValueError(
            f"Unknown lesson {name!r} in {language}.{hint} Lessons: {', '.join(names)}."
        )
    return project_root() / "notebooks" / language / f"{matches[0]}.ipynb"


class NotebookError(ValueError):
    """An English lesson cannot be used as a translation source; the message says where."""


def read_lesson(path: Path) -> notebook_json.Node:
    """Read an English lesson and check what translation relies on: ids, no outputs.

    The ids are checked in the raw JSON: nbformat silently renames a duplicate id when
    it reads a notebook, which would detach a cell from its translations.
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise NotebookError(
            f"{path}, line {error.lineno}: not valid notebook JSON ({error.msg})."
        ) from error
    seen: dict[str, int] = {}
    # Cells are counted from 1, as a person counts them in JupyterLab.
    for index, cell in enumerate(raw.get("cells", []), start=1):
        cell_id = cell.get("id")
        if not cell_id:
            raise NotebookError(
                f"{path}: cell {index} has no id. Save the notebook as nbformat 4.5."
            )
        if cell_id in seen:
            raise NotebookError(
                f"{path}: cells {seen[cell_id]} and {index} share the id {cell_id!r}. "
                "Give one of them a new id: translations are keyed by cell id."
            )
        seen[cell_id] = index
        if cell.get("cell_type") == "code" and (cell.get("outputs") or cell.get("execution_count")):
            raise NotebookError(
                f"{path}: cell {index} (id {cell_id!r}) still has outputs. Strip them with "
                f"'nbstripout --keep-id {path}' before extracting."
            )
    return notebook_json.reads(json.dumps(raw))


@contextmanager
def _environment(**variables: str):
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class LessonFailed(RuntimeError):
    """A lesson stopped with an error; the message names the cell."""


def run_lesson(
    name: str,
    language: str = "en",
    output: str | os.PathLike | None = None,
    quick: bool = False,
    cell_timeout: int | None = None,
    show_progress: bool = True,
    extra_code: str | None = None,
    replace: Mapping[str, str] | None = None,
    runs_folder: str | os.PathLike | None = None,
) -> Path:
    """Execute a lesson top to bottom and write the executed copy to ``output``.

    The default output is ``runs/<language>/<lesson>.ipynb`` in the repository. The
    lesson itself is never overwritten. If a cell fails, the executed copy is still
    written (with the error in it) and :class:`LessonFailed` names the cell.
    ``cell_timeout`` stops a cell after that many seconds; by default there is no limit,
    because a full-size training cell can run for half an hour (SAC on Minitaur).
    ``extra_code`` is run as one more cell at the end (the benchmark uses it to read
    the lesson's figures); it goes into the executed copy only. ``replace`` maps cell
    ids to the code to run in their place (the exercises' reference solutions).
    Lesson 3 keeps its run, to resume it, under ``runs_folder`` (``COURSE_RUNS``); by
    default a new temporary folder, so that every execution trains from the start.
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError
    from tqdm.auto import tqdm

    source = lesson_path(name, language)
    target = Path(output) if output else project_root() / "runs" / language / source.name
    if target.resolve() == source.resolve():
        raise ValueError(
            f"Refusing to write the executed notebook over the lesson itself ({source}). "
            "Choose another --output path."
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    import nbformat  # imported here: it costs most of a second

    notebook = nbformat.read(source, as_version=4)
    replace = dict(replace or {})
    unknown = set(replace) - {cell.get("id") for cell in notebook.cells}
    if unknown:
        raise ValueError(f"{source.name} has no cell with id {', '.join(sorted(unknown))}.")
    for cell in notebook.cells:
        if cell.get("id") in replace:
            cell.source = replace[cell.id]
    if extra_code:
        notebook.cells.append(nbformat.v4.new_code_cell(extra_code))
    code_cells = sum(cell.cell_type == "code" for cell in notebook.cells)
    bar = tqdm(total=code_cells, desc=source.stem, unit="cell", disable=not show_progress)
    running: dict[str, int] = {}  # the index of the cell being executed, for error messages
    client = NotebookClient(
        notebook,
        timeout=cell_timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(source.parent)}},
        on_cell_start=lambda cell_index, **_: running.update(index=cell_index),
        on_cell_executed=lambda **_: bar.update(1),
    )
    failure = None
    fresh_runs = tempfile.TemporaryDirectory(prefix="course-runs-")
    variables = {
        QUICK_MODE_VARIABLE: "1" if quick else "0",
        RUNS_VARIABLE: str(runs_folder or fresh_runs.name),
    }
    with fresh_runs, _environment(**variables):
        try:
            client.execute()
        except (CellExecutionError, CellTimeoutError) as error:
            failure = error
        finally:
            bar.close()
            nbformat.write(notebook, target)
    if failure is not None:
        index = running.get("index")
        where = (
            f"cell {index} (id {notebook.cells[index].get('id')!r})"
            if index is not None
            else "a cell"
        )
        what = (
            f"timed out after {cell_timeout} s"
            if isinstance(failure, CellTimeoutError)
            else "failed"
        )
        raise LessonFailed(
            f"{source.name} {what} in {where}; the executed notebook is in {target}.\n{failure}"
        )
    return target
