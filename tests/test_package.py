"""The package a lesson imports: every public name resolves, and importing it is light."""

from __future__ import annotations

import subprocess
import sys

import pytest

import course_helpers

pytestmark = pytest.mark.unit


def test_every_public_name_resolves_to_what_the_lessons_call():
    assert set(course_helpers.__all__) == {
        *course_helpers._EXPORTS,
        *course_helpers._SUBMODULES,
        "progress",
        "progress_observer",
    }
    for name in course_helpers.__all__:
        assert getattr(course_helpers, name) is not None
    assert callable(course_helpers.progress) and callable(course_helpers.setup)


def test_importing_the_package_imports_nothing_heavy():
    probe = (
        "import sys, course_helpers; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'matplotlib', 'numpy', 'tensorflow', 'tqdm', 'nbformat', 'pygame'}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_the_wheel_a_colab_learner_installs_holds_the_data_the_lessons_read(tmp_path):
    """Colab installs the helpers from the repository's archive, as a wheel: the catalogs,
    lesson 2's measured runs and lesson 3's trained policy must be in it, or the lessons
    fail there only."""
    import shutil
    import subprocess
    import sys
    import zipfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    # Built from a copy: setuptools builds in place (build/, *.egg-info), and stale files
    # left there could slip into a later wheel.
    source = tmp_path / "source"
    shutil.copytree(
        root / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (root / name).exists():
            shutil.copy(root / name, source / name)
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(source),
        ],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    policy = "course_helpers/trained_policies/03_sac_minitaur/"
    for needed in (
        policy + "about.json",
        policy + "policy/saved_model.pb",
        policy + "policy/policy_specs.pbtxt",
        policy + "policy/variables/variables.index",
        policy + "policy/variables/variables.data-00000-of-00001",
        "course_helpers/measurements/02_dqn_cartpole.json",
        "course_helpers/locale/fr/LC_MESSAGES/course_helpers.po",
    ):
        assert needed in names, needed
