"""Catalogs keyed by cell id: what extract and update promise translators."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from course_tools.l10n import catalogs
from course_tools.l10n.units import join_blocks, lesson_units, split_markdown
from course_tools.lessons import NotebookError

LESSON = "01_demo"


def write_lesson(root: Path, cells: list[tuple[str, str, str]]) -> Path:
    """cells: (id, kind, source) with kind 'md' or 'code'."""
    nb = nbformat.v4.new_notebook()
    for cell_id, kind, source in cells:
        cell = (
            nbformat.v4.new_markdown_cell(source)
            if kind == "md"
            else nbformat.v4.new_code_cell(source)
        )
        cell.id = cell_id
        nb.cells.append(cell)
    path = root / "notebooks" / "en" / f"{LESSON}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


CELLS = [
    (
        "intro",
        "md",
        "# Replay buffers\n\nA buffer stores experience so training can reuse it.\n\n"
        "```python\nbuffer.add_batch(items)\n```",
    ),
    ("setup", "code", "import course_helpers as course"),
    ("api", "md", "## The API\n\nEvery buffer starts from a `data_spec`."),
    ("summary", "md", "## Summary\n\nBuffers store and replay experience."),
]


def make_project(root: Path, cells, languages: list[str] | None = None) -> Path:
    """A course in ``root`` with one lesson made of ``cells``, extracted and merged."""
    write_lesson(root, cells)
    catalogs.extract(root)
    catalogs.update(root, languages)
    return root


@pytest.fixture
def project(tmp_path):
    return make_project(tmp_path, CELLS, ["fr"])


def translate_everything(root: Path, language: str = "fr") -> None:
    path = catalogs.catalog_path(root, language, LESSON)
    catalog = catalogs.read_catalog(path)
    for entry in catalog:
        entry.msgstr = f"[{language}] {entry.msgid}"
    catalogs.write_catalog(catalog, path)


def entries(root: Path, language: str = "fr"):
    """(active entries by (cell id, English), obsolete entries) of the lesson's catalog."""
    catalog = catalogs.read_catalog(catalogs.catalog_path(root, language, LESSON))
    active = {(e.msgctxt, e.msgid): e for e in catalog if not e.obsolete}
    return active, [e for e in catalog if e.obsolete]


def test_markdown_splits_into_paragraphs_and_keeps_fenced_code_whole():
    text = "# Title\n\nFirst line\nsame paragraph.\n\n```python\na\n\nb\n```\n\nLast."
    blocks = split_markdown(text)
    assert [b.text for b in blocks] == [
        "# Title",
        "First line\nsame paragraph.",
        "```python\na\n\nb\n```",
        "Last.",
    ]
    assert [b.translatable for b in blocks] == [True, True, False, True]
    assert join_blocks([b.text for b in blocks]) == text


def test_a_fenced_block_without_a_language_is_words_to_translate_whole():
    text = "```\nenv -> driver\n\n  -> buffer\n```\n\n~~~text\nactor | learner\n~~~"
    blocks = split_markdown(text)
    assert [b.text for b in blocks] == [
        "```\nenv -> driver\n\n  -> buffer\n```",
        "~~~text\nactor | learner\n~~~",
    ]
    assert all(b.translatable for b in blocks)


def test_units_are_the_markdown_paragraphs_keyed_by_cell_id(project):
    units = lesson_units(nbformat.read(project / "notebooks/en" / f"{LESSON}.ipynb", 4))
    assert [(u.cell_id, u.text) for u in units] == [
        ("intro", "# Replay buffers"),
        ("intro", "A buffer stores experience so training can reuse it."),
        ("api", "## The API"),
        ("api", "Every buffer starts from a `data_spec`."),
        ("summary", "## Summary"),
        ("summary", "Buffers store and replay experience."),
    ]


