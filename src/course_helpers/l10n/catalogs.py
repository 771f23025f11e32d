"""gettext catalogs of the lessons: extract templates, merge them into each language, count.

Files are read and written with polib, which keeps everything gettext tools write:
contexts, fuzzy flags, obsolete entries and the previous msgid of a fuzzy entry (Babel
reads the last one back as a comment). The merge is ours rather than msgmerge's,
because msgmerge looks for fuzzy matches across the whole catalog: a paragraph of one
cell could inherit the translation of a similar paragraph in another cell. Here a
changed paragraph only inherits a translation from its own cell (msgctxt), except when
a whole cell was renamed, which is reported.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

import polib

from course_helpers.l10n import code, files
from course_helpers.l10n.units import lesson_units, read_lesson

#: Locale folders (as in notebooks/<lang>/) and the gettext locale each stands for.
LANGUAGES = {"pt-br": "pt_BR", "es": "es", "fr": "fr"}

#: How similar (0 to 1) a changed paragraph must be to its old version to inherit its
#: translation as a fuzzy suggestion.
_FUZZY_CUTOFF = 0.6


# Catalog headers usually carry creation dates; ours carry none, so extracting twice
# gives the same bytes, which CI relies on to spot out-of-date files.
def _new_catalog(language: str | None = None) -> polib.POFile:
    catalog = polib.POFile(wrapwidth=0)
    catalog.metadata = {
        "Project-Id-Version": "TF-Agents course",
        "Language": LANGUAGES.get(language, "") if language else "",
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
    }
    return catalog


class CatalogError(ValueError):
    """A catalog cannot be used; the message names the file and, where known, the line."""


def lessons(root: Path) -> list[str]:
    return sorted(p.stem for p in (root / "notebooks" / "en").glob("[0-9][0-9]_*.ipynb"))


def template_path(root: Path, lesson: str) -> Path:
    return root / "locales" / "templates" / f"{lesson}.pot"


def catalog_path(root: Path, language: str, lesson: str) -> Path:
    return root / "locales" / language / f"{lesson}.po"


def check_locale_folders(root: Path) -> None:
    """Refuse a catalog folder for a language the course does not know."""
    folder = root / "locales"
    if not folder.is_dir():
        return
    for child in sorted(folder.iterdir()):
        if child.is_dir() and child.name not in (*LANGUAGES, "templates"):
            raise CatalogError(
                f"{child}: unknown language {child.name!r}. The course is translated into "
                f"{', '.join(LANGUAGES)}; rename the folder to one of them, or add the "
                "language to LANGUAGES in course_helpers/l10n/catalogs.py."
            )


def read_catalog(path: Path) -> polib.POFile:
    """Read a .po/.pot file; a syntax error becomes a message naming the file and line."""
    try:
        return polib.pofile(str(path), wrapwidth=0)
    except (OSError, ValueError) as error:
        raise CatalogError(
            f"{path}: this catalog is not valid gettext ({error}). Fix it in a PO editor "
            "or text editor, or restore it from version control."
        ) from error


def format_catalog(catalog: polib.POFile) -> str:
    """The text of a catalog, as it is written to disk."""
    return catalog.__unicode__()


def write_catalog(catalog: polib.POFile, path: Path) -> None:
    files.write_all({path: format_catalog(catalog)})


def build_template(root: Path, lesson: str) -> polib.POFile:
    """One template entry per paragraph of the English lesson, keyed by cell id."""
    source = root / "notebooks" / "en" / f"{lesson}.ipynb"
    template = _new_catalog()
    for unit in lesson_units(read_lesson(source)):
        template.append(polib.POEntry(msgctxt=unit.cell_id, msgid=unit.text, msgstr="",
                                      comment=code.KINDS.get(unit.kind, "")))
    return template


def extract(root: Path) -> list[Path]:
    """Write ``locales/templates/NN_name.pot`` for every English lesson."""
    made = {template_path(root, lesson): format_catalog(build_template(root, lesson))
            for lesson in lessons(root)}
    files.write_all(made)
    return list(made)


@dataclass
class MergeReport:
    """What a merge did to one catalog, for the translator."""

    fuzzy: list[str]
    new: list[str]
    obsolete: list[str]
    warnings: list[str]


def merge(catalog: polib.POFile, template: polib.POFile, language: str,
          name: str = "") -> tuple[polib.POFile, MergeReport]:
    """Merge a template into a catalog the way msgmerge does, one cell at a time.

    - an unchanged paragraph keeps its translation (and its fuzzy flag, if it had one);
    - a changed paragraph becomes fuzzy and keeps the old translation as its suggestion
      (``#| msgid`` holds the old English);
    - a removed paragraph becomes obsolete (``#~``) and is never deleted;
    - a new paragraph is untranslated.
    """
    report = MergeReport([], [], [], [])
    merged = _new_catalog(language)
    old = {(e.msgctxt, e.msgid): e for e in catalog if not e.obsolete}
    revivable = {(e.msgctxt, e.msgid): e for e in catalog if e.obsolete}
    wanted = {(e.msgctxt, e.msgid) for e in template}
    contexts = {context for context, _ in wanted}
    used: set[tuple[str | None, str]] = set()

    def leftovers(predicate):
        return [e for key, e in old.items()
                if key not in wanted and key not in used and e.msgstr and predicate(e)]

    for entry in template:
        key = (entry.msgctxt, entry.msgid)
        previous = old.get(key) or revivable.get(key)
        if previous is not None:
            used.add(key)
            merged.append(polib.POEntry(
                msgctxt=entry.msgctxt, msgid=entry.msgid, msgstr=previous.msgstr,
                flags=list(previous.flags), previous_msgid=previous.previous_msgid,
                tcomment=previous.tcomment, comment=entry.comment))
            continue
        source = _closest(entry.msgid, leftovers(lambda e: e.msgctxt == entry.msgctxt))
        if source is None:  # the same text in a cell that no longer exists: a renamed cell
            moved = leftovers(lambda e: e.msgid == entry.msgid and e.msgctxt not in contexts)
            source = moved[0] if moved else None
        if source is None:
            merged.append(polib.POEntry(msgctxt=entry.msgctxt, msgid=entry.msgid, msgstr="",
                                        comment=entry.comment))
            report.new.append(f"{entry.msgctxt}: {entry.msgid[:60]}")
            continue
        used.add((source.msgctxt, source.msgid))
        merged.append(polib.POEntry(
            msgctxt=entry.msgctxt, msgid=entry.msgid, msgstr=source.msgstr, flags=["fuzzy"],
            previous_msgid=source.msgid, tcomment=source.tcomment, comment=entry.comment))
        report.fuzzy.append(f"{entry.msgctxt}: {entry.msgid[:60]}")
        warning = (
            f"{name}: the cell {source.msgctxt!r} seems to have been renamed to "
            f"{entry.msgctxt!r}; its translation was kept, marked fuzzy. Cell ids "
            "should stay stable: translations are keyed by them."
        )
        if source.msgctxt != entry.msgctxt and warning not in report.warnings:
            report.warnings.append(warning)

    for key, entry in {**revivable, **old}.items():
        if key in wanted or key in used:
            continue
        entry.obsolete = True
        merged.append(entry)
        if key in old:
            report.obsolete.append(f"{entry.msgctxt}: {entry.msgid[:60]}")
    return merged, report


def _closest(text: str, candidates: list[polib.POEntry]) -> polib.POEntry | None:
    """The candidate whose English is most similar to ``text``, if similar enough.

    difflib's get_close_matches is not used: on strings over 200 characters its
    "autojunk" heuristic discards common letters and rates near-identical paragraphs
    as unrelated.
    """
    scored = [(difflib.SequenceMatcher(None, text, e.msgid, autojunk=False).ratio(), e)
              for e in candidates]
    best = max(scored, key=lambda pair: pair[0], default=(0.0, None))
    return best[1] if best[0] >= _FUZZY_CUTOFF else None


def update(root: Path, languages: list[str] | None = None) -> dict[Path, MergeReport]:
    """Merge every template into every language's catalog, creating missing catalogs.

    Every catalog is read and merged before any is written: one that cannot be read
    stops the update and no file changes.
    """
    check_locale_folders(root)
    languages = languages or list(LANGUAGES)
    for language in languages:
        if language not in LANGUAGES:
            raise CatalogError(f"Unknown language {language!r}; choose from {', '.join(LANGUAGES)}.")
    reports, made = {}, {}
    for lesson in lessons(root):
        template = read_catalog(template_path(root, lesson))
        for language in languages:
            path = catalog_path(root, language, lesson)
            existing = read_catalog(path) if path.exists() else _new_catalog(language)
            merged, report = merge(existing, template, language, name=str(path.relative_to(root)))
            made[path] = format_catalog(merged)
            reports[path] = report
    files.write_all(made)
    return reports


@dataclass(frozen=True)
class Status:
    language: str
    lesson: str
    translated: int
    fuzzy: int
    untranslated: int

    @property
    def percent(self) -> float:
        total = self.translated + self.fuzzy + self.untranslated
        return 100.0 * self.translated / total if total else 100.0


def status(root: Path) -> list[Status]:
    """Count translated, fuzzy and untranslated paragraphs per language and lesson."""
    check_locale_folders(root)
    rows = []
    for language in LANGUAGES:
        for lesson in lessons(root):
            path = catalog_path(root, language, lesson)
            if not path.exists():
                rows.append(Status(language, lesson, 0, 0, len(read_catalog(template_path(root, lesson)))))
                continue
            catalog = read_catalog(path)
            rows.append(Status(language, lesson, len(catalog.translated_entries()),
                               len(catalog.fuzzy_entries()), len(catalog.untranslated_entries())))
    return rows
