"""Write a catalog exactly as GNU gettext's ``msgcat`` does, so a PO editor's save is quiet.

Poedit, ``msgcat`` and ``msgmerge`` wrap strings at 79 columns, breaking lines where
Unicode allows it (UAX #14, through libunistring). If the course wrote catalogs any
other way, a translator's save in a PO editor would rewrite hundreds of lines, and the
next ``course l10n update`` would rewrite them back. polib wraps differently, so the
layout is reproduced here: entries in msgcat's order of comments and keywords, a string
that holds a newline or does not fit starts with ``""``, each line ends after ``\\n``,
and a long line breaks at the last break opportunity that keeps it within 79 columns
(the space stays at the end of the line). Break opportunities come from uniseg, with
the places where libunistring (gettext 0.21) keeps older rules: a break is allowed
after ``.`` or ``:`` before a letter (``agent.`` | ``train``), and not between a
quotation mark, spaces and an opening bracket (``'reward' (``), nor between a closing
bracket and ``$``, ``\\`` or ``%``. ``tests/test_l10n_po_format.py`` checks the
result against msgcat on every catalog of the course.

Obsolete entries without a translation are dropped, as msgcat drops them.
"""

from __future__ import annotations

import unicodedata
from functools import cache

import polib

PAGE_WIDTH = 79
_ESCAPES = {
    "\n": "\\n",
    "\t": "\\t",
    "\r": "\\r",
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}
# UAX #14's LB25 before Unicode 15.1: no break inside these pairs of classes.
_NO_BREAK = {
    ("CL", "PO"),
    ("CP", "PO"),
    ("CL", "PR"),
    ("CP", "PR"),
    ("NU", "PO"),
    ("NU", "PR"),
    ("PO", "OP"),
    ("PO", "NU"),
    ("PR", "OP"),
    ("PR", "NU"),
    ("HY", "NU"),
    ("IS", "NU"),
    ("NU", "NU"),
    ("SY", "NU"),
}


@cache
def _class(char: str) -> str:
    from uniseg.linebreak import line_break

    return str(line_break(char)).rsplit(".", 1)[-1]


@cache
def _pair(before: str, here: str, spaced: bool) -> bool:
    """Whether UAX #14 allows a break before ``here``, after ``before`` (and a space).

    Asking uniseg about two or three characters at a time is the pair table of UAX #14's
    section 7, which libunistring also implements; uniseg's own pass over a whole
    paragraph would take seconds per catalog.
    """
    try:
        from uniseg.linebreak import line_break_breakables
    except ImportError as error:  # the learner's runtime does not need it; the tooling does
        raise ImportError(
            "course l10n needs uniseg to write catalogs as gettext does: pip install uniseg"
        ) from error
    # A letter in front, so that no rule about the start of a word applies (libunistring
    # has none, such as Unicode 15.1's LB20a, which keeps "first-|in" together).
    allowed = bool(list(line_break_breakables("x" + before + (" " if spaced else "") + here))[-1])
    classes = (_class(before), _class(here))
    if classes[0] == "IS" and classes[1] in ("AL", "HL"):
        allowed = True
    if not spaced and classes in _NO_BREAK:
        allowed = False
    if spaced and classes == ("QU", "OP"):  # LB15 of older Unicode: QU SP* × OP
        allowed = False
    return allowed


def _break_before(text: str) -> list[bool]:
    """For each character, whether a line may break just before it."""
    allowed = [False] * len(text)
    last = ""  # the last character that is not a space
    for index, char in enumerate(text):
        if _class(char) == "SP":
            continue  # never break before a space
        if last:
            allowed[index] = _pair(last, char, text[index - 1] != last)
        last = char
    return allowed


