"""What must hold between the English lessons, the catalogs and the built notebooks.

Each problem is reported with the lesson, the language and the cell, so a maintainer
knows where to look. A template or catalog that misses a text of the English, or keeps
one the English no longer has, is a problem: run ``course l10n extract`` and ``update``.
A translation that is merely behind (fuzzy or empty) is not: it shows in English with a
note, and ``course l10n status`` lists it.
"""

from __future__ import annotations

from pathlib import Path

from course_helpers.languages import TRANSLATED
from course_tools import notebook_json
from course_tools.l10n import build, catalogs, code, rules
from course_tools.l10n.sources import source_named, sources
from course_tools.l10n.units import Unit, code_pieces, lesson_units
from course_tools.lessons import SETUP_CELL


def code_tokens(source: str) -> list[tuple[int, str]]:
    """The tokens every language must share: see :func:`course_tools.l10n.code.skeleton`."""
    return code.skeleton(source)


def _catalog_keys(catalog) -> dict[tuple[str, str], int]:
    return {(e.msgctxt, e.msgid): e.linenum for e in catalog if not e.obsolete}


def stale_problems(root: Path, language: str | None, name: str, units: list[Unit]) -> list[str]:
    """The template (``language=None``) or catalog that no longer matches the English.

    Each problem names the cell whose text has no entry, or the entry whose English is
    gone, and the command that brings the file up to date.
    """
    if language is None:
        path, command = catalogs.template_path(root, name), "course l10n extract"
        label = f"{name} [template]"
    else:
        path, command = catalogs.catalog_path(root, language, name), "course l10n update"
        label = f"{name} [{language}]"
    shown = path.relative_to(root)
    english = source_named(root, name).shown(root)
    if not path.exists():
        return [f"{label}: {shown} is missing; run '{command}'."]
    keys = _catalog_keys(catalogs.read_catalog(path))
    wanted = [(u.cell_id, u.text) for u in units]
    problems = []
    for cell_id, text in wanted:
        if (cell_id, text) not in keys:
            problems.append(
                f"{label} cell {cell_id!r}: {shown} has no entry for "
                f"{_short(text)!r} of {english}; run '{command}'."
            )
    for (cell_id, text), line in keys.items():
        if (cell_id, text) not in set(wanted):
            problems.append(
                f"{label} cell {cell_id!r} ({shown}, line {line}): the entry "
                f"{_short(text)!r} is no longer in {english}; "
                f"run '{command}'."
            )
    return problems


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def check_catalog(root: Path, language: str, name: str) -> list[str]:
    path = catalogs.catalog_path(root, language, name)
    if not path.exists():
        return []
    english = source_named(root, name).read(root)
    return rules.catalog_problems(
        root,
        language,
        name,
        catalogs.read_catalog(path),
        lesson_units(english),
        code_pieces(english),
    )


def check_notebook(root: Path, language: str, name: str, catalog_ok: bool = True) -> list[str]:
    """Problems of notebooks/<language>/<name>.ipynb (or of a translated guide);
    ``catalog_ok``: its catalog passed."""
    text_source = source_named(root, name)
    english = text_source.read(root)
    target = text_source.target(root, language)
    if not target.exists():
        return [
            f"{name} [{language}]: {target.relative_to(root)} is missing; run 'course l10n build'."
        ]
    problems = []
    if text_source.guide is not None:  # a guide has no code cells: only its freshness to check
        return _fresh(root, language, name, english, target, catalog_ok)
    built = notebook_json.reads(target.read_text(encoding="utf-8"))
    english_code = {c.id: c.source for c in english.cells if c.cell_type == "code"}
    built_code = {c.id: c.source for c in built.cells if c.cell_type == "code"}
    if list(english_code) != list(built_code):
        problems.append(
            f"{name} [{language}]: the code cells are not the English ones "
            f"(ids {list(built_code)} instead of {list(english_code)})."
        )
    for cell_id, source in built_code.items():
        expected = english_code.get(cell_id)
        if cell_id == SETUP_CELL and expected is not None:
            expected = expected.replace(build.ENGLISH_SETUP, f'language="{language}"')
        if expected is not None and code_tokens(source) != code_tokens(expected):
            problems.append(
                f"{name} [{language}] cell {cell_id!r}: this code cell differs from "
                "English in more than its comments, docstrings and displayed "
                "strings; every language runs the same code."
            )
    return problems + _fresh(root, language, name, english, target, catalog_ok)


def _fresh(
    root: Path, language: str, name: str, english, target: Path, catalog_ok: bool
) -> list[str]:
    if not catalog_ok:
        return []  # check_catalog names each broken entry; nothing can be built yet
    fresh = build.render(root, language, name, english, validate=False)
    if target.read_text(encoding="utf-8") != fresh:
        return [
            f"{name} [{language}]: {target.relative_to(root)} is out of date with its "
            "English source and catalog; run 'course l10n build' and commit the result."
        ]
    return []


def check(root: Path) -> list[str]:
    """Every problem found, as sentences; an empty list means all is well."""
    catalogs.check_locale_folders(root)
    problems = []
    for language in TRANSLATED:
        problems += rules.helper_catalog_problems(root, language)
    for source in sources(root):
        name = source.name
        units = lesson_units(source.read(root))
        problems += stale_problems(root, None, name, units)
        for language in TRANSLATED:
            problems += stale_problems(root, language, name, units)
            broken = check_catalog(root, language, name)
            problems += broken
            try:
                problems += check_notebook(root, language, name, catalog_ok=not broken)
            except code.CodeError as error:
                problems.append(f"{name} [{language}]: {error}")
    return problems
