"""The jobs' source, as lesson 4 shows it: the code unchanged, its words in the lesson's
language.

A job's comments and docstrings are English in the module. The lesson shows the module
with each comment block, inline comment and docstring paragraph replaced by its
translation from the helpers' catalog, rewrapped to the width of the original; every code
token stays as it runs. (No tool does this: Sphinx and gettext translate documents, not
the comments of a listing.)
"""

from __future__ import annotations

import ast
import inspect
import io
import textwrap
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from course_helpers.i18n import gettext

#: The width the listing is wrapped to (the modules' prose is wrapped near it).
WIDTH = 92


@dataclass(frozen=True)
class Piece:
    """One translatable text of a listing: lines ``first`` to ``last`` (0-based)."""

    first: int
    last: int
    kind: str  # "comment" (a block of whole-line comments), "inline" or "docstring"
    text: str  # the English text, lines joined by spaces (paragraphs by blank lines)
    column: int  # where the comment's # (or the docstring's indentation) starts


def pieces(source: str) -> list[Piece]:
    """The comments and docstrings of ``source``, in order."""
    lines = source.splitlines()
    found: list[Piece] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        row, column = token.start[0] - 1, token.start[1]
        text = token.string.lstrip("#").strip()
        inline = bool(lines[row][:column].strip())
        if inline:
            found.append(Piece(row, row, "inline", text, column))
            continue
        previous = found[-1] if found else None
        if (
            previous
            and previous.kind == "comment"
            and previous.last == row - 1
            and previous.column == column
        ):
            found[-1] = Piece(previous.first, row, "comment", f"{previous.text} {text}", column)
        else:
            found.append(Piece(row, row, "comment", text, column))
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                found.append(
                    Piece(
                        first.lineno - 1,
                        (first.end_lineno or first.lineno) - 1,
                        "docstring",
                        inspect.cleandoc(first.value.value),
                        first.col_offset,
                    )
                )
    return sorted(found, key=lambda piece: piece.first)


def paragraphs(piece: Piece) -> list[str]:
    """The texts a piece is translated by: a docstring's paragraphs (each joined into one
    line), or the comment's one text."""
    if piece.kind != "docstring":
        return [piece.text]
    return [" ".join(block.split()) for block in piece.text.split("\n\n") if block.strip()]


def texts(module: ModuleType) -> list[str]:
    """Every text of ``module``'s listing that the helpers' catalog translates."""
    return [text for piece in pieces(inspect.getsource(module)) for text in paragraphs(piece)]


def localized(module: ModuleType, translate: Callable[[str], str] = gettext) -> str:
    """``module``'s source with its comments and docstrings translated."""
    source = inspect.getsource(module)
    lines = source.splitlines()
    for piece in reversed(pieces(source)):
        indent = " " * piece.column
        if piece.kind == "inline":
            line = lines[piece.first]
            lines[piece.first] = f"{line[: piece.column]}# {translate(piece.text)}"
            continue
        if piece.kind == "comment":
            wrapped = textwrap.wrap(
                translate(piece.text), WIDTH - piece.column - 2, break_on_hyphens=False
            )
            lines[piece.first : piece.last + 1] = [f"{indent}# {line}" for line in wrapped]
            continue
        body: list[str] = []
        for number, paragraph in enumerate(paragraphs(piece)):
            if number:
                body.append("")
            width = WIDTH - piece.column - (3 if number == 0 else 0)
            body += textwrap.wrap(translate(paragraph), width, break_on_hyphens=False)
        if len(body) == 1:
            block = [f'{indent}"""{body[0]}"""']
        else:
            block = [
                f'{indent}"""{body[0]}',
                *(f"{indent}{line}" if line else "" for line in body[1:]),
                f'{indent}"""',
            ]
        lines[piece.first : piece.last + 1] = block
    return "\n".join(lines) + "\n"