def _width(char: str) -> int:
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _lines(chars: list[str], breaks: list[bool], width: int, column: int) -> list[str]:
    """Greedy line filling, as libunistring's ulc_width_linebreaks does it."""
    cut = [False] * len(chars)
    piece, last = 0, None
    for index, char in enumerate(chars):
        if breaks[index]:
            if last is not None and column + piece > width:
                cut[last], column = True, 0
            last, column, piece = index, column + piece, 0
        piece += _width(char) if len(char) == 1 else len(char)
    if last is not None and column + piece > width:
        cut[last] = True
    lines, current = [], ""
    for index, char in enumerate(chars):
        if cut[index]:
            lines.append(current)
            current = ""
        current += char
    return [*lines, current]


def _string(keyword: str, value: str, prefix: str = "") -> list[str]:
    """The lines of ``keyword "value"``, wrapped as msgcat wraps them."""
    portions, start = [], 0
    while (end := value.find("\n", start)) >= 0:
        portions.append(value[start : end + 1])
        start = end + 1
    if start < len(value) or not portions:
        portions.append(value[start:])
    after_break = len(prefix) + 1
    width = PAGE_WIDTH - 1 - after_break
    out: list[str] = []
    first = True
    for number, portion in enumerate(portions):
        # gettext looks for break opportunities in the escaped text, where an escape's
        # backslash is a prefix (UAX #14 class PR): "end…" + '\\"' may break, "end)" + '\\"'
        # may not. Never inside an escape.
        chars: list[str] = []
        inside: list[bool] = []
        for char in portion:
            escaped = _ESCAPES.get(char)
            chars += list(escaped) if escaped else [char]
            inside += [False, True] if escaped else [False]
        breaks = [
            allowed and not within for allowed, within in zip(_break_before("".join(chars)), inside)
        ]
        if portion.endswith("\n") and len(breaks) >= 2:
            breaks[-2] = False  # never break just before the final \n
        more = number < len(portions) - 1
        while True:
            column = (len(prefix) + len(keyword) + 1 if first else len(prefix)) + 1 - after_break
            lines = _lines(chars, breaks, width, column)
            if first and chars and (more or column > width or len(lines) > 1):
                out.append(f'{prefix}{keyword} ""')
                first = False
                continue
            break
        for line in lines:
            out.append(f'{prefix}{keyword} "{line}"' if first else f'{prefix}"{line}"')
            first = False
    return out


def _entry(entry: polib.POEntry, obsolete: bool = False) -> list[str]:
    lines = []
    for comment, mark in ((entry.tcomment, "#"), (entry.comment, "#.")):
        for line in comment.split("\n") if comment else []:
            lines.append(f"{mark} {line}" if line else mark)
    for path, line in entry.occurrences:
        lines.append(f"#: {path}:{line}" if line else f"#: {path}")
    if entry.flags:
        lines.append("#, " + ", ".join(entry.flags))
    prefix, previous = ("#~ ", "#~| ") if obsolete else ("", "#| ")
    if entry.previous_msgctxt is not None:
        lines += _string("msgctxt", entry.previous_msgctxt, previous)
    if entry.previous_msgid is not None:
        lines += _string("msgid", entry.previous_msgid, previous)
    if entry.msgctxt is not None:
        lines += _string("msgctxt", entry.msgctxt, prefix)
    if entry.msgid_plural or entry.msgstr_plural:
        raise ValueError(f"plural entries are not used by the course: {entry.msgid[:40]!r}")
    lines += _string("msgid", entry.msgid, prefix)
    lines += _string("msgstr", entry.msgstr, prefix)
    return lines


def format_catalog(catalog: polib.POFile) -> str:
    """The text msgcat would write for ``catalog``."""
    header = polib.POEntry(
        msgid="", msgstr="".join(f"{key}: {value}\n" for key, value in catalog.ordered_metadata())
    )
    header.tcomment = catalog.header or ""
    if catalog.metadata_is_fuzzy:
        header.flags = ["fuzzy"]
    blocks = [_entry(header)]
    blocks += [_entry(e) for e in catalog if not e.obsolete]
    blocks += [_entry(e, obsolete=True) for e in catalog if e.obsolete and e.msgstr]
    return "\n\n".join("\n".join(block) for block in blocks) + "\n"
