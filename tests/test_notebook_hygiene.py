"""The English lessons, as committed: stripped, with stable ids, and shaped like a lesson.

Translations are keyed by cell id and diffs must stay readable, so a lesson saved with
outputs or with renumbered ids would break later work silently; these tests make it loud.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

LESSONS = sorted(
    (Path(__file__).resolve().parents[1] / "notebooks" / "en").glob("[0-9][0-9]_*.ipynb")
)
EXPECTED = ["01_replay_buffers", "02_dqn_cartpole", "03_sac_minitaur", "04_distributed_sac"]


def test_the_four_lessons_exist_in_order():
    assert [p.stem for p in LESSONS] == EXPECTED


@pytest.fixture(params=LESSONS, ids=lambda p: p.stem)
def lesson(request) -> tuple[Path, nbformat.NotebookNode]:
    return request.param, nbformat.read(request.param, as_version=4)


def test_lesson_is_valid_nbformat_4_5(lesson):
    path, nb = lesson
    nbformat.validate(nb)
    assert (nb.nbformat, nb.nbformat_minor) == (4, 5), f"{path.name}: save it as nbformat 4.5"


def test_lesson_is_committed_without_outputs(lesson):
    path, nb = lesson
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, (
                f"{path.name}, cell {index} (id {cell.id!r}) keeps outputs: strip them with "
                f"'nbstripout --keep-id {path}'"
            )


def test_cell_ids_are_unique_readable_slugs(lesson):
    path, nb = lesson
    ids = [cell.id for cell in nb.cells]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert not duplicates, f"{path.name}: duplicate cell ids {duplicates}"
    bad = [i for i in ids if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", i)]
    assert not bad, f"{path.name}: cell ids should be short slugs like 'train-loop', got {bad}"


def test_first_code_cell_sets_up_the_runtime_before_anything_else(lesson):
    path, nb = lesson
    first = next(cell for cell in nb.cells if cell.cell_type == "code")
    assert first.id == "setup"
    # Nothing runs before the helpers are imported, except installing them on Colab.
    code = [line.strip() for line in first.source.splitlines() if line.strip()]
    assert code[1] == "import course_helpers as course", path.name
    assert code[-1].startswith('print(course.setup(language="en"'), (
        f"{path.name}: the set-up cell passes the lesson's language; translations change only that"
    )


def test_hyperparameters_live_in_one_visible_cell_with_their_quick_values(lesson):
    path, nb = lesson
    cells = [cell for cell in nb.cells if "course.hyperparameters(" in cell.source]
    assert len(cells) == 1, f"{path.name}: expected one hyperparameter cell, found {len(cells)}"
    assert "quick=dict(" in cells[0].source, (
        f"{path.name}: the cell must show what quick mode changes"
    )


def test_lesson_opens_with_badges_then_a_title_and_ends_with_summary_exercises_and_sources(lesson):
    path, nb = lesson
    assert nb.cells[0].id == "badges"  # tests/test_links.py checks where they lead
    assert nb.cells[1].cell_type == "markdown" and nb.cells[1].source.startswith("# ")
    headings = [
        cell.source.splitlines()[0]
        for cell in nb.cells
        if cell.cell_type == "markdown" and cell.source.startswith("## ")
    ]
    assert "## Summary" in headings and headings[-2:] == ["## Exercises", "## References"], (
        path.name
    )
    assert nb.cells[-1].id == "references", path.name


def test_every_code_cell_is_introduced_by_prose(lesson):
    """One idea per cell, prose before the code it explains: no two code cells in a row
    without a sentence between them, except a cell that directly continues the one above."""
    path, nb = lesson
    previous = None
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and previous == "code":
            assert nb.cells[index - 1].source.count("\n") < 40, (
                f"{path.name}: cell {index} ({cell.id}) follows a long code cell without prose"
            )
        previous = cell.cell_type


def test_lesson_starts_reverb_servers_on_a_free_port(lesson):
    """A fixed port would make the second "Run All" in the same kernel fail."""
    path, nb = lesson
    for cell in nb.cells:
        if "reverb.Server(" in cell.source:
            assert "port=None" in cell.source, f"{path.name}, cell {cell.id}: use port=None"


def test_every_link_within_a_lesson_leads_to_an_anchor_of_that_lesson(lesson):
    # Links to a heading's own anchor break once the heading is translated, so a lesson
    # links to <a id="..."></a> anchors, which stay the same in every language.
    path, nb = lesson
    text = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', text))
    targets = set(re.findall(r"\]\(#([^)]+)\)", text))
    assert targets <= anchors, (
        f"{path.name}: links to #{', #'.join(sorted(targets - anchors))} find no "
        f'<a id="..."></a> in the lesson; add one before the heading they point to'
    )
