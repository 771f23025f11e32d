"""binder/ builds what CI tests: the same pins, the same Python, the same variables.

Docker cannot run here, so mybinder.org's build is not reproduced. Instead these tests
prove its inputs equal what CI installs from requirements.txt and then tests.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from course_helpers import languages, runtime
from course_tools import binder

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"
LAB_LANGUAGE_PACKS = [e.lab_language_pack for e in languages.ALL if e.lab_language_pack]


def binder_environment() -> dict:
    return yaml.safe_load((BINDER / "environment.yml").read_text(encoding="utf-8"))


def pip_section(environment: dict) -> list[str]:
    [pip] = [d["pip"] for d in environment["dependencies"] if isinstance(d, dict)]
    return pip


def test_binder_pins_are_exactly_the_pins_ci_installs():
    requirements = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    assert pip_section(binder_environment()) == binder.pins(requirements)
    assert binder.sync(ROOT, check=True) == [], "run 'course binder' and commit the result"


def test_the_pins_cover_the_stack_and_the_interface_languages():
    names = {re.split(r"[=<>!~ ;]", pin)[0].lower() for pin in pip_section(binder_environment())}
    for package in (
        "tensorflow",
        "tf-agents",
        "dm-reverb",
        "gym",
        "pybullet",
        "jupyterlab",
        *LAB_LANGUAGE_PACKS,
    ):
        assert package in names, package


def test_requirements_in_asks_for_the_language_pack_of_every_course_language():
    """languages.ALL names the packs; requirements.in, which no code reads, must list them."""
    requirements = (ROOT / "requirements.in").read_text(encoding="utf-8").split()
    assert set(LAB_LANGUAGE_PACKS) <= set(requirements)
    assert len(LAB_LANGUAGE_PACKS) == len(languages.TRANSLATED)


def test_binder_and_local_set_ups_use_the_same_python():
    dependencies = binder_environment()["dependencies"]
    assert f"python={binder.PYTHON}" in dependencies
    assert re.search(
        rf"^PYTHON \?= python{re.escape(binder.PYTHON)}$", (ROOT / "Makefile").read_text(), re.M
    )
    assert (
        f"python={binder.PYTHON}"
        in yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    )


def test_post_build_installs_the_helpers_without_resolving_anything_else():
    script = BINDER / "postBuild"
    assert os.access(script, os.X_OK), "mybinder.org runs postBuild only if it is executable"
    commands = [
        line
        for line in script.read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert "python -m pip install --no-cache-dir --no-deps -e ." in commands


def test_start_sets_the_variables_the_lessons_need_then_starts_jupyter():
    script = BINDER / "start"
    assert os.access(script, os.X_OK)
    exported: dict[str, str] = {}
    for line in script.read_text().splitlines():
        if line.startswith("export "):
            for item in shlex.split(line)[1:]:
                name, value = item.split("=", 1)
                exported[name] = value
    exported.pop("JUPYTER_CONFIG_PATH")  # the learners' JupyterLab: the next test
    assert exported == runtime.RUNTIME_VARIABLES
    assert script.read_text().rstrip().endswith('exec "$@"')


# Starts a Jupyter kernel or server: a `notebook` test.
@pytest.mark.notebook
def test_binder_starts_jupyterlab_without_nbgraders_instructor_tools():
    """mybinder.org runs binder/start in the repository root before JupyterLab."""
    probe = (
        "from jupyterlab_server.config import get_page_config; "
        "print(sorted(get_page_config([], None).get('disabledExtensions', [])))"
    )
    shown = subprocess.run(
        [str(BINDER / "start"), sys.executable, "-c", probe],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "JUPYTER_CONFIG_PATH": ""},
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == str(
        sorted(
            [
                "@jupyter/nbgrader:course-list",
                "@jupyter/nbgrader:create-assignment",
                "@jupyter/nbgrader:formgrader",
            ]
        )
    )


def test_the_local_conda_environment_installs_the_same_lock():
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    assert "-r requirements.txt" in pip


def test_pins_keep_environment_markers_and_drop_comments():
    text = (
        "# header\nappnope==1.0.0 ; sys_platform == 'darwin'  # via ipykernel\n"
        "gym==0.23.0              # via -r requirements.in\n\n-e .\n"
    )
    assert binder.pins(text) == ["appnope==1.0.0 ; sys_platform == 'darwin'", "gym==0.23.0"]


def test_jupyterlab_offers_its_interface_in_every_course_language():
    """The language packs in the pins register with JupyterLab (Settings > Language)."""
    from jupyterlab_server.translation_utils import get_language_packs

    packs, problems = get_language_packs("en")
    assert {entry.lab_locale for entry in languages.ALL[1:]} <= set(packs), problems
