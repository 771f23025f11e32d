"""Localized notebooks: translated prose, English where the translation is behind, same code."""

from __future__ import annotations

import nbformat
import pytest

from course_helpers.languages import LANGUAGES
from course_tools.l10n import build, catalogs
from test_l10n_catalogs import LESSON, make_project, translate_everything, write_lesson

CELLS = [
    (
        "intro",
        "md",
        "# Replay buffers\n\nA buffer stores experience.\n\n```python\nbuffer.add_batch(x)\n```",
    ),
    ("setup", "code", 'import course_helpers as course\n\nprint(course.setup(language="en"))'),
    ("train", "code", "loss = agent.train(experience).loss  # one gradient step"),
    ("api", "md", "## The API\n\nEvery buffer starts from a `data_spec`."),
]


@pytest.fixture
def project(tmp_path):
    return make_project(tmp_path, CELLS)


def built(root, language="fr"):
    return nbformat.read(root / "notebooks" / language / f"{LESSON}.ipynb", 4)


def cell(notebook, cell_id):
    return next(c for c in notebook.cells if c.id == cell_id)


def test_translated_paragraphs_replace_the_english_ones(project):
    translate_everything(project, "fr")
    build.build(project, ["fr"])
    notebook = built(project)
    assert (
        cell(notebook, "api").source
        == "[fr] ## The API\n\n[fr] Every buffer starts from a `data_spec`."
    )
    assert "> *" not in cell(notebook, "api").source


def test_fenced_code_in_markdown_is_copied_untranslated(project):
    translate_everything(project, "fr")
    build.build(project, ["fr"])
    assert cell(built(project), "intro").source.endswith("```python\nbuffer.add_batch(x)\n```")


def test_code_cells_are_copied_and_the_setup_cell_differs_only_in_its_language(project):
    build.build(project, ["pt-br"])
    notebook = built(project, "pt-br")
    assert cell(notebook, "train").source == CELLS[2][2]
    assert cell(notebook, "setup").source == CELLS[1][2].replace(
        'language="en"', 'language="pt-br"'
    )
    assert [c.id for c in notebook.cells] == [c[0] for c in CELLS]


def test_an_untranslated_cell_shows_english_with_a_note_under_its_heading(project):
    build.build(project, ["es"])
    source = cell(built(project, "es"), "api").source
    assert source == (
        "## The API\n\n> *Este fragmento aparece en inglés: todavía no se ha traducido.*"
        "\n\nEvery buffer starts from a `data_spec`."
    )


def test_a_fuzzy_translation_is_not_shown(project):
    translate_everything(project, "fr")
    path = catalogs.catalog_path(project, "fr", LESSON)
    catalog = catalogs.read_catalog(path)
    next(e for e in catalog if e.msgid.startswith("Every buffer")).flags.append("fuzzy")
    catalogs.write_catalog(catalog, path)
    build.build(project, ["fr"])
    source = cell(built(project), "api").source
    assert source.startswith(
        "[fr] ## The API\n\n> *Ce passage s’affiche en anglais le temps que sa "
        "traduction soit mise à jour.*"
    )
    assert "[fr] ## The API" in source and "\nEvery buffer starts from a `data_spec`." in source


def test_building_twice_gives_byte_identical_notebooks(project):
    translate_everything(project, "fr")
    first = {p: p.read_bytes() for p in build.build(project)}
    second = {p: p.read_bytes() for p in build.build(project)}
    assert first == second and len(first) == 3


def test_a_setup_cell_without_the_language_argument_is_reported(project):
    write_lesson(
        project,
        [c if c[0] != "setup" else ("setup", "code", "print(course.setup())") for c in CELLS],
    )
    with pytest.raises(
        catalogs.CatalogError, match=r"cell 'setup': the set-up cell must pass language=\"en\""
    ):
        build.build(project, ["fr"])


def test_course_l10n_build_writes_every_language(project, monkeypatch, capsys):
    from course_tools import cli

    monkeypatch.chdir(project)
    assert cli.main(["l10n", "build"]) == 0
    assert sorted(p.parent.name for p in (project / "notebooks").glob("*/*.ipynb")) == sorted(
        LANGUAGES
    )


def test_the_light_notebook_writer_gives_nbformats_bytes_on_every_lesson():
    """course l10n writes notebooks without importing nbformat (it costs most of a second)."""
    from pathlib import Path

    from course_tools import notebook_json

    root = Path(__file__).resolve().parents[1]
    paths = sorted(root.glob("notebooks/*/[0-9][0-9]_*.ipynb"))
    assert len(paths) == 16  # four lessons in four languages
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert notebook_json.writes(notebook_json.reads(text)) == text
        assert nbformat.writes(nbformat.reads(text, as_version=4)) + "\n" == text


def test_course_l10n_commands_import_neither_nbformat_nor_matplotlib(tmp_path):
    """What makes a translator's command answer in well under a second."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    probe = (
        "import sys; from course_tools import cli; "
        "codes = [cli.main(['l10n', step]) for step in ('status', 'check')]; "
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & "
        "{'nbformat', 'jsonschema', 'matplotlib', 'tensorflow', 'numpy', 'tqdm'}); "
        "print(codes, heavy, file=sys.stderr)"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True)
    assert result.stderr.strip().splitlines()[-1].endswith("[]"), result.stderr[-2000:]
