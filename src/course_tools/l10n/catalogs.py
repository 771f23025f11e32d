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

from course_helpers.languages import TRANSLATED
from course_helpers.languages import language as language_named
from course_tools.l10n import code, files, po_format, po_syntax
from course_tools.l10n.sources import source_named, sources
from course_tools.l10n.units import lesson_units

#: How similar (0 to 1) a changed paragraph must be to its old version to inherit its
#: translation as a fuzzy suggestion.
_FUZZY_CUTOFF = 0.6


# Catalog headers usually carry creation dates; ours carry none, so extracting twice
# gives the same bytes, which CI relies on to spot out-of-date files.
def _new_catalog(language: str | None = None) -> polib.POFile:
    catalog = polib.POFile(wrapwidth=0)
    catalog.metadata = {
        "Project-Id-Version": "TF-Agents course",
        "Language": language_named(language).locale if language else "",
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
    }
    return catalog


class CatalogError(ValueError):
    """A catalog cannot be used; the message names the file and, where known, the line."""


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
        if child.is_dir() and child.name not in (*TRANSLATED, "templates"):
            raise CatalogError(
                f"{child}: unknown language {child.name!r}. The course is translated into "
                f"{', '.join(TRANSLATED)}; rename the folder to one of them, or add the "
                "language to ALL in src/course_helpers/languages.py."
            )


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it lies under it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def read_catalog(path: Path) -> polib.POFile:
    """Read a .po/.pot file, refusing what ``msgfmt --check`` refuses.

    A syntax error becomes a message naming the file and line; see :mod:`po_syntax`.
    """
    try:
        text = path.read_text(encoding="utf-8")
        po_syntax.validate(text)
        catalog = polib.pofile(text, wrapwidth=0)
    except (OSError, ValueError) as error:
        shown = _shown(path)
        where = (
            f"{shown}, {error}"
            if isinstance(error, po_syntax.PoSyntaxError)
            else f"{shown}: {error}"
        )
        raise CatalogError(
            f"{where} This catalog is not valid gettext, so nothing was read or written. Fix "
            "it in a PO editor or text editor (msgfmt --check names the same line), or "
            "restore it from version control."
        ) from error
    catalog.fpath = str(path)
    return catalog


def format_catalog(catalog: polib.POFile) -> str:
    """The text of a catalog, as it is written to disk: as msgcat writes it."""
    return po_format.format_catalog(catalog)


def write_catalog(catalog: polib.POFile, path: Path) -> None:
    files.write_all({path: format_catalog(catalog)})


def build_template(root: Path, lesson: str) -> polib.POFile:
    """One template entry per paragraph of the English lesson (or guide), keyed by cell id."""
    template = _new_catalog()
    for unit in lesson_units(source_named(root, lesson).read(root)):
        template.append(
            polib.POEntry(
                msgctxt=unit.cell_id,
                msgid=unit.text,
                msgstr="",
                comment=code.KINDS.get(unit.kind, ""),
            )
        )
    return template


def extract(root: Path) -> list[Path]:
    """Write ``locales/templates/<name>.pot`` for every English lesson and translated guide."""
    made = {
        template_path(root, source.name): format_catalog(build_template(root, source.name))
        for source in sources(root)
    }
    files.write_all(made)
    return list(made)


@dataclass
class MergeReport:
    """What a merge did to one catalog, for the translator: (cell id, English) pairs."""

    fuzzy: list[tuple[str, str]]
    new: list[tuple[str, str]]
    obsolete: list[tuple[str, str]]
    warnings: list[str]


#: The translator comment on an entry whose cell was renamed; dropped once it is reviewed.
RENAMED = (
    "Cell renamed: this translation comes from cell {old!r}; review it, then remove the fuzzy flag."
)


def _without_rename_note(comment: str) -> str:
    return "\n".join(line for line in comment.split("\n") if not line.startswith("Cell renamed: "))


