"""Each language's typography, as its publishers set it, checked on every translation.

Only the words are checked: code spans, math, link targets, HTML tags, ``{...}`` fields,
backslash escapes and shell escapes (``!{command}``) are set aside first, since they are
code and stay as in English. So is any stretch of 20 characters or more copied unchanged
from the English (a paper's title in a reference, an error message the learner will
see): it keeps the English typography it was written in. Straight quotes may therefore
enclose text copied from English (``"Received incompatible tensor"``, ``"up"``), and
nothing else.

- **fr**: a narrow no-break space (U+202F) before ``;``, ``!`` and ``?`` and between a
  number's thousands (300 000); a no-break space (U+00A0) before ``:`` and inside
  « guillemets »; « » for quotations, not "…".
- **es**: no space before ``;``, ``:``, ``!``, ``?``; a question or exclamation opens
  with ``¿`` or ``¡``; «comillas angulares» (no space inside) for quotations, not "…"; a
  no-break space (U+00A0) between a number's thousands (20 000).
- **pt-br**: no space before ``;``, ``:``, ``!``, ``?``; “aspas curvas” for quotations,
  not "…".

The rules are written out in each language's ``locales/<lang>/GLOSSARY.md``.
"""

from __future__ import annotations

import re

NBSP = "\u00a0"
NNBSP = "\u202f"

_SET_ASIDE = re.compile(
    r"(`+).+?\1"  # code spans
    r"|\$\$.+?\$\$|\$[^$\n]+\$"  # math
    r"|\]\([^)\s]+\)"  # link targets
    r"|</?[A-Za-z][^<>]*>"  # HTML tags
    r"|https?://\S+"  # bare addresses
    r"|\{[^{}]*\}"  # placeholders and f-string fields
    r"|\\."  # backslash escapes
    r"|!\{[^{}]*\}|!\w\S*",  # shell escapes
    re.S,
)
_COPIED = 20  # characters: a stretch this long, equal to the English, is a quotation
_GAP = "\x00"
_EDGES = ";:!?«» \u00a0\u202f\n"  # marks and spaces whose typography is the translation's


def words_only(text: str, english: str = "") -> str:
    """``text`` with its code, math, links, tags, fields and escapes blanked out, and
    what it copies from ``english`` (quoted words, long stretches)."""
    words = _SET_ASIDE.sub(lambda m: _GAP * len(m.group(0)), text)
    if not english:
        return words
    chars = list(words)
    for quoted in set(re.findall(r'"[^"\n]+"', english)):
        for match in re.finditer(re.escape(quoted), text):
            chars[match.start() : match.end()] = _GAP * len(quoted)
    # Every window of _COPIED characters that the English also has (a hash lookup each:
    # difflib's longest-match search made `course l10n check` take seconds).
    windows = {english[i : i + _COPIED] for i in range(len(english) - _COPIED + 1)}
    for start in range(len(text) - _COPIED + 1):
        window = text[start : start + _COPIED]
        if window not in windows or " " not in window.strip():
            continue
        # A quotation is words: a stretch that is mostly code, already set aside, is not
        # one ("; `target_update_tau`" equals the English but holds a French ';').
        if sum(char.isalpha() for char in words[start : start + _COPIED]) < _COPIED // 2:
            continue
        # Its edges belong to the sentence around it: a mark or space there is French.
        first, last = start, start + _COPIED
        while first < last and text[first] in _EDGES:
            first += 1
        while last > first and text[last - 1] in _EDGES:
            last -= 1
        chars[first:last] = _GAP * (last - first)
    return "".join(chars)


def _near(text: str, index: int) -> str:
    start = max(0, text.rfind(" ", 0, max(0, index - 12)) + 1)
    return text[start : index + 12].replace(_GAP, "").replace("\n", " ").strip()