def test_extract_writes_a_template_with_msgctxt_set_to_the_cell_id(project):
    text = catalogs.template_path(project, LESSON).read_text()
    assert 'msgctxt "api"\nmsgid "Every buffer starts from a `data_spec`."' in text
    assert "import course_helpers" not in text, "code cells are not translated"
    assert "add_batch" not in text, "fenced code blocks are not translated"


def test_extract_is_reproducible_byte_for_byte(project):
    first = catalogs.template_path(project, LESSON).read_bytes()
    catalogs.extract(project)
    assert catalogs.template_path(project, LESSON).read_bytes() == first


def test_update_creates_an_untranslated_catalog_for_each_lesson(project):
    rows = [s for s in catalogs.status(project) if s.language == "fr"]
    assert [(s.translated, s.fuzzy, s.untranslated) for s in rows] == [(0, 0, 6)]


def test_a_changed_paragraph_becomes_fuzzy_and_keeps_its_old_translation(project):
    translate_everything(project)
    changed = [
        (i, k, s.replace("starts from a `data_spec`", "always starts from a `data_spec`"))
        for i, k, s in CELLS
    ]
    write_lesson(project, changed)
    catalogs.extract(project)
    report = catalogs.update(project, ["fr"])[catalogs.catalog_path(project, "fr", LESSON)]
    active, _ = entries(project)
    entry = active[("api", "Every buffer always starts from a `data_spec`.")]
    assert entry.fuzzy
    assert entry.msgstr == "[fr] Every buffer starts from a `data_spec`."
    assert entry.previous_msgid == "Every buffer starts from a `data_spec`."
    assert len(report.fuzzy) == 1 and not report.new
    untouched = [e for key, e in active.items() if key[0] != "api" or key[1] == "## The API"]
    assert all(not e.fuzzy and e.msgstr == f"[fr] {e.msgid}" for e in untouched)


def test_a_fuzzy_entry_keeps_its_previous_msgid_through_later_updates(project):
    translate_everything(project)
    write_lesson(project, [(i, k, s.replace("starts", "always starts")) for i, k, s in CELLS])
    catalogs.extract(project)
    catalogs.update(project, ["fr"])
    first = catalogs.catalog_path(project, "fr", LESSON).read_bytes()
    catalogs.update(project, ["fr"])
    assert catalogs.catalog_path(project, "fr", LESSON).read_bytes() == first
    assert b'#| msgid "Every buffer starts from a `data_spec`."' in first


def test_a_removed_paragraph_becomes_obsolete_and_is_not_deleted(project):
    translate_everything(project)
    write_lesson(project, [c for c in CELLS if c[0] != "summary"])
    catalogs.extract(project)
    catalogs.update(project, ["fr"])
    _, obsolete = entries(project)
    assert {e.msgstr for e in obsolete} == {
        "[fr] ## Summary",
        "[fr] Buffers store and replay experience.",
    }
    assert "#~ msgid" in catalogs.catalog_path(project, "fr", LESSON).read_text()


def test_a_restored_paragraph_gets_its_obsolete_translation_back(project):
    translate_everything(project)
    write_lesson(project, [c for c in CELLS if c[0] != "summary"])
    catalogs.extract(project)
    catalogs.update(project, ["fr"])
    write_lesson(project, CELLS)
    catalogs.extract(project)
    catalogs.update(project, ["fr"])
    active, obsolete = entries(project)
    assert active[("summary", "## Summary")].msgstr == "[fr] ## Summary" and not obsolete


def test_a_new_paragraph_is_untranslated(project):
    translate_everything(project)
    write_lesson(project, [*CELLS, ("exercises", "md", "## Exercises")])
    catalogs.extract(project)
    catalogs.update(project, ["fr"])
    active, _ = entries(project)
    assert active[("exercises", "## Exercises")].msgstr == ""