def merge(
    catalog: polib.POFile, template: polib.POFile, language: str, name: str = ""
) -> tuple[polib.POFile, MergeReport]:
    """Merge a template into a catalog the way msgmerge does, one cell at a time.

    - an unchanged paragraph keeps its translation (and its fuzzy flag, if it had one);
    - a changed paragraph becomes fuzzy and keeps the old translation as its suggestion
      (``#| msgid`` holds the old English);
    - a removed paragraph becomes obsolete (``#~``) and is never deleted;
    - a new paragraph is untranslated;
    - a paragraph of a renamed cell (same or similar text, in a cell id that is gone)
      keeps its translation as a fuzzy suggestion, with a translator comment naming the
      old id, and the report warns.
    """
    report = MergeReport([], [], [], [])
    merged = _new_catalog(language)
    old = {(e.msgctxt, e.msgid): e for e in catalog if not e.obsolete}
    revivable = {(e.msgctxt, e.msgid): e for e in catalog if e.obsolete}
    wanted = {(e.msgctxt, e.msgid) for e in template}
    contexts = {context for context, _ in wanted}
    used: set[tuple[str | None, str]] = set()

    renamed_from = _renamed_cells(
        [e.msgctxt for e in catalog if not e.obsolete], [e.msgctxt for e in template]
    )

    # leftovers() applies its predicate at once, so the lambdas below that read the loop's
    # entry are safe (noqa: B023).
    def leftovers(predicate):
        return [
            e
            for key, e in old.items()
            if key not in wanted and key not in used and e.msgstr and predicate(e)
        ]

    for entry in template:
        key = (entry.msgctxt, entry.msgid)
        previous = old.get(key) or revivable.get(key)
        if previous is not None:
            used.add(key)
            reviewed = "fuzzy" not in previous.flags
            merged.append(
                polib.POEntry(
                    msgctxt=entry.msgctxt,
                    msgid=entry.msgid,
                    msgstr=previous.msgstr,
                    flags=list(previous.flags),
                    previous_msgid=previous.previous_msgid,
                    tcomment=_without_rename_note(previous.tcomment)
                    if reviewed
                    else previous.tcomment,
                    comment=entry.comment,
                )
            )
            continue
        source = _closest(entry.msgid, leftovers(lambda e: e.msgctxt == entry.msgctxt))  # noqa: B023
        if source is None:  # the same text in a cell that no longer exists: a renamed cell
            moved = leftovers(lambda e: e.msgid == entry.msgid and e.msgctxt not in contexts)  # noqa: B023
            source = moved[0] if moved else None
        if source is None and entry.msgctxt in renamed_from:  # renamed and edited
            source = _closest(
                entry.msgid,
                leftovers(lambda e: e.msgctxt == renamed_from[entry.msgctxt]),  # noqa: B023
            )
        if source is None:
            merged.append(
                polib.POEntry(
                    msgctxt=entry.msgctxt, msgid=entry.msgid, msgstr="", comment=entry.comment
                )
            )
            report.new.append((entry.msgctxt, entry.msgid))
            continue
        used.add((source.msgctxt, source.msgid))
        renamed = source.msgctxt != entry.msgctxt
        note = _without_rename_note(source.tcomment)
        if renamed:
            note = "\n".join(filter(None, [note, RENAMED.format(old=source.msgctxt)]))
        merged.append(
            polib.POEntry(
                msgctxt=entry.msgctxt,
                msgid=entry.msgid,
                msgstr=source.msgstr,
                flags=["fuzzy"],
                previous_msgid=source.msgid,
                tcomment=note,
                comment=entry.comment,
            )
        )
        report.fuzzy.append((entry.msgctxt, entry.msgid))
        edited = " and its text edited" if source.msgid != entry.msgid else ""
        warning = (
            f"{name}: the cell {source.msgctxt!r} seems to have been renamed to "
            f"{entry.msgctxt!r}{edited}; its translation was kept as a fuzzy suggestion, with a "
            "translator comment naming the old id. Cell ids should stay stable: translations "
            "are keyed by them."
        )
        if renamed and warning not in report.warnings:
            report.warnings.append(warning)

    for key, entry in {**revivable, **old}.items():
        if key in wanted or key in used:
            continue
        entry.obsolete = True
        merged.append(entry)
        if key in old:
            report.obsolete.append((entry.msgctxt, entry.msgid))
    return merged, report


