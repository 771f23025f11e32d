"""The helpers speak the lesson's language: set-up line, tables, progress bars, plots."""

from __future__ import annotations

import ast
import importlib
import io
import os
import re
import string
import subprocess
import sys
from pathlib import Path

import nbformat
import polib
import pytest

import course_helpers as course
from course_helpers import i18n
from course_helpers.languages import TRANSLATED

ROOT = Path(__file__).resolve().parents[1]
CATALOGS = {
    lang: ROOT / "src/course_helpers/locale" / lang / "LC_MESSAGES/course_helpers.po"
    for lang in TRANSLATED
}


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    i18n.set_language("en")


def strings_sent_to_gettext() -> set[str]:
    """Literals the helpers and the tooling pass to gettext(), and labels the lessons pass
    to the helpers. (The tooling writes to learners too: badges, feedback, the website.)"""
    found: set[str] = set()
    for path in sorted((ROOT / "src").glob("course_*/**/*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(
                node.func, "id", getattr(node.func, "attr", "")
            ) in ("gettext", "gettext_noop", "_"):
                found.update(
                    a.value
                    for a in node.args
                    if isinstance(a, ast.Constant) and isinstance(a.value, str)
                )
            # Labels given to progress() inside the package (e.g. "Filming").
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", "") == "progress"
                and len(node.args) > 1
            ):
                label = node.args[1]
                if isinstance(label, ast.Constant) and isinstance(label.value, str):
                    found.add(label.value)
            # Default titles, such as plot_returns', which the plot passes to gettext.
            if isinstance(node, ast.FunctionDef):
                arguments = node.args.args + node.args.kwonlyargs
                defaults = [*node.args.defaults, *node.args.kw_defaults]
                for argument, default in zip(arguments[::-1], defaults[::-1]):
                    if (
                        argument.arg == "title"
                        and isinstance(default, ast.Constant)
                        and isinstance(default.value, str)
                    ):
                        found.add(default.value)
    # The units progress bars count in, which progress() passes to gettext by variable.
    from course_helpers.progress import POSTFIX_LABELS, UNITS

    found.update(UNITS)
    found.update(POSTFIX_LABELS.values())
    # The website's alternative texts, which it passes to gettext by variable.
    from course_tools import site

    found.update(site.ALT_BY_CALL.values(), site.ALT_BY_CELL.values())
    # ...and the themes' interface texts that the site translates for them.
    found.update(*site.THEME_TEXTS.values(), site.COPY_BUTTON_TEXTS.values())
    # The comments and docstrings of lesson 4's jobs, which the lesson shows translated.
    from course_helpers.distributed import JOBS, listing

    for job in JOBS:
        found.update(listing.texts(importlib.import_module(f"course_helpers.distributed.{job}")))
    # argparse's own words in the jobs' --help and errors, which argparse passes to gettext.
    from course_helpers.distributed.job import ARGPARSE_TEXTS

    found.update(ARGPARSE_TEXTS)
    for lesson in (ROOT / "notebooks/en").glob("*.ipynb"):
        for cell in nbformat.read(lesson, 4).cells:
            if cell.cell_type == "code":
                found.update(
                    re.findall(r'course\.progress(?:_observer)?\([^"]*"([^"]+)"', cell.source)
                )
                found.update(re.findall(r'title="([^"]+)"', cell.source))
    return found


@pytest.mark.parametrize("language", CATALOGS)
def test_each_catalog_translates_every_string_the_helpers_show(language):
    catalog = polib.pofile(str(CATALOGS[language]))
    translated = {e.msgid for e in catalog.translated_entries()}
    missing = strings_sent_to_gettext() - translated
    assert not missing, (
        f"{CATALOGS[language].name} ({language}) lacks translations for {sorted(missing)}"
    )


@pytest.mark.parametrize("language", CATALOGS)
def test_translations_keep_every_placeholder(language):
    fields = lambda text: sorted(f for _, f, _, _ in string.Formatter().parse(text) if f)
    for entry in polib.pofile(str(CATALOGS[language])):
        assert fields(entry.msgstr) == fields(entry.msgid), f"{language}: {entry.msgid!r}"