def test_a_translation_never_moves_to_a_similar_paragraph_of_another_cell(project):
    translate_everything(project)
    cells = [
        (i, k, s.replace("Buffers store and replay experience.", "Buffers keep what was seen."))
        for i, k, s in CELLS
    ]
    cells.insert(1, ("recap", "md", "## Recap\n\nBuffers store and replay experiences."))
    write_lesson(project, cells)
    catalogs.extract(project)
    catalogs.update(project, ["fr"])
    active, obsolete = entries(project)
    assert active[("recap", "Buffers store and replay experiences.")].msgstr == ""
    assert "[fr] Buffers store and replay experience." in {e.msgstr for e in obsolete}


def test_a_deleted_cell_and_a_new_one_elsewhere_are_not_a_rename(project):
    translate_everything(project)
    cells = [c for c in CELLS if c[0] != "summary"]
    cells.insert(1, ("recap", "md", "## Recap\n\nBuffers store and replay experiences."))
    write_lesson(project, cells)
    catalogs.extract(project)
    report = catalogs.update(project, ["fr"])[catalogs.catalog_path(project, "fr", LESSON)]
    active, _ = entries(project)
    assert active[("recap", "Buffers store and replay experiences.")].msgstr == ""
    assert not report.warnings


def test_a_renamed_cell_keeps_its_translations_as_fuzzy_with_a_warning(project):
    translate_everything(project)
    write_lesson(project, [("api-reference" if i == "api" else i, k, s) for i, k, s in CELLS])
    catalogs.extract(project)
    report = catalogs.update(project, ["fr"])[catalogs.catalog_path(project, "fr", LESSON)]
    active, _ = entries(project)
    entry = active[("api-reference", "Every buffer starts from a `data_spec`.")]
    assert entry.fuzzy and entry.msgstr == "[fr] Every buffer starts from a `data_spec`."
    assert entry.tcomment == catalogs.RENAMED.format(old="api")
    assert len(report.warnings) == 1
    assert "'api' seems to have been renamed to 'api-reference';" in report.warnings[0]


def test_a_renamed_and_edited_cell_keeps_its_suggestion_and_warns(project):
    translate_everything(project)
    cells = [
        ("api-reference", k, s.replace("starts from", "is built from")) if i == "api" else (i, k, s)
        for i, k, s in CELLS
    ]
    write_lesson(project, cells)
    catalogs.extract(project)
    report = catalogs.update(project, ["fr"])[catalogs.catalog_path(project, "fr", LESSON)]
    active, _ = entries(project)
    entry = active[("api-reference", "Every buffer is built from a `data_spec`.")]
    assert entry.fuzzy and entry.msgstr == "[fr] Every buffer starts from a `data_spec`."
    assert entry.previous_msgid == "Every buffer starts from a `data_spec`."
    assert "Cell renamed: this translation comes from cell 'api'" in entry.tcomment
    assert any(
        "'api' seems to have been renamed to 'api-reference' and its text edited" in w
        for w in report.warnings
    )


def test_the_rename_note_goes_once_the_translator_clears_the_fuzzy_flag(project):
    translate_everything(project)
    write_lesson(project, [("api-reference" if i == "api" else i, k, s) for i, k, s in CELLS])
    catalogs.extract(project)
    catalogs.update(project, ["fr"])
    path = catalogs.catalog_path(project, "fr", LESSON)
    catalog = catalogs.read_catalog(path)
    for entry in catalog:
        if entry.msgctxt == "api-reference":
            entry.flags.remove("fuzzy")
            entry.previous_msgid = None
    catalogs.write_catalog(catalog, path)
    catalogs.update(project, ["fr"])
    active, _ = entries(project)
    assert not active[("api-reference", "Every buffer starts from a `data_spec`.")].tcomment


