"""course site: how an executed lesson becomes a page, without building the site.

The whole build and the pages in a browser are tests/test_site.py (make test-site).
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import nbformat
import pytest

from course_tools import site

ROOT = Path(__file__).resolve().parents[1]

VIDEO = base64.b64encode(b"not really an mp4").decode()
#: What `course site execute` records beside a run.
RECORD = {
    "executed": "2026-11-25",
    "minutes": 27.25,
    "quick": False,
    "machine": {"processor": "AMD EPYC", "cores": 2, "python": "3.11.7"},
}


def executed_lesson(path, record=True):
    cells = [
        nbformat.v4.new_markdown_cell("[![Open in Colab](https://x/badge.svg)](https://x)"),
        nbformat.v4.new_markdown_cell("# A lesson\n\nSee [why](#why-fast)."),
        nbformat.v4.new_code_cell("record_video()"),
        nbformat.v4.new_markdown_cell('<a id="why-fast"></a>\n\n## Why this runs fast'),
    ]
    cells[0].id, cells[1].id, cells[2].id, cells[3].id = "badges", "intro", "video", "why-fast"
    cells[2].outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={
                "text/html": '<video width="480" controls autoplay loop muted>'
                f'<source src="data:video/mp4;base64,{VIDEO}" type="video/mp4"></video>'
            },
        )
    ]
    notebook = nbformat.v4.new_notebook(cells=cells)
    if record:
        notebook.metadata[site.RECORD_KEY] = RECORD
    nbformat.write(notebook, path)
    return path


def test_a_page_drops_the_badges_and_says_when_where_and_how_long_it_ran(tmp_path):
    source = executed_lesson(tmp_path / "02_demo.ipynb")
    target = tmp_path / "src" / "02_demo.ipynb"
    site.prepare_notebook(source, target, "fr", tmp_path / "extra" / "videos")
    cells = nbformat.read(target, as_version=4).cells
    assert [cell.id for cell in cells] == ["intro", "site-record", "video", "why-fast"]
    assert cells[1].source == (
        "*Ces sorties proviennent d’une exécution complète de ce notebook le 25 novembre 2026 "
        "(AMD EPYC, 2\u00a0cœurs, Python 3.11.7\u202f; 27,2\u00a0min).*"
    )


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("en", "on 25 November 2026 (AMD EPYC, 2 cores, Python 3.11.7; 27.2 min)"),
        ("es", "el 25 de noviembre de 2026 (AMD EPYC, 2 núcleos, Python 3.11.7; 27.2 min)"),
        ("pt-br", "em 25 de novembro de 2026 (AMD EPYC, 2 núcleos, Python 3.11.7; 27,2 min)"),
    ],
)
def test_the_record_writes_dates_and_decimals_as_the_languages_glossary_does(code, expected):
    assert expected in site._record_note(RECORD, code)


def test_videos_leave_the_page_for_files_that_load_only_when_played(tmp_path):
    source = executed_lesson(tmp_path / "02_demo.ipynb")
    videos = tmp_path / "extra" / "videos"
    site.prepare_notebook(source, tmp_path / "src" / "02_demo.ipynb", "es", videos)
    html = nbformat.read(tmp_path / "src" / "02_demo.ipynb", as_version=4).cells[2].outputs[0]
    assert html["data"]["text/html"] == (
        '<video controls preload="none" width="480" aria-label="Video del agente entrenado">'
        '<source src="videos/02_demo-video-1.mp4" type="video/mp4"></video>'
    )
    assert (videos / "02_demo-video-1.mp4").read_bytes() == b"not really an mp4"


def test_anchors_become_targets_named_after_the_lesson_and_links_follow(tmp_path):
    source = executed_lesson(tmp_path / "02_demo.ipynb")
    site.prepare_notebook(source, tmp_path / "src" / "02_demo.ipynb", "en", tmp_path / "videos")
    cells = nbformat.read(tmp_path / "src" / "02_demo.ipynb", as_version=4).cells
    assert "[why](#02_demo-why-fast)" in cells[0].source
    assert cells[-1].source.startswith("(02_demo-why-fast)=\n")


def test_an_execution_without_its_record_says_how_to_make_one(tmp_path):
    source = executed_lesson(tmp_path / "03_demo.ipynb", record=False)
    with pytest.raises(
        ValueError,
        match=r"03_demo.ipynb has no 'course_site' record.*course site execute 03_demo --lang pt-br",
    ):
        site.prepare_notebook(source, tmp_path / "out.ipynb", "pt-br", tmp_path / "videos")


def _lesson_that_fails_halfway(lesson, code, output, **_):
    """Stands in for ``lessons.run_lesson``: writes what ran so far, then fails, as it does."""
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("half")]), output)
    raise site.lessons.LessonFailed(
        f"{lesson} failed in cell 1; the executed notebook is in {output}"
    )


def test_a_run_that_fails_leaves_the_stored_run_as_it_was_and_keeps_its_copy(tmp_path, monkeypatch):
    stored = executed_lesson(tmp_path / "stored.ipynb")
    before = stored.read_bytes()
    monkeypatch.setattr(site.lessons, "run_lesson", _lesson_that_fails_halfway)
    with pytest.raises(site.lessons.LessonFailed, match=r"unfinished/fr/03_demo.ipynb"):
        site.execute(tmp_path, "03_demo", "fr", stored)
    assert stored.read_bytes() == before
    partial = site.unfinished_path(tmp_path, "fr", "03_demo")
    assert nbformat.read(partial, as_version=4).cells[0].source == "half"


def test_a_finished_run_replaces_the_stored_one_with_its_record(tmp_path, monkeypatch):
    stored = executed_lesson(tmp_path / "stored.ipynb")

    def finished(lesson, code, output, **_):
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("all")]), output)
        return output

    monkeypatch.setattr(site.lessons, "run_lesson", finished)
    assert site.execute(tmp_path, "03_demo", "fr", stored, quick=True) == stored
    notebook = nbformat.read(stored, as_version=4)
    assert notebook.cells[0].source == "all"
    assert notebook.metadata[site.RECORD_KEY]["quick"] is True
    assert not site.unfinished_path(tmp_path, "fr", "03_demo").exists()


def test_a_quick_run_says_the_agent_is_not_trained():
    record = {**RECORD, "minutes": 0.2, "quick": True}
    note = site._record_note(record, "pt-br")
    assert note.startswith(
        "Estas saídas vêm de uma execução deste notebook no modo rápido em 25 de novembro de 2026"
    )
    assert "0,2 min" in note and "não está treinado" in note


def test_the_home_page_lists_the_lessons_and_hides_the_toctree():
    page = site.home_page("fr", {"01_a": "Les tampons de rejeu", "02_b": "Q-learning profond"})
    assert page.startswith("# Apprentissage par renforcement avec TF-Agents\n")
    assert "| [Les tampons de rejeu](01_a.ipynb) |" in page
    assert "```{toctree}\n:hidden:\n:maxdepth: 1\n\n01_a\n02_b\n```" in page


def test_the_root_page_names_each_language_in_itself():
    page = site.root_page()
    assert '<a href="pt-br/index.html" lang="pt-br" hreflang="pt-br">Português (Brasil)</a>' in page
    assert 'const codes = ["en", "pt-br", "es", "fr"];' in page
    assert "http-equiv" not in page  # no redirect before the script has chosen


def test_a_stored_lesson_that_was_never_run_stops_the_build_with_the_command(tmp_path, monkeypatch):
    monkeypatch.setattr(site, "mathjax", lambda root: tmp_path)
    (tmp_path / "tex-chtml.js").write_text("")
    (tmp_path / "output" / "chtml" / "fonts" / "woff-v2").mkdir(parents=True)
    monkeypatch.setattr(site.lessons, "lesson_names", lambda root: ["03_sac_minitaur"])
    with pytest.raises(
        FileNotFoundError,
        match=r"fr/03_sac_minitaur.ipynb is missing.*course site execute 03_sac_minitaur --lang fr",
    ):
        site.build(tmp_path, ["fr"])


def test_a_picture_gets_its_alternative_text_in_the_pages_language(tmp_path):
    source = executed_lesson(tmp_path / "02_dqn_cartpole.ipynb")
    notebook = nbformat.read(source, as_version=4)
    notebook.cells[2].source = "course.plot_q_values(eval_steps, eval_q_values, bound=200);"
    notebook.cells[2].outputs.append(
        nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="})
    )
    nbformat.write(notebook, source)
    target = tmp_path / "src" / "02_dqn_cartpole.ipynb"
    site.prepare_notebook(source, target, "fr", tmp_path / "videos")
    cell = nbformat.read(target, as_version=4).cells[2]
    assert cell.metadata["mystnb"]["image"]["alt"] == (
        "Graphique des valeurs Q en fonction du pas d’entraînement."
    )


def test_a_picture_the_site_cannot_describe_stops_the_build_naming_the_cell(tmp_path):
    source = executed_lesson(tmp_path / "02_demo.ipynb")
    notebook = nbformat.read(source, as_version=4)
    notebook.cells[2].outputs.append(
        nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="})
    )
    nbformat.write(notebook, source)
    with pytest.raises(
        ValueError, match=r"02_demo.ipynb, cell 'video': a picture without alternative text"
    ):
        site.prepare_notebook(source, tmp_path / "out.ipynb", "en", tmp_path / "videos")


def test_english_pages_write_the_date_as_the_course_does():
    record = {**RECORD, "minutes": 25.8}
    assert site._record_note(record, "en") == (
        "These outputs come from a full run of this notebook on 25 November 2026 "
        "(AMD EPYC, 2 cores, Python 3.11.7; 25.8 min)."
    )


@pytest.mark.parametrize(
    "name", ["sbt-sidebar-nav.html", "toggle-primary-sidebar.html", "toggle-secondary-sidebar.html"]
)
def test_the_templates_that_translate_a_theme_label_are_the_themes_otherwise(name):
    import sphinx_book_theme

    theme = Path(sphinx_book_theme.__file__).parent / "theme" / "sphinx_book_theme"
    ours = (ROOT / "site" / "_templates" / name).read_text(encoding="utf-8")
    ours = re.sub(r"\{#-.*?-#\}\n", "", ours, count=1, flags=re.S)  # our header
    labels = re.findall(r"\{\{ _\('([^']+)'\) \}\}", ours)
    assert labels and set(labels) <= set(site.THEME_TEXTS["sphinx"])
    untranslated = re.sub(r"\{\{ _\('([^']+)'\) \}\}", r"\1", ours)
    assert untranslated == (theme / "components" / name).read_text(encoding="utf-8"), (
        f"sphinx-book-theme's components/{name} changed: copy it to site/_templates/{name} "
        "again, with its labels in {{ _('...') }}"
    )


def tqdm_widget(state, key, left, value, maximum, right, hidden=False):
    """A tqdm bar as JupyterLab saves it: an HBox of HTML, FloatProgress and HTML."""
    layout = {"display": "inline-flex", **({"visibility": "hidden"} if hidden else {})}
    state[f"{key}-layout"] = {"model_name": "LayoutModel", "state": layout}
    state[f"{key}-left"] = {"model_name": "HTMLModel", "state": {"value": left}}
    state[f"{key}-bar"] = {
        "model_name": "FloatProgressModel",
        "state": {"value": value, "max": maximum},
    }
    state[f"{key}-right"] = {"model_name": "HTMLModel", "state": {"value": right}}
    state[key] = {
        "model_name": "HBoxModel",
        "state": {
            "layout": f"IPY_MODEL_{key}-layout",
            "children": [f"IPY_MODEL_{key}-{part}" for part in ("left", "bar", "right")],
        },
    }
    return nbformat.v4.new_output(
        "display_data",
        data={
            "application/vnd.jupyter.widget-view+json": {"model_id": key, "version_major": 2},
            "text/plain": f"{left}   0%|          | 0/? [00:00<?, ?it/s]",
        },
    )


def test_progress_bars_become_the_line_tqdm_prints_and_the_page_loads_no_widget_script(tmp_path):
    source = executed_lesson(tmp_path / "02_demo.ipynb")
    notebook = nbformat.read(source, as_version=4)
    state: dict = {}
    notebook.cells[2].outputs = [
        # The widget's bar lags behind its text; the text's percentage is the last word.
        tqdm_widget(
            state,
            "train",
            "Training:\u2007100%",
            30.0,
            150.0,
            "\u2007150/150\u2007[00:07&lt;00:00]",
        ),
        tqdm_widget(state, "film", "Filming:\u2007", 1.0, 1.0, "\u20071001/?\u2007[00:42]"),
        tqdm_widget(state, "eval", "Evaluating:\u2007100%", 10.0, 10.0, "\u200710/10", hidden=True),
    ]
    notebook.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": state}}
    nbformat.write(notebook, source)
    target = tmp_path / "src" / "02_demo.ipynb"
    site.prepare_notebook(source, target, "en", tmp_path / "extra" / "videos")
    page = nbformat.read(target, as_version=4)
    assert [output["data"] for output in page.cells[2].outputs] == [
        {"text/plain": "Training: 100%|██████████| 150/150 [00:07<00:00]"},
        {"text/plain": "Filming:  1001/? [00:42]"},
    ]
    assert "widgets" not in page.metadata  # MyST-NB adds its CDN scripts only for widgets


def test_a_stored_run_shows_the_lessons_current_prose_and_keeps_its_outputs(tmp_path):
    source = executed_lesson(tmp_path / "03_demo.ipynb")
    lesson = nbformat.read(source, as_version=4)  # the lesson as corrected since the run
    for cell in lesson.cells:
        cell.outputs = [] if cell.cell_type == "code" else None
        if cell.id == "intro":
            cell.source = "# A lesson\n\nCorrected since the run. See [why](#why-fast)."
        if cell.id == "video":
            cell.source = "record_video(fps=60)  # code is never taken from the lesson"
    lesson.cells = [{k: v for k, v in c.items() if v is not None} for c in lesson.cells]
    current = tmp_path / "lesson.ipynb"
    nbformat.write(nbformat.from_dict(lesson), current)
    target = tmp_path / "src" / "03_demo.ipynb"
    site.prepare_notebook(source, target, "en", tmp_path / "videos", prose=current)
    cells = {cell.id: cell for cell in nbformat.read(target, as_version=4).cells}
    assert "Corrected since the run." in cells["intro"].source
    assert cells["video"].source == "record_video()" and cells["video"].outputs


def test_a_stored_run_keeps_the_words_of_a_link_to_a_section_added_since_it_ran(tmp_path):
    """The current prose may point to a section the lesson gained after the run was stored
    (lesson 3's "A run that survives a restart"): the stored run has no such section, so
    the link becomes its words, and links to sections it has stay links."""
    source = executed_lesson(tmp_path / "03_demo.ipynb")
    lesson = nbformat.read(source, as_version=4)
    for cell in lesson.cells:
        if cell.cell_type == "code":
            cell.outputs = []
        if cell.id == "intro":
            cell.source = "# A lesson\n\nSee [why](#why-fast) and [resuming](#resume)."
    added = nbformat.v4.new_markdown_cell('<a id="resume"></a>\n\n## Resuming')
    added.id = "resume-note"
    lesson.cells.append(added)
    current = tmp_path / "lesson.ipynb"
    nbformat.write(lesson, current)
    target = tmp_path / "src" / "03_demo.ipynb"
    site.prepare_notebook(source, target, "en", tmp_path / "videos", prose=current)
    intro = next(c for c in nbformat.read(target, as_version=4).cells if c.id == "intro")
    assert intro.source.endswith("See [why](#03_demo-why-fast) and resuming.")


def guide_project(root: Path) -> Path:
    (root / "pyproject.toml").write_text(
        '[tool.course]\nrepository = "o/lessons"\nbranch = "main"\n', encoding="utf-8"
    )
    (root / "notebooks" / "en").mkdir(parents=True)
    docs = root / "docs"
    (docs / "en").mkdir(parents=True)
    (docs / "fr").mkdir(parents=True)
    (docs / "en" / "learners.md").write_text(
        '<a id="learners"></a>\n\n# For learners\n\nSee [quick mode](#quick-mode), '
        "[lesson 2](../../notebooks/en/02_dqn_cartpole.ipynb), "
        "[its speed](../../notebooks/en/02_dqn_cartpole.ipynb#why-fast) and "
        "[grading](instructors.md#workflow).\n\n"
        '<a id="quick-mode"></a>\n\n## Quick mode\n\nFast.\n',
        encoding="utf-8",
    )
    (docs / "en" / "instructors.md").write_text(
        '<a id="instructors"></a>\n\n# For instructors\n\n'
        "The [bench](../../benchmarks/grading.py) and [learners](learners.md).\n\n"
        '<a id="workflow"></a>\n\n## The workflow\n\nGrade.\n',
        encoding="utf-8",
    )
    (docs / "fr" / "learners.md").write_text(
        '<a id="learners"></a>\n\n# Pour les apprenants\n\nVoir le [mode rapide](#quick-mode), '
        "[la leçon 2](../../notebooks/fr/02_dqn_cartpole.ipynb) et la "
        "[notation](../en/instructors.md#workflow).\n\n"
        '<a id="quick-mode"></a>\n\n## Mode rapide\n\nVite.\n',
        encoding="utf-8",
    )
    return root


def test_a_guide_page_links_through_sphinx_targets_and_the_english_site_where_untranslated(
    tmp_path,
):
    root = guide_project(tmp_path)
    site.prepare_guide(root, "en", "learners", tmp_path / "out" / "en.md")
    english = (tmp_path / "out" / "en.md").read_text(encoding="utf-8")
    assert english.startswith("(learners-learners)=\n\n# For learners")
    assert "[quick mode](#learners-quick-mode)" in english
    assert "[lesson 2](02_dqn_cartpole.ipynb)" in english
    assert "[its speed](#02_dqn_cartpole-why-fast)" in english  # the lesson's own target
    assert "[grading](#instructors-workflow)" in english
    site.prepare_guide(root, "en", "instructors", tmp_path / "out" / "instructors.md")
    instructors = (tmp_path / "out" / "instructors.md").read_text(encoding="utf-8")
    assert "[bench](https://github.com/o/lessons/blob/main/benchmarks/grading.py)" in instructors
    assert "[learners](learners.md)" in instructors
    site.prepare_guide(root, "fr", "learners", tmp_path / "out" / "fr.md")
    french = (tmp_path / "out" / "fr.md").read_text(encoding="utf-8")
    assert "[la leçon 2](02_dqn_cartpole.ipynb)" in french
    assert (
        '<a href="../en/instructors.html#instructors-workflow" hreflang="en">notation</a>' in french
    )


def test_a_guide_link_the_site_cannot_follow_stops_the_build_naming_the_file(tmp_path):
    root = guide_project(tmp_path)
    guide = root / "docs" / "en" / "learners.md"
    guide.write_text(guide.read_text() + "\nSee [this](elsewhere/page.md).\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"docs/en/learners.md: the link 'elsewhere/page.md'"):
        site.prepare_guide(root, "en", "learners", tmp_path / "out.md")


def test_the_home_page_lists_the_guides_and_marks_those_in_english(tmp_path):
    root = guide_project(tmp_path)
    assert site.guides_in(root, "en") == ["learners", "instructors"]
    assert site.guides_in(root, "fr") == ["learners"]
    page = site.home_page(
        "fr",
        {"01_demo": "Démo"},
        {"learners": "Pour les apprenants", "../en/instructors": "For instructors"},
    )
    assert "## Guides\n\n- [Pour les apprenants](learners.md)\n" in page
    assert (
        '- <a href="../en/instructors.html" hreflang="en" lang="en">For instructors</a> '
        "(en anglais)" in page
    )
    assert page.endswith("01_demo\nlearners\n```\n")  # the English guide is not in the toctree


def test_the_switcher_knows_which_pages_each_language_has(tmp_path):
    root = guide_project(tmp_path)
    settings = site.settings(root, "fr", tmp_path, tmp_path, tmp_path)
    assert settings["languages"]["en"]["pages"] == ["index", "learners", "instructors"]
    assert settings["languages"]["fr"]["pages"] == ["index", "learners"]
    template = (ROOT / "site" / "_templates" / "languages.html").read_text(encoding="utf-8")
    assert 'pagename if pagename in entry.pages else "index"' in template


def test_a_guide_link_to_a_section_a_stored_run_lacks_leads_to_the_lessons_page(tmp_path):
    root = guide_project(tmp_path)
    sources = tmp_path / "src"
    executed_lesson(tmp_path / "02_dqn_cartpole.ipynb")
    site.prepare_notebook(
        tmp_path / "02_dqn_cartpole.ipynb", sources / "02_dqn_cartpole.ipynb", "en", tmp_path / "v"
    )
    assert site.lesson_targets(sources) == {"02_dqn_cartpole-why-fast"}
    guide = root / "docs" / "en" / "learners.md"
    guide.write_text(
        guide.read_text(encoding="utf-8")
        + "\nSee [resuming](../../notebooks/en/02_dqn_cartpole.ipynb#resume).\n",
        encoding="utf-8",
    )
    site.prepare_guide(root, "en", "learners", tmp_path / "out.md", site.lesson_targets(sources))
    text = (tmp_path / "out.md").read_text(encoding="utf-8")
    assert "[its speed](#02_dqn_cartpole-why-fast)" in text
    assert "[resuming](02_dqn_cartpole.ipynb)" in text