def test_setup_in_french_prints_the_runtime_lines_in_french(monkeypatch):
    monkeypatch.delenv("COURSE_RUNTIME", raising=False)
    monkeypatch.setenv("COURSE_REPLAY", "inprocess")
    ready, replay = str(course.setup(language="fr")).splitlines()
    assert ready.startswith(
        "Tout est prêt sur cet ordinateur\u00a0: rendu avec le pilote vidéo factice"
    )
    assert replay.startswith("Tampons de rejeu\u00a0: un substitut de Reverb")


def test_progress_bars_and_plots_follow_the_lesson_language():
    course.setup(language="pt-br")
    assert course.progress(2, "Training", file=io.StringIO()).desc == "Treinamento"
    ax = course.plot_returns([0, 1], [1.0, 2.0], title="DQN on CartPole-v0", target=195)
    assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == (
        "DQN no CartPole-v0",
        "Passo de treinamento",
        "Retorno médio",
    )
    legend = ax.get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == ["retorno médio", "meta (195)"]


def test_the_hyperparameter_table_follows_the_lesson_language(monkeypatch):
    monkeypatch.setenv("COURSE_QUICK", "1")
    course.setup(language="es")
    table = repr(course.hyperparameters(num_iterations=20_000, quick=dict(num_iterations=300)))
    assert table.splitlines() == [
        "Modo rápido ACTIVADO: los valores marcados abajo se han reducido para una ejecución rápida.",
        "num_iterations  300  modo rápido (valor completo: 20\u00a0000)",
    ]


def test_english_needs_no_catalog_and_shows_the_text_as_written():
    course.setup(language="en")
    assert course.progress(1, "Training", file=io.StringIO()).desc == "Training"


def test_an_unknown_language_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match="Unknown language 'de'. Choose one of: en, pt-br, es, fr"):
        course.setup(language="de")


def test_errors_a_learner_meets_are_in_the_lesson_language():
    from course_helpers import environments

    course.setup(language="es")
    with pytest.raises(
        ValueError, match="Entorno desconocido: 'CartPol-v0'. ¿Quisiste decir 'CartPole-v0'"
    ):
        environments.load("CartPol-v0")
    course.setup(language="fr")
    with pytest.raises(ValueError, match="Il n’y a rien à tracer"):
        course.plot_returns([], [])


def _job(module: str, *args: str, language: str, tmp_path: Path) -> subprocess.CompletedProcess:
    environment = {**os.environ, "COURSE_LANGUAGE": language, "TMPDIR": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "-m", f"course_helpers.distributed.{module}", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )


def test_a_jobs_help_is_in_the_launchers_language_argparse_words_included(tmp_path):
    result = _job("collect", "--help", language="fr", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("utilisation\u00a0: ")
    assert "Un job de collecte d’une exécution distribuée de SAC." in result.stdout
    assert "afficher ce message d’aide et quitter" in result.stdout
    assert "le numéro de ce job de collecte" in result.stdout
    assert not list(tmp_path.glob("course-argparse-*")), "the compiled catalog was left behind"


def test_a_jobs_command_line_error_is_in_the_launchers_language(tmp_path):
    result = _job("train", language="es", tmp_path=tmp_path)
    assert result.returncode == 2
    assert "train.py: error: se requieren los siguientes argumentos: --root-dir, --address" in (
        result.stderr
    )
    result = _job("server", "--root-dir", "run", "--port", "x", language="pt-br", tmp_path=tmp_path)
    assert "server.py: erro: argumento --port: valor int inválido: 'x'" in result.stderr


def test_a_jobs_help_in_english_is_argparses_own(tmp_path):
    result = _job("evaluate", "--help", language="en", tmp_path=tmp_path)
    assert result.stdout.startswith("usage: ")
    assert "The evaluator of a distributed SAC run." in result.stdout
    assert "the run's folder, shared by all jobs" in result.stdout
