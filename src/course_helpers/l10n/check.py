"""What must hold between the English lessons, the catalogs and the built notebooks.

Each problem is reported with the lesson, the language and the cell, so a maintainer
knows where to look. A translation that is merely behind is not a problem: it shows in
English with a note, and ``course l10n status`` reports it.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections import Counter
from pathlib import Path

import nbformat

from course_helpers import links
from course_helpers.l10n import build, catalogs
from course_helpers.l10n.units import read_lesson

# What a translation must carry over unchanged from the English paragraph.
_MUST_SURVIVE = {
    "code span": re.compile(r"(`+)(.+?)\1", re.S),
    "link target": re.compile(r"\]\(([^)\s]+)\)"),
    "math": re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.S),
    "HTML tag": re.compile(r"</?[A-Za-z][^<>]*>"),
    "placeholder": re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}|%\([A-Za-z_]+\)[sd]|%[sd]"),
}


def protected(text: str) -> Counter:
    """The code spans, link targets, math, HTML tags and placeholders in ``text``."""
    found: Counter = Counter()
    for kind, pattern in _MUST_SURVIVE.items():
        found.update((kind, match.group(0)) for match in pattern.finditer(text))
    return found


def code_tokens(source: str) -> list[tuple[int, str]]:
    """The token stream of a code cell without comments and layout-only tokens."""
    skipped = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
               tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}
    # IPython magics (%time, !pip) are not Python: compare each such line as exact text.
    lines = [repr(line.strip()) if line.lstrip().startswith(("%", "!")) else line
             for line in source.splitlines()]
    tokens = tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline)
    return [(t.type, t.string) for t in tokens if t.type not in skipped]


def check_catalog(root: Path, language: str, name: str) -> list[str]:
    path = catalogs.catalog_path(root, language, name)
    if not path.exists():
        return []
    problems = []
    for entry in catalogs.read_catalog(path):
        # A fuzzy entry is an old translation kept as a suggestion: the build shows the
        # English instead, so it cannot break a notebook, and a changed paragraph must not
        # fail CI before a translator has updated it.
        if not entry.msgstr or entry.obsolete or "fuzzy" in entry.flags:
            continue
        missing = protected(entry.msgid) - protected(entry.msgstr)
        extra = protected(entry.msgstr) - protected(entry.msgid)
        if missing or extra:
            detail = "; ".join(
                [f"lost {kind} {text!r}" for kind, text in sorted(missing)]
                + [f"added {kind} {text!r}" for kind, text in sorted(extra)])
            problems.append(
                f"{name} [{language}] cell {entry.msgctxt!r} ({path.relative_to(root)}, line "
                f"{entry.linenum}): the translation must keep what the English has: {detail}."
            )
    return problems


def check_notebook(root: Path, language: str, name: str) -> list[str]:
    english = read_lesson(root / "notebooks" / "en" / f"{name}.ipynb")
    target = root / "notebooks" / language / f"{name}.ipynb"
    if not target.exists():
        return [f"{name} [{language}]: {target.relative_to(root)} is missing; run 'course l10n build'."]
    built = nbformat.read(target, as_version=4)
    problems = []
    english_code = {c.id: c.source for c in english.cells if c.cell_type == "code"}
    built_code = {c.id: c.source for c in built.cells if c.cell_type == "code"}
    if list(english_code) != list(built_code):
        problems.append(f"{name} [{language}]: the code cells are not the English ones "
                        f"(ids {list(built_code)} instead of {list(english_code)}).")
    for cell_id, source in built_code.items():
        expected = english_code.get(cell_id)
        if cell_id == build.SETUP_CELL and expected is not None:
            expected = expected.replace(build.ENGLISH_SETUP, f'language="{language}"')
        if expected is not None and code_tokens(source) != code_tokens(expected):
            problems.append(f"{name} [{language}] cell {cell_id!r}: this code cell differs from "
                            "English in more than comments; every language runs the same code.")
    path = catalogs.catalog_path(root, language, name)
    found = build.translations_of(catalogs.read_catalog(path)) if path.exists() else {}
    # nbformat.write adds a final newline to what writes() returns.
    fresh = nbformat.writes(build.localize(english, found, language, name,
                                           links.repository(root, required=False))) + "\n"
    if target.read_text(encoding="utf-8") != fresh:
        problems.append(f"{name} [{language}]: {target.relative_to(root)} is out of date with its "
                        "English source and catalog; run 'course l10n build' and commit the result.")
    return problems


def check(root: Path) -> list[str]:
    """Every problem found, as sentences; an empty list means all is well."""
    catalogs.check_locale_folders(root)
    problems = []
    for language in catalogs.LANGUAGES:
        for name in catalogs.lessons(root):
            problems += check_catalog(root, language, name)
            problems += check_notebook(root, language, name)
    return problems