_FRENCH = [
    (
        re.compile(r"[ \u00a0](?=[;!?])"),
        "a narrow no-break space (U+202F), not {found}, before {mark!r}",
    ),
    (
        re.compile(r"(?<=[^\s\u00a0\u202f\x00(\[*_`])(?=[;!?](\s|$|\*|_|\)|»))"),
        "a narrow no-break space (U+202F) before {mark!r}",
    ),
    (re.compile(r"[ \u202f](?=:(\s|$))"), "a no-break space (U+00A0), not {found}, before ':'"),
    (
        re.compile(r"(?<=[^\s\u00a0\u202f\x00(\[])(?=:(\s|$))"),
        "a no-break space (U+00A0) before ':'",
    ),
    (re.compile(r"«(?!\u00a0)"), "a no-break space (U+00A0) after '«'"),
    (re.compile(r"(?<!\u00a0)»"), "a no-break space (U+00A0) before '»'"),
    (re.compile(r'"'), "« guillemets » instead of straight quotes"),
    (
        re.compile(r"(?<=\d)[ \u00a0](?=\d{3}(?!\d))"),
        "a narrow no-break space (U+202F), not {found}, between a number's thousands",
    ),
]
_SPANISH_PORTUGUESE = [
    (re.compile(r"[ \u00a0\u202f](?=[;:!?](\s|$))"), "no space before {mark!r}"),
]
_SPANISH = [
    (re.compile(r'"'), "«comillas angulares» instead of straight quotes"),
    (re.compile(r"«[ \u00a0\u202f]|[ \u00a0\u202f]»"), "no space inside « »"),
    (
        re.compile(r"(?<=\d)[ \u202f](?=\d{3}(?!\d))"),
        "a no-break space (U+00A0), not {found}, between a number's thousands",
    ),
]
_PORTUGUESE = [
    (re.compile(r'"'), "“aspas curvas” instead of straight quotes"),
]
_RULES = {
    "fr": _FRENCH,
    "es": _SPANISH_PORTUGUESE + _SPANISH,
    "pt-br": _SPANISH_PORTUGUESE + _PORTUGUESE,
}
_NAMES = {" ": "a plain space", NBSP: "a no-break space (U+00A0)", NNBSP: "a narrow no-break space"}


def problems(text: str, language: str, english: str = "", quotes: bool = True) -> list[str]:
    """The typography mistakes in a translation of ``english``, each a phrase with its place.

    ``quotes=False`` skips the straight-quote rule (a code comment may quote code).
    """
    words = words_only(text, english)
    found = []
    for pattern, message in _RULES.get(language, []):
        if not quotes and '"' in pattern.pattern:
            continue
        matches = list(pattern.finditer(words))
        if matches:
            first, end = matches[0], matches[0].end()
            mark = words[end] if end < len(words) else ""
            more = f", and {len(matches) - 1} more like it" if len(matches) > 1 else ""
            found.append(
                f"write {message.format(found=_NAMES.get(first.group(0), 'nothing'), mark=mark)}"
                f" (in {_near(words, first.start())!r}{more})"
            )
    if language == "es":
        found += _spanish_openings(words)
    return found


def _spanish_openings(words: str) -> list[str]:
    """Every ``?`` and ``!`` closes a phrase opened by ``¿`` or ``¡`` (the RAE's rule)."""
    found = []
    for opening, closing in (("¿", "?"), ("¡", "!")):
        depth = 0
        for index, char in enumerate(words):
            if char == opening:
                depth += 1
            elif char == closing:
                if depth == 0:
                    found.append(
                        f"write {opening!r} where the phrase ending in {closing!r} begins"
                        f" (in {_near(words, index)!r})"
                    )
                else:
                    depth -= 1
    return found


def fix_french_spaces(text: str, english: str = "") -> str:
    """Set French spaces before ; ! ? : and inside « » (used once to convert catalogs)."""
    words = words_only(text, english)
    out = list(text)
    for index in range(len(words) - 1, -1, -1):
        char = words[index]
        after = words[index + 1] if index + 1 < len(words) else ""
        if char in ";!?" and (after == "" or after.isspace() or after in "*_)»"):
            space = NNBSP
        elif char == ":" and (after == "" or after.isspace()):
            space = NBSP
        else:
            space = None
        if space is not None and index > 0 and words[index - 1] != _GAP:
            if words[index - 1] in (" ", NBSP, NNBSP):
                out[index - 1] = space
            elif not words[index - 1].isspace() and words[index - 1] not in "([":
                out.insert(index, space)
        if char == "«" and after in (" ", NNBSP):
            out[index + 1] = NBSP
        elif char == "«" and after != NBSP:
            out.insert(index + 1, NBSP)
        if char == "»" and index > 0 and words[index - 1] in (" ", NNBSP):
            out[index - 1] = NBSP
        elif char == "»" and index > 0 and words[index - 1] != NBSP:
            out.insert(index, NBSP)
    return "".join(out)
