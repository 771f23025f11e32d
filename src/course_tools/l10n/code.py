"""The words a learner reads inside a code cell, and what "the same code" means.

A code cell is the same in every language; only what it shows to a person is
translated. Those texts are:

- **comments**: a block of whole-line comments (one unit; each line of the translation
  becomes one comment line), or a comment at the end of a line of code (one line);
- **docstrings**: the string that opens a function or class body;
- **display strings**: a string literal (plain or f-string) written directly as
    - a positional argument of ``print(...)`` or of a ``.write(...)`` method (tqdm's
      ``progress_bar.write``);
    - the description of ``course.progress`` and ``course.progress_observer`` (their
      second positional argument, or ``description=``);
    - a keyword argument named ``title``, ``xlabel``, ``ylabel``, ``label`` or
      ``caption``, in any call.

A comment or string with no word of two letters (``"s:"``, ``"| a:"``) has nothing to
translate and is left as it is. Comments that tools read (nbgrader's ``### BEGIN
SOLUTION``, ``# noqa``, ``# type:``) are never translated, nor are IPython lines
(``%pip``, ``!ls``, ``%%requires``).

**Identical code** is then defined as: the two cells have the same token stream once
comments are removed and every docstring and display string is replaced by one
placeholder token. So a translation may change what is inside those literals and
nothing else: not a name, a call, a number or a string the program uses.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

#: Kinds of translatable text in code, with the note a translator sees for each.
KINDS = {
    "comment": "A comment in a code cell. Each line of your translation becomes one comment line.",
    "inline comment": "A comment at the end of a line of code: keep it on one line.",
    "docstring": "A docstring in a code cell.",
    "string": "Text the code prints or draws (a Python string): keep every {...} "
    "field and every backslash escape (\\n) exactly as it is.",
}

_ALL = None  # every positional argument
# Calls whose arguments a learner reads: callee name -> (positions, keywords).
_DISPLAY_CALLS: dict[str, tuple[frozenset[int] | None, frozenset[str]]] = {
    "print": (_ALL, frozenset()),
    "write": (_ALL, frozenset()),
    "progress": (frozenset({1}), frozenset({"description"})),
    # Not count=: progress_observer checks its value ("steps" or "episodes").
    "progress_observer": (frozenset({1}), frozenset({"description"})),
}
_DISPLAY_KEYWORDS = frozenset({"title", "xlabel", "ylabel", "label", "caption"})
_TOOL_COMMENTS = re.compile(r"#(#|!|\s*(noqa|type:|fmt:|pragma|pylint:))")
_WORD = re.compile(r"[^\W\d_]{2}")
_FIELD = re.compile(r"\{[^{}]*\}")
_ESCAPE = re.compile(r"\\(?:x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|N\{[^}]*\}|.)", re.S)
_LITERAL = re.compile(r"(?P<prefix>[rRbBuUfF]{0,2})(?P<quote>'''|\"\"\"|'|\")")
PLACEHOLDER = "__translated_text__"


class CodeError(ValueError):
    """A code cell cannot be read or a translation cannot go into it."""


@dataclass(frozen=True)
class Piece:
    """One translatable text in a code cell, and where it sits.

    The region runs from (``start_line``, ``start_col``) to (``end_line``, ``end_col``),
    0-based lines and character columns, end exclusive; for strings it is the body of
    the literal, between its quotes.
    """

    kind: str
    text: str
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    quote: str = ""
    prefix: str = ""
    indent: str = ""


def _python_lines(source: str) -> list[str]:
    """The cell's lines with IPython lines (``%pip``, ``!ls``, ``%%requires``) made ``pass``."""
    lines = []
    for line in source.split("\n"):
        stripped = line.lstrip()
        lines.append(
            line[: len(line) - len(stripped)] + "pass" if stripped.startswith(("%", "!")) else line
        )
    return lines


def _parse(source: str, where: str) -> tuple[list[str], ast.Module]:
    lines = _python_lines(source)
    try:
        return lines, ast.parse("\n".join(lines))
    except SyntaxError as error:
        raise CodeError(
            f"{where}, line {error.lineno}: this code cell is not valid Python "
            f"({error.msg}); fix it in the English notebook."
        ) from error


