"""The real lessons and catalogs: consistent as committed, and stale-visible after an edit."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from course_helpers.languages import TRANSLATED
from course_tools.l10n import build, catalogs, check
from course_tools.lessons import lesson_names

ROOT = Path(__file__).resolve().parents[1]
NOTES = {
    "pt-br": "> *Este trecho aparece em inglês enquanto a tradução é atualizada.*",
    "es": "> *Este fragmento aparece en inglés mientras se actualiza su traducción.*",
    "fr": "> *Ce passage s’affiche en anglais le temps que sa traduction soit mise à jour.*",
}


def test_the_committed_localized_notebooks_are_up_to_date_and_consistent():
    assert check.check(ROOT) == []


@pytest.fixture
def copy_of_the_course(tmp_path):
    shutil.copytree(ROOT / "notebooks" / "en", tmp_path / "notebooks" / "en")
    shutil.copytree(ROOT / "locales", tmp_path / "locales")
    return tmp_path


def catalog_state(root: Path) -> dict:
    """(language, lesson, cell id, English) -> (translation, fuzzy) for every active entry."""
    state = {}
    for language in TRANSLATED:
        for lesson in lesson_names(root=root):
            path = catalogs.catalog_path(root, language, lesson)
            for e in catalogs.read_catalog(path):
                if not e.obsolete:
                    state[(language, lesson, e.msgctxt, e.msgid)] = (e.msgstr, e.fuzzy)
    return state


def test_editing_one_english_paragraph_makes_exactly_its_translations_stale(copy_of_the_course):
    root = copy_of_the_course
    lesson = root / "notebooks" / "en" / "02_dqn_cartpole.ipynb"
    notebook = nbformat.read(lesson, 4)
    cell = next(c for c in notebook.cells if c.id == "policies-note")
    old = next(p for p in cell.source.split("\n\n") if p.startswith("A common mistake"))
    new = old.replace("A common mistake", "A frequent mistake")
    cell.source = cell.source.replace(old, new)
    nbformat.write(notebook, lesson)
    before = catalog_state(root)
    fuzzy_before = {(r.language, r.lesson): r.fuzzy for r in catalogs.status(root)}

    catalogs.extract(root)
    catalogs.update(root)
    build.build(root)
    after = catalog_state(root)

    languages = [
        lang for lang in TRANSLATED if catalogs.catalog_path(root, lang, "02_dqn_cartpole").exists()
    ]
    for language in languages:
        translation, fuzzy = after[(language, "02_dqn_cartpole", "policies-note", new)]
        assert (
            fuzzy and translation == before[(language, "02_dqn_cartpole", "policies-note", old)][0]
        )
        built = nbformat.read(root / "notebooks" / language / "02_dqn_cartpole.ipynb", 4)
        source = next(c for c in built.cells if c.id == "policies-note").source
        assert NOTES[language] in source and new in source
        assert source.index(NOTES[language]) > source.index("## ")  # under the cell's heading
    changed = {key for key in after if before.get(key) != after[key]}
    assert changed == {
        (language, "02_dqn_cartpole", "policies-note", new) for language in languages
    }
    rows = {(r.language, r.lesson): r for r in catalogs.status(root)}
    # One more fuzzy entry per language than before the edit (the catalogs may already
    # hold others, waiting for a translator).
    assert all(
        rows[(language, "02_dqn_cartpole")].fuzzy == fuzzy_before[(language, "02_dqn_cartpole")] + 1
        for language in languages
    )
