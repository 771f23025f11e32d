"""What a translation must keep from its English, so that a built notebook still works.

Shared by ``course l10n check`` (which reports) and ``course l10n build`` (which refuses
to write a notebook from a catalog that breaks them), so both say the same thing.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import polib

from course_tools.l10n import code, typography
from course_tools.l10n.units import Unit

# What a prose translation must carry over unchanged from the English paragraph.
_MUST_SURVIVE = {
    "code span": re.compile(r"(`+)(.+?)\1", re.S),
    "link target": re.compile(r"\]\(([^)\s]+)\)"),
    "math": re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.S),
    "HTML tag": re.compile(r"</?[A-Za-z][^<>]*>"),
    "placeholder": re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}|%\([A-Za-z_]+\)[sd]|%[sd]"),
}
# The words inside \text{...} in a formula are prose: a translation may change them.
_MATH_WORDS = re.compile(r"\\text\{[^{}]*\}")


# A number in a formula, in any course language's way of writing it: digits joined by
# decimal marks and digit-group separators, as LaTeX writes them (0{,}1; 10\\,000; 10.000).
_MATH_NUMBER = re.compile(r"\d+(?:(?:\{[,.]\}|[,.~\u00a0\u202f]|\\[,;: ])\d+)*")
# How each language may write a number in a formula: (decimal marks, group separators).
_MATH_MARKS = {
    "en": ({"."}, {"{,}", ","}),
    "pt-br": ({"{,}", ","}, {".", "{.}"}),
    "es": ({"."}, {"\\,", "\\;", "\\:", "\\ ", "~", "\u00a0", "\u202f"}),
    "fr": ({"{,}", ","}, {"\\,", "\\;", "\\:", "\\ ", "~", "\u00a0", "\u202f"}),
}


def _math_numbers(formula: str, language: str) -> str:
    """``formula`` with every number rewritten as Python writes it (10000, 0.1), reading
    its marks as ``language`` writes them; a number it cannot read so stays as it is."""
    decimals, groups = _MATH_MARKS[language]

    def plain(match: re.Match) -> str:
        parts = re.split(r"(\{[,.]\}|[,.~\u00a0\u202f]|\\[,;: ])", match.group(0))
        marks = parts[1::2]
        if sum(mark in decimals for mark in marks) > 1 or not all(
            mark in decimals or mark in groups for mark in marks
        ):
            return match.group(0)
        return "".join(
            part if index % 2 == 0 else "." if part in decimals else ""
            for index, part in enumerate(parts)
        )

    return _MATH_NUMBER.sub(plain, formula)


def protected(text: str, language: str = "en", english: Counter | None = None) -> Counter:
    """The code spans, link targets, math, HTML tags and placeholders in ``text``.

    In math, the words of ``\\text{...}`` are set aside: they are translated. So are the
    numbers' marks: a formula is counted with its numbers as Python writes them, so that
    ``$10{,}000$`` in English and ``$10\\,000$`` in French are the same formula. A translation
    (``language``, checked against the ``english`` this function returned for its source)
    may write a formula's numbers as its language does, or leave them as in English.
    """
    found: Counter = Counter()
    # A placeholder is looked for outside math, where braces are LaTeX (\\text{left}).
    outside_math = _MUST_SURVIVE["math"].sub(" ", text)
    for kind, pattern in _MUST_SURVIVE.items():
        for match in pattern.finditer(outside_math if kind == "placeholder" else text):
            value = match.group(0)
            if kind == "math":
                value = _MATH_WORDS.sub(r"\\text{…}", value)
                localized = _math_numbers(value, language)
                as_english = _math_numbers(value, "en")
                value = (
                    localized
                    if english is not None and (kind, localized) in english
                    else as_english
                )
            found[(kind, value)] += 1
    return found


def entry_problem(
    unit: Unit, translation: str, language: str, pieces: dict[tuple[str, str], code.Piece]
) -> str | None:
    """Why ``translation`` cannot stand for ``unit`` in ``language``, or None."""
    if unit.text.startswith(("```", "~~~")):
        english, translated = unit.text.split("\n"), translation.split("\n")
        if (english[0], english[-1]) != (translated[0], translated[-1]):
            return (
                f"a fenced block's translation must keep its fence lines "
                f"{english[0]!r} and {english[-1]!r}; translate only what is between them."
            )
        # Inside the fences: words, arrows and layout; the fences are not a code span.
        unit = Unit(unit.cell_id, "\n".join(english[1:-1]), unit.kind)
        translation = "\n".join(translated[1:-1])
    if unit.kind not in ("string", "docstring"):
        source = protected(unit.text)
        kept = protected(translation, language, english=source)
        missing, extra = source - kept, kept - source
        if missing or extra:
            return (
                "the translation must keep what the English has: "
                + "; ".join(
                    [f"lost {kind} {text!r}" for kind, text in sorted(missing)]
                    + [f"added {kind} {text!r}" for kind, text in sorted(extra)]
                )
                + "."
            )
    piece = pieces.get((unit.cell_id, unit.text))
    if piece is not None:
        problem = code.translation_problem(piece, translation)
        if problem:
            return f"this text sits in code ({unit.kind}): {problem}."
    typo = typography.problems(
        translation, language, unit.text, quotes=unit.kind in ("prose", "message")
    )
    if typo:
        return "typography: " + "; ".join(typo) + "."
    return None


def helper_catalog_problems(root: Path, language: str) -> list[str]:
    """The helpers' own catalog (set-up lines, feedback, plot labels) obeys the same rules:
    its ``{placeholders}`` survive and the language's typography holds."""
    from course_tools.l10n import catalogs

    path = (
        root / "src" / "course_helpers" / "locale" / language / "LC_MESSAGES" / "course_helpers.po"
    )
    if not path.exists():
        return []
    catalog = catalogs.read_catalog(path)
    units = [Unit(e.msgctxt or "", e.msgid, "message") for e in catalog]
    return catalog_problems(root, language, "course_helpers", catalog, units, {})


def catalog_problems(
    root: Path,
    language: str,
    name: str,
    catalog: polib.POFile,
    units: list[Unit],
    pieces: dict[tuple[str, str], code.Piece],
) -> list[str]:
    """Every translation in ``catalog`` that would break its notebook, one sentence each.

    A fuzzy entry is an old translation kept as a suggestion: the build shows the
    English instead, so it cannot break a notebook, and a changed paragraph must not
    fail CI before a translator has updated it.
    """
    path = Path(catalog.fpath).resolve()
    shown = path.relative_to(root.resolve()) if path.is_relative_to(root.resolve()) else path
    by_key = {(u.cell_id, u.text): u for u in units}
    problems = []
    for entry in catalog:
        if not entry.msgstr or entry.obsolete or "fuzzy" in entry.flags:
            continue
        unit = by_key.get((entry.msgctxt, entry.msgid), Unit(entry.msgctxt or "", entry.msgid))
        problem = entry_problem(unit, entry.msgstr, language, pieces)
        if problem:
            problems.append(
                f"{name} [{language}] cell {entry.msgctxt!r} ({shown}, line "
                f"{entry.linenum}): {problem}"
            )
    return problems