def _has_words(text: str) -> bool:
    return bool(_WORD.search(_FIELD.sub("", text)))


def _comments(lines: list[str]) -> Iterator[Piece]:
    tokens = tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline)
    comments = [
        (t.start[0] - 1, t.start[1], t.string) for t in tokens if t.type == tokenize.COMMENT
    ]
    block: list[tuple[int, int, str]] = []

    def flush() -> Iterator[Piece]:
        if block:
            first, col, _ = block[0]
            last = block[-1][0]
            text = "\n".join(_comment_text(c) for _, _, c in block)
            if _has_words(text):
                yield Piece("comment", text, first, 0, last, len(lines[last]), indent=" " * col)
            block.clear()

    for row, col, comment in comments:
        if _TOOL_COMMENTS.match(comment):
            yield from flush()
            continue
        whole_line = not lines[row][:col].strip()
        if not whole_line:
            yield from flush()
            if _has_words(_comment_text(comment)):
                yield Piece(
                    "inline comment", _comment_text(comment), row, col, row, len(lines[row])
                )
            continue
        if block and (block[-1][0] != row - 1 or block[-1][1] != col):
            yield from flush()
        block.append((row, col, comment))
    yield from flush()


def _comment_text(comment: str) -> str:
    return comment[1:].strip()


def _char_col(line: str, byte_col: int) -> int:
    return len(line.encode("utf-8")[:byte_col].decode("utf-8"))


def _callee(call: ast.Call) -> str:
    func = call.func
    return (
        func.id
        if isinstance(func, ast.Name)
        else func.attr
        if isinstance(func, ast.Attribute)
        else ""
    )


def _display_nodes(tree: ast.Module) -> Iterator[tuple[str, ast.expr]]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and _is_text(body[0].value):
                yield "docstring", body[0].value
        if not isinstance(node, ast.Call):
            continue
        positions, keywords = _DISPLAY_CALLS.get(_callee(node), (frozenset(), frozenset()))
        for index, argument in enumerate(node.args):
            if (positions is _ALL or index in positions) and _is_text(argument):
                yield "string", argument
        for keyword in node.keywords:
            if (keyword.arg in keywords or keyword.arg in _DISPLAY_KEYWORDS) and _is_text(
                keyword.value
            ):
                yield "string", keyword.value


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def _literals(lines: list[str], node: ast.expr) -> Iterator[tuple[str, str, int, int, int, int]]:
    """Each literal of a (possibly implicitly concatenated) string node:
    (prefix, quote, body start line, body start col, body end line, body end col)."""
    row, col = node.lineno - 1, _char_col(lines[node.lineno - 1], node.col_offset)
    # Python's parser sets the end of every node it makes.
    assert node.end_lineno is not None and node.end_col_offset is not None
    end_row = node.end_lineno - 1
    end_col = _char_col(lines[end_row], node.end_col_offset)
    while (row, col) < (end_row, end_col):
        line = lines[row]
        if col >= len(line) or line[col] == "#" or line[col:].strip() == "\\":
            row, col = row + 1, 0
            continue
        if line[col].isspace():
            col += 1
            continue
        match = _LITERAL.match(line, col)
        if match is None:
            raise CodeError(f"unexpected text {line[col : col + 20]!r} in a string literal")
        prefix, quote = match.group("prefix"), match.group("quote")
        body_row, body_col = row, match.end()
        row, col = _literal_end(lines, body_row, body_col, quote)
        yield prefix, quote, body_row, body_col, row, col
        col += len(quote)


def _literal_end(lines: list[str], row: int, col: int, quote: str) -> tuple[int, int]:
    """Where the closing quote of a literal whose body starts at (row, col) is."""
    while row < len(lines):
        line = lines[row]
        while col < len(line):
            if line[col] == "\\":
                col += 2
            elif line.startswith(quote, col):
                return row, col
            else:
                col += 1
        row, col = row + 1, 0
    raise CodeError("a string literal has no closing quote")


