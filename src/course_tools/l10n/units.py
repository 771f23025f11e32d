"""Translatable units: the paragraphs of a lesson's markdown cells, and the comments,
docstrings and displayed strings of its code cells.

A markdown cell is cut at blank lines, so that editing one paragraph makes only that
paragraph's translation stale. A fenced block whose info string names a language
(```python, ```bash, ...) is code: it is copied into every language as it is. A fenced
block without one, or marked ```text, is a diagram or a layout of words: it is one unit,
translated whole, and its fence lines must stay as they are. What counts as translatable
in a code cell is defined in :mod:`course_tools.l10n.code`.
"""

from __future__ import annotations

from dataclasses import dataclass

from course_tools import notebook_json
from course_tools.l10n import code
from course_tools.lessons import BADGES_CELL

_FENCES = ("```", "~~~")
#: Info strings of fenced blocks that hold words to translate, not code.
_TEXT_FENCES = ("", "text", "txt", "plain")


@dataclass(frozen=True)
class Block:
    """One piece of a markdown cell: a paragraph to translate, or a fenced code block."""

    text: str
    translatable: bool


def split_markdown(text: str) -> list[Block]:
    """Cut markdown into blocks at blank lines, keeping fenced code blocks whole."""
    blocks: list[Block] = []
    current: list[str] = []
    fence: str | None = None
    words = False

    def flush(translatable: bool = True) -> None:
        if current:
            blocks.append(Block("\n".join(current), translatable))
            current.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if fence is not None:
            current.append(line)
            if stripped.startswith(fence):
                fence = None
                flush(translatable=words)
        elif stripped.startswith(_FENCES):
            flush()
            fence = stripped[:3]
            words = stripped[3:].strip().lower() in _TEXT_FENCES
            current.append(line)
        elif not stripped:
            flush()
        else:
            current.append(line)
    flush(translatable=fence is None)
    return blocks


def join_blocks(texts: list[str]) -> str:
    """The inverse of :func:`split_markdown`: blocks separated by one blank line."""
    return "\n\n".join(texts)


@dataclass(frozen=True)
class Unit:
    """A text to translate, with the id of the cell it belongs to and its kind.

    ``kind`` is "prose" for a markdown paragraph, or one of :data:`code.KINDS`.
    """

    cell_id: str
    text: str
    kind: str = "prose"


def lesson_units(notebook: notebook_json.Node) -> list[Unit]:
    """Every translatable paragraph of a lesson, in order, without repeats within a cell."""
    units: list[Unit] = []
    for cell in notebook.cells:
        seen: set[str] = set()
        if cell.cell_type == "code":
            for piece in code.pieces(cell.source, f"cell {cell.id!r}"):
                if piece.text not in seen:
                    seen.add(piece.text)
                    units.append(Unit(cell.id, piece.text, piece.kind))
        # The badges cell is made per language by `course links` and the build.
        if cell.cell_type != "markdown" or cell.id == BADGES_CELL:
            continue
        for block in split_markdown(cell.source):
            if block.translatable and block.text not in seen:
                seen.add(block.text)
                units.append(Unit(cell.id, block.text))
    return units


def code_pieces(notebook: notebook_json.Node) -> dict[tuple[str, str], code.Piece]:
    """The first piece with each (cell id, text) in the lesson's code cells."""
    found: dict[tuple[str, str], code.Piece] = {}
    for cell in notebook.cells:
        if cell.cell_type == "code":
            for piece in code.pieces(cell.source, f"cell {cell.id!r}"):
                found.setdefault((cell.id, piece.text), piece)
    return found