def test_update_and_status_list_each_entry_to_work_on_with_its_cell_and_line(
    project, monkeypatch, capsys
):
    from course_tools import cli

    translate_everything(project)
    write_lesson(
        project,
        [
            *CELLS[:2],
            ("api", "md", "## The API\n\nEvery buffer is built from a `data_spec`."),
            CELLS[3],
            ("new", "md", "Fresh words."),
        ],
    )
    monkeypatch.chdir(project)
    assert cli.main(["l10n", "extract"]) == 0
    assert cli.main(["l10n", "update", "--lang", "fr"]) == 0
    listed = capsys.readouterr().out
    path = catalogs.catalog_path(project, "fr", LESSON)
    [fuzzy] = [e for e in catalogs.read_catalog(path) if e.fuzzy]
    line = f"locales/fr/{LESSON}.po:{fuzzy.linenum}: cell 'api', out of date (fuzzy): "
    assert line + "'Every buffer is built from a `data_spec`.'" in listed
    assert cli.main(["l10n", "status"]) == 0
    out = capsys.readouterr().out
    assert "fr: 2 entries to translate or review" in out and line in out
    assert "cell 'new', not translated yet: 'Fresh words.'" in out
    assert cli.main(["l10n", "status", "--counts"]) == 0
    assert "entries to translate" not in capsys.readouterr().out


def test_a_malformed_catalog_is_reported_with_its_file_and_line(project):
    path = catalogs.catalog_path(project, "fr", LESSON)
    lines = path.read_text().splitlines()
    lines.insert(20, 'msgid "unterminated')
    path.write_text("\n".join(lines))
    with pytest.raises(
        catalogs.CatalogError,
        match=rf"{path.name}, line 21: this string has no closing double quote",
    ):
        catalogs.update(project, ["fr"])


def test_a_catalog_folder_for_an_unknown_language_is_refused(project):
    (project / "locales" / "de").mkdir()
    with pytest.raises(catalogs.CatalogError, match=r"locales/de: unknown language 'de'"):
        catalogs.status(project)


def test_an_unknown_language_is_refused_by_update(project):
    with pytest.raises(catalogs.CatalogError, match="Unknown language 'it'"):
        catalogs.update(project, ["it"])


def test_a_duplicate_cell_id_is_reported_with_both_cells(tmp_path):
    """nbformat would silently rename the second id on reading; the tooling must not."""
    path = write_lesson(tmp_path, [CELLS[0], ("intro-2", "md", "Again.")])
    path.write_text(path.read_text().replace('"id": "intro-2"', '"id": "intro"'))
    with pytest.raises(NotebookError, match="cells 1 and 2 share the id 'intro'"):
        catalogs.extract(tmp_path)


def test_an_english_lesson_with_outputs_is_refused(tmp_path):
    path = write_lesson(tmp_path, CELLS)
    nb = nbformat.read(path, 4)
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", text="hi\n")]
    nbformat.write(nb, path)
    with pytest.raises(
        NotebookError, match=r"cell 2 \(id 'setup'\) still has outputs.*nbstripout --keep-id"
    ):
        catalogs.extract(tmp_path)


def test_course_l10n_commands_extract_update_and_report_status(project, monkeypatch, capsys):
    from course_tools import cli

    monkeypatch.chdir(project)
    assert cli.main(["l10n", "extract"]) == 0
    assert cli.main(["l10n", "update"]) == 0
    assert sorted(p.name for p in (project / "locales").iterdir()) == [
        "es",
        "fr",
        "pt-br",
        "templates",
    ]
    translate_everything(project, "fr")
    capsys.readouterr()
    assert cli.main(["l10n", "status"]) == 0
    table = capsys.readouterr().out
    assert "fr        01_demo                        6      0             0  100.0%" in table
    assert "es        01_demo                        0      0             6    0.0%" in table
    assert cli.main(["l10n", "status", "--min-percent", "100"]) == 1
    assert "es/01_demo is 0.0% translated, below 100%" in capsys.readouterr().err


def test_course_l10n_reports_a_broken_catalog_instead_of_crashing(project, monkeypatch, capsys):
    from course_tools import cli

    monkeypatch.chdir(project)
    catalogs.catalog_path(project, "fr", LESSON).write_text('msgid "a"\nmsgstr "b"\nnot gettext\n')
    assert cli.main(["l10n", "status"]) == 1
    error = capsys.readouterr().err
    assert "course l10n: locales/fr/01_demo.po, line 3: this line is not gettext" in error
