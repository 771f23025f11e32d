"""Reject what ``msgfmt --check`` rejects, before polib reads a catalog.

polib is lenient: it reads a string with a missing closing quote by dropping a
character, and lets a second entry with the same context and English silently replace
the first. Writing either back would damage a translator's work, so every command
that reads a catalog validates it here first. GNU msgfmt is the reference, but it is
not a Python package (translators on Windows or macOS rarely have it), so the PO
grammar is checked here; ``tests/test_l10n_po_syntax.py`` runs msgfmt on the same
broken files, where it is installed, to show that both refuse them.

Checked: the line grammar (keywords, quoted strings and their escapes, comments,
obsolete ``#~`` entries), the order msgctxt, msgid, msgid_plural, msgstr, that each
entry has a msgstr, duplicate (msgctxt, msgid) pairs, and, as ``--check`` does, that a
msgid and its msgstr agree on beginning and ending with a newline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_KEYWORD = re.compile(r"(msgctxt|msgid_plural|msgid|msgstr(?:\[\d+\])?)\s+(.*)$")
_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    '"': '"',
    "'": "'",
    "?": "?",
}


class PoSyntaxError(ValueError):
    """A catalog gettext tools would refuse; ``line`` is 1-based."""

    def __init__(self, line: int, message: str):
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass
class _Entry:
    line: int
    obsolete: bool
    parts: dict[str, list[str]] = field(default_factory=dict)
    last: str | None = None


def _unquote(text: str, line: int) -> str:
    body = text.strip()[1:-1]
    return re.sub(
        r"\\([0-7]{1,3}|x[0-9A-Fa-f]+|.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body
    )


def _string(text: str, line: int, after: str) -> str:
    text = text.strip()
    if not text.startswith('"'):
        raise PoSyntaxError(line, f"{after} must be followed by a string in double quotes.")
    index = 1
    while index < len(text):
        char = text[index]
        if char == "\\":
            escape = re.match(r'[ntrabfv\\"\'?]|[0-7]{1,3}|x[0-9A-Fa-f]+', text[index + 1 :])
            if escape is None:
                raise PoSyntaxError(
                    line,
                    f"invalid escape {text[index : index + 2]!r} in this "
                    "string; write \\\\ for a backslash.",
                )
            index += 1 + len(escape.group(0))
        elif char == '"':
            if text[index + 1 :].strip():
                raise PoSyntaxError(
                    line,
                    "text after this string's closing quote; a \" inside "
                    'a string must be written \\".',
                )
            return _unquote(text, line)
        else:
            index += 1
    raise PoSyntaxError(line, "this string has no closing double quote.")


def validate(text: str) -> None:
    """Raise :class:`PoSyntaxError` at the first problem msgfmt --check would report."""
    entries: list[_Entry] = []
    current: _Entry | None = None
    order = {"msgctxt": 0, "msgid": 1, "msgid_plural": 2, "msgstr": 3}

    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        stripped = line.strip()
        obsolete = False
        if stripped.startswith("#~"):
            obsolete, stripped = True, stripped[2:].strip()
            if stripped.startswith("|"):  # the previous msgid of an obsolete entry
                continue
        elif not stripped or stripped.startswith("#"):
            if stripped.startswith("#") and current is not None and current.last is not None:
                if "msgstr" not in current.parts:
                    raise PoSyntaxError(
                        number,
                        f"the entry that starts at line {current.line} "
                        "has no msgstr before this comment.",
                    )
                current = None  # a comment after an entry's strings starts the next entry
            continue
        if not stripped:
            continue
        keyword = _KEYWORD.match(stripped)
        if keyword:
            name, rest = keyword.groups()
            kind = "msgstr" if name.startswith("msgstr") else name
            value = _string(rest, number, name)
            starts_new = (
                current is None
                or current.last is None
                or (current.last == "msgstr" and kind != "msgstr")
                or order[kind] < order[current.last]
            )
            if starts_new:
                if current is not None and "msgstr" not in current.parts:
                    raise PoSyntaxError(
                        number, f"the entry that starts at line {current.line} has no msgstr."
                    )
                current = _Entry(number, obsolete)
                entries.append(current)
            assert current is not None  # starts_new holds whenever there was none
            if kind != "msgstr" and kind in current.parts:
                raise PoSyntaxError(
                    number,
                    f"a second {name} in the entry that starts at line "
                    f"{current.line}; add a blank line and the missing msgstr.",
                )
            if kind == "msgid" and current.last not in (None, "msgctxt"):
                raise PoSyntaxError(number, "msgid must come first in an entry (after msgctxt).")
            current.parts.setdefault(kind, []).append(value)
            current.last = kind
            continue
        if stripped.startswith('"'):
            if current is None or current.last is None:
                raise PoSyntaxError(
                    number,
                    "a string continues nothing: it must follow a msgctxt, msgid or msgstr line.",
                )
            current.parts[current.last][-1] += _string(stripped, number, "a continuation line")
            continue
        raise PoSyntaxError(
            number,
            f"this line is not gettext: {stripped[:40]!r}. Lines are "
            "comments (#), keywords (msgid, msgstr, ...) or strings "
            "in double quotes.",
        )
    if current is not None and "msgstr" not in current.parts:
        raise PoSyntaxError(current.line, "this entry has no msgstr.")

    seen: dict[tuple[str | None, str], int] = {}
    for entry in entries:
        if "msgid" not in entry.parts:
            raise PoSyntaxError(entry.line, "this entry has no msgid.")
        msgid = entry.parts["msgid"][0]
        context = entry.parts.get("msgctxt", [None])[0]
        key = (context, msgid)  # msgfmt refuses a duplicate even if one of them is obsolete
        if key in seen:
            raise PoSyntaxError(
                entry.line,
                f"duplicate message definition: the entry at line "
                f"{seen[key]} has the same msgctxt and msgid. Keep "
                "one of them.",
            )
        seen[key] = entry.line
        if msgid == "" and context is None:
            continue  # the header
        for msgstr in entry.parts["msgstr"]:
            if not msgstr:
                continue
            for where, test in (("begin", str.startswith), ("end", str.endswith)):
                if test(msgid, "\n") != test(msgstr, "\n"):
                    raise PoSyntaxError(
                        entry.line, f"msgid and msgstr do not both {where} with a newline (\\n)."
                    )
