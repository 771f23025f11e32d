"""Build the localized notebooks, notebooks/<lang>/NN_name.ipynb, from English and catalogs.

Translated paragraphs replace the English ones. A paragraph whose translation is
missing or fuzzy stays in English, and its cell gets a short note under its heading, in
the learner's language, saying that the part is not translated yet or that its
translation is being updated. Code cells are the English ones with their comments,
docstrings and displayed strings translated (see :mod:`course_tools.l10n.code`); the
set-up cell also passes its language code to ``course.setup``.

The output depends only on its inputs, so building twice gives the same bytes. A build
refuses a catalog that ``course l10n check`` would reject, and writes nothing unless
every notebook it was asked for could be made.
"""

from __future__ import annotations

import copy
from pathlib import Path

from course_helpers.i18n import translator
from course_helpers.languages import TRANSLATED
from course_tools import links, notebook_json
from course_tools.l10n import catalogs, code, files, rules
from course_tools.l10n.sources import source_named, sources
from course_tools.l10n.units import code_pieces, join_blocks, lesson_units, split_markdown
from course_tools.lessons import BADGES_CELL, SETUP_CELL

#: The notes shown on a markdown cell that is (partly) in English: its translation is
#: out of date (a fuzzy entry), or there is none yet.
STALE_NOTE = "This part is shown in English while its translation is being updated."
NEW_NOTE = "This part is shown in English: it has not been translated yet."
#: The set-up cell's language argument in the English lessons.
ENGLISH_SETUP = 'language="en"'


def stale_note(language: str, out_of_date: bool = True) -> str:
    return f"> *{translator(language)(STALE_NOTE if out_of_date else NEW_NOTE)}*"


def localize(
    english: notebook_json.Node,
    translations: dict[tuple[str, str], str],
    language: str,
    name: str,
    repo: links.Repository | None = None,
    fuzzy: frozenset[tuple[str, str]] | set[tuple[str, str]] = frozenset(),
) -> notebook_json.Node:
    """Return the lesson in ``language``; ``translations`` maps (cell id, English) to text.

    ``fuzzy`` holds the keys whose translation exists but is out of date. With ``repo``,
    the lesson's badges cell opens this language's copy of the lesson.
    """
    notebook = copy.deepcopy(english)
    notebook.metadata["course"] = {"language": language, "source": f"notebooks/en/{name}.ipynb"}
    for index, cell in enumerate(notebook.cells):
        if cell.get("id") == BADGES_CELL:
            if repo is not None:
                notebook.cells[index] = notebook_json.markdown_cell(
                    BADGES_CELL,
                    repo.badges_cell_text(language, name),
                    {"course": {"generated": "course links"}},
                )
        elif cell.cell_type == "markdown":
            texts, missing = [], []
            blocks = split_markdown(cell.source)
            for block in blocks:
                translated = translations.get((cell.id, block.text)) if block.translatable else None
                if block.translatable and translated is None:
                    missing.append((cell.id, block.text))
                texts.append(translated if translated is not None else block.text)
            if missing:
                # Under the cell's heading, if it opens with one, so the heading stays first.
                at = 1 if blocks and blocks[0].text.startswith("#") else 0
                texts.insert(at, stale_note(language, any(key in fuzzy for key in missing)))
            cell.source = join_blocks(texts)
        if cell.cell_type == "code":

            def lookup(piece: code.Piece, cell_id: str = cell.id) -> str | None:
                return translations.get((cell_id, piece.text))

            cell.source = code.translate(
                cell.source,
                lookup,
                f"notebooks/{language}/{name}.ipynb, cell {cell.id!r}",
            )
        if cell.cell_type == "code" and cell.id == SETUP_CELL:
            if cell.source.count(ENGLISH_SETUP) != 1:
                raise catalogs.CatalogError(
                    f"notebooks/en/{name}.ipynb, cell {SETUP_CELL!r}: the set-up cell must pass "
                    f"{ENGLISH_SETUP} to course.setup() exactly once, so that each language "
                    "can set its own."
                )
            cell.source = cell.source.replace(ENGLISH_SETUP, f'language="{language}"')
    return notebook


def translations_of(catalog) -> dict[tuple[str, str], str]:
    """Usable translations: present, not fuzzy, not obsolete."""
    return {(e.msgctxt, e.msgid): e.msgstr for e in catalog if e.translated() and not e.obsolete}


def fuzzy_of(catalog) -> set[tuple[str, str]]:
    """The keys whose translation exists but is out of date."""
    return {
        (e.msgctxt, e.msgid) for e in catalog if "fuzzy" in e.flags and e.msgstr and not e.obsolete
    }


def render(
    root: Path,
    language: str,
    name: str,
    english: notebook_json.Node | None = None,
    validate: bool = True,
) -> str:
    """The text of notebooks/<language>/<name>.ipynb (or of a guide, docs/<language>/...),
    from English and the catalog.

    Raises :class:`catalogs.CatalogError` with ``course l10n check``'s message when a
    translation would break the notebook.
    """
    source = source_named(root, name)
    if english is None:
        english = source.read(root)
    path = catalogs.catalog_path(root, language, name)
    catalog = catalogs.read_catalog(path) if path.exists() else None
    if catalog is not None and validate:
        problems = rules.catalog_problems(
            root, language, name, catalog, lesson_units(english), code_pieces(english)
        )
        if problems:
            raise catalogs.CatalogError("\n".join(problems))
    found = translations_of(catalog) if catalog is not None else {}
    fuzzy = fuzzy_of(catalog) if catalog is not None else set()
    repo = links.repository(root, required=False) if source.guide is None else None
    notebook = localize(english, found, language, name, repo, fuzzy)
    return source.writes(notebook, language)


def build(root: Path, languages: list[str] | None = None) -> list[Path]:
    """Write notebooks/<lang>/NN_name.ipynb for every lesson and language, and
    docs/<lang>/<guide>.md for every translated guide; return the paths.

    Every notebook is made before any is written: if one catalog is broken, no file
    changes, and the error names each broken entry.
    """
    catalogs.check_locale_folders(root)
    languages = languages or list(TRANSLATED)
    for language in languages:
        if language not in TRANSLATED:
            raise catalogs.CatalogError(
                f"Unknown language {language!r}; choose from {', '.join(TRANSLATED)}."
            )
    made, problems = {}, []
    for source in sources(root):
        english = source.read(root)
        for language in languages:
            try:
                made[source.target(root, language)] = render(root, language, source.name, english)
            except catalogs.CatalogError as error:
                problems.append(str(error))
    if problems:
        raise catalogs.CatalogError(
            "\n".join(problems) + "\nNothing was built: fix these translations (or mark them "
            "fuzzy), then run 'course l10n build' again."
        )
    files.write_all(made)
    return list(made)