def _region(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    (r0, c0), (r1, c1) = start, end
    if r0 == r1:
        return lines[r0][c0:c1]
    return "\n".join([lines[r0][c0:], *lines[r0 + 1 : r1], lines[r1][:c1]])


def pieces(source: str, where: str = "code cell") -> list[Piece]:
    """The translatable texts of a code cell, in the order they appear."""
    lines, tree = _parse(source, where)
    found = list(_comments(lines))
    for kind, node in _display_nodes(tree):
        for prefix, quote, r0, c0, r1, c1 in _literals(lines, node):
            text = _region(lines, (r0, c0), (r1, c1))
            if _has_words(text):
                found.append(Piece(kind, text, r0, c0, r1, c1, quote=quote, prefix=prefix))
    return sorted(found, key=lambda p: (p.start_line, p.start_col))


def fields(text: str) -> Counter:
    """The ``{...}`` fields and backslash escapes a string translation must keep."""
    return Counter(_FIELD.findall(text)) + Counter(_ESCAPE.findall(text))


def translation_problem(piece: Piece, translation: str) -> str | None:
    """Why ``translation`` cannot replace ``piece`` in the code, or None if it can."""
    if piece.kind == "inline comment" and "\n" in translation:
        return "a comment at the end of a line of code must stay on one line"
    if piece.kind in ("string", "docstring"):
        if "\n" in translation and len(piece.quote) == 1:
            return "this string is on one line: write \\n for a line break, not a new line"
        missing, extra = (
            fields(piece.text) - fields(translation),
            fields(translation) - fields(piece.text),
        )
        if piece.kind == "docstring":  # never formatted: braces are words there
            missing = Counter(t for t in missing.elements() if t.startswith("\\"))
            extra = Counter(t for t in extra.elements() if t.startswith("\\"))
        if missing or extra:
            return "; ".join(
                [f"lost {text!r}" for text in sorted(missing)]
                + [f"added {text!r}" for text in sorted(extra)]
            )
        literal = piece.prefix + piece.quote + translation + piece.quote
        try:
            node = ast.parse(literal, mode="eval").body
        except SyntaxError:
            node = None
        if not _is_text(node) if node is not None else True:
            return (
                f"the translation does not make a valid Python string between {piece.quote} "
                f"quotes; write \\{piece.quote[0]} for a quote inside it"
            )
    return None


def translate(source: str, lookup: Callable[[Piece], str | None], where: str = "code cell") -> str:
    """The cell with each piece that ``lookup`` translates replaced; the rest as it was."""
    lines = source.split("\n")
    for piece in reversed(pieces(source, where)):
        translation = lookup(piece)
        if translation is None:
            continue
        problem = translation_problem(piece, translation)
        if problem:
            raise CodeError(
                f"{where}: the translation of {piece.text[:50]!r} cannot go into the "
                f"code: {problem}."
            )
        if piece.kind == "comment":
            text = "\n".join(
                piece.indent + ("# " + line if line else "#") for line in translation.split("\n")
            )
        elif piece.kind == "inline comment":
            text = "# " + translation
        else:
            text = translation
        head = lines[piece.start_line][: piece.start_col]
        tail = lines[piece.end_line][piece.end_col :]
        lines[piece.start_line : piece.end_line + 1] = (head + text + tail).split("\n")
    return "\n".join(lines)


def skeleton(source: str, where: str = "code cell") -> list[tuple[int, str]]:
    """The tokens that must be equal in every language: comments dropped, texts set aside.

    IPython lines are compared as exact text.
    """
    lines = source.split("\n")
    for piece in reversed([p for p in pieces(source, where) if p.kind in ("string", "docstring")]):
        head = lines[piece.start_line][: piece.start_col]
        tail = lines[piece.end_line][piece.end_col :]
        lines[piece.start_line : piece.end_line + 1] = [head + PLACEHOLDER + tail]
    lines = [repr(line.strip()) if line.lstrip().startswith(("%", "!")) else line for line in lines]
    skipped = {
        tokenize.COMMENT,
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENCODING,
        tokenize.ENDMARKER,
    }
    tokens = tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline)
    return [(t.type, t.string) for t in tokens if t.type not in skipped]
