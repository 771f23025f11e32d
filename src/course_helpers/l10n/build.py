"""Build the localized notebooks, notebooks/<lang>/NN_name.ipynb, from English and catalogs.

Translated paragraphs replace the English ones. A paragraph whose translation is
missing or fuzzy stays in English, and its cell gets a short note, in the learner's
language, saying the translation is being updated. Code cells are copied from English;
the set-up cell differs only in the language code it passes to ``course.setup``.
The output depends only on its inputs, so building twice gives the same bytes.
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat

from course_helpers import links
from course_helpers.links import SETUP_CELL
from course_helpers.i18n import translator
from course_helpers.l10n import catalogs
from course_helpers.l10n.units import join_blocks, read_lesson, split_markdown

#: The helpers' message shown on a cell that is (partly) in English.
STALE_NOTE = "This part is shown in English while its translation is being updated."
#: The set-up cell's language argument in the English lessons.
ENGLISH_SETUP = 'language="en"'


def stale_note(language: str) -> str:
    return f"> *{translator(language)(STALE_NOTE)}*"


def localize(english: nbformat.NotebookNode, translations: dict[tuple[str, str], str],
             language: str, name: str, repo: links.Repository | None = None
             ) -> nbformat.NotebookNode:
    """Return the lesson in ``language``; ``translations`` maps (cell id, English) to text.

    With ``repo``, the lesson's badges cell opens this language's copy of the lesson.
    """
    notebook = copy.deepcopy(english)
    notebook.metadata["course"] = {"language": language, "source": f"notebooks/en/{name}.ipynb"}
    for index, cell in enumerate(notebook.cells):
        if cell.get("id") == links.BADGES_CELL:
            if repo is not None:
                notebook.cells[index] = links.badges_cell(repo, language, name)
        elif cell.cell_type == "markdown":
            texts, stale = [], False
            for block in split_markdown(cell.source):
                translated = translations.get((cell.id, block.text)) if block.translatable else None
                stale |= block.translatable and translated is None
                texts.append(translated if translated is not None else block.text)
            if stale:
                texts.insert(0, stale_note(language))
            cell.source = join_blocks(texts)
        elif cell.cell_type == "code" and cell.id == SETUP_CELL:
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


def build(root: Path, languages: list[str] | None = None) -> list[Path]:
    """Write notebooks/<lang>/NN_name.ipynb for every lesson and language; return the paths."""
    catalogs.check_locale_folders(root)
    repo = links.repository(root, required=False)
    written = []
    for language in languages or list(catalogs.LANGUAGES):
        for name in catalogs.lessons(root):
            english = read_lesson(root / "notebooks" / "en" / f"{name}.ipynb")
            path = catalogs.catalog_path(root, language, name)
            found = translations_of(catalogs.read_catalog(path)) if path.exists() else {}
            target = root / "notebooks" / language / f"{name}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(localize(english, found, language, name, repo), target)
            written.append(target)
    return written