def _renamed_cells(old: list[str], new: list[str]) -> dict[str, str]:
    """New cell id -> old cell id, for a cell that took the place of one that is gone.

    A cell is taken for a renamed one when the cells before it, among those in both
    versions, are the same: a deleted cell and a cell added elsewhere are not a rename.
    """
    old, new = list(dict.fromkeys(old)), list(dict.fromkeys(new))
    kept = set(old) & set(new)

    def place(order: list[str], cell: str) -> str | None:
        before = [c for c in order[: order.index(cell)] if c in kept]
        return before[-1] if before else None

    gone = {cell: place(old, cell) for cell in old if cell not in kept}
    found = {}
    for cell in new:
        if cell in kept:
            continue
        candidates = [old_cell for old_cell, at in gone.items() if at == place(new, cell)]
        if len(candidates) == 1:
            found[cell] = candidates[0]
    return found


def _closest(text: str, candidates: list[polib.POEntry]) -> polib.POEntry | None:
    """The candidate whose English is most similar to ``text``, if similar enough.

    difflib's get_close_matches is not used: on strings over 200 characters its
    "autojunk" heuristic discards common letters and rates near-identical paragraphs
    as unrelated.
    """
    scored = [
        (difflib.SequenceMatcher(None, text, e.msgid, autojunk=False).ratio(), e)
        for e in candidates
    ]
    best = max(scored, key=lambda pair: pair[0], default=(0.0, None))
    return best[1] if best[0] >= _FUZZY_CUTOFF else None


def update(root: Path, languages: list[str] | None = None) -> dict[Path, MergeReport]:
    """Merge every template into every language's catalog, creating missing catalogs.

    Every catalog is read and merged before any is written: one that cannot be read
    stops the update and no file changes.
    """
    check_locale_folders(root)
    languages = languages or list(TRANSLATED)
    for language in languages:
        if language not in TRANSLATED:
            raise CatalogError(
                f"Unknown language {language!r}; choose from {', '.join(TRANSLATED)}."
            )
    reports, made = {}, {}
    for lesson in (source.name for source in sources(root)):
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


@dataclass(frozen=True)
class Todo:
    """One entry a translator must look at: where it is and why."""

    path: Path
    line: int
    cell_id: str
    state: str  # "fuzzy" (out of date) or "untranslated" (new)
    english: str

    def describe(self, root: Path) -> str:
        english = self.english.replace("\n", " ")
        english = english if len(english) <= 60 else english[:57] + "..."
        state = "out of date (fuzzy)" if self.state == "fuzzy" else "not translated yet"
        return f"{self.path.relative_to(root)}:{self.line}: cell {self.cell_id!r}, {state}: {english!r}"


def todo(path: Path) -> list[Todo]:
    """The fuzzy and untranslated entries of a catalog, in file order, with their lines."""
    if not path.exists():
        return []
    found = []
    for entry in read_catalog(path):
        if entry.obsolete:
            continue
        if "fuzzy" in entry.flags or not entry.msgstr:
            found.append(
                Todo(
                    path,
                    entry.linenum or 0,  # set on every entry polib reads from a file
                    entry.msgctxt or "",
                    "fuzzy" if "fuzzy" in entry.flags else "untranslated",
                    entry.msgid,
                )
            )
    return found


def status(root: Path) -> list[Status]:
    """Count translated, fuzzy and untranslated paragraphs per language and lesson."""
    check_locale_folders(root)
    rows = []
    for language in TRANSLATED:
        for lesson in (source.name for source in sources(root)):
            path = catalog_path(root, language, lesson)
            if not path.exists():
                rows.append(
                    Status(language, lesson, 0, 0, len(read_catalog(template_path(root, lesson))))
                )
                continue
            catalog = read_catalog(path)
            rows.append(
                Status(
                    language,
                    lesson,
                    len(catalog.translated_entries()),
                    len(catalog.fuzzy_entries()),
                    len(catalog.untranslated_entries()),
                )
            )
    return rows
