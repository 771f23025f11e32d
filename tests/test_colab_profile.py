"""The Colab-like profiles test what the set-up cell installs on Colab, and nothing else.

ci/colab/requirements-3.13.txt and -3.12.txt stand for what Colab preinstalls; the
lessons' set-up cell (course_helpers.colab) installs the rest, and course_helpers itself
comes from the branch's zip with the dependencies pyproject.toml bounds. If these drift
apart, CI would test a Colab that learners never see: each test names the file to fix.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from course_helpers import colab

ROOT = Path(__file__).resolve().parents[1]
PROFILES = {
    "3.13": ROOT / "ci/colab/requirements-3.13.txt",
    "3.12": ROOT / "ci/colab/requirements-3.12.txt",
}


def locked(path: Path) -> dict[str, Version]:
    """name -> version of every pin in a lock written by uv pip compile."""
    return {
        name.lower(): Version(version)
        for name, version in re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", path.read_text(), re.M)
    }


def set_up_cell_packages() -> list[colab.Package]:
    return [*colab.COLAB_PACKAGES, *colab.LESSON_PACKAGES.values()]


def test_there_is_one_lock_per_colab_python_and_the_makefile_defaults_to_3_13():
    assert all(path.exists() for path in PROFILES.values())
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^COLAB_PYTHON\s*\?=\s*3\.13$", makefile, re.M)
    assert not (ROOT / "ci/colab/requirements.txt").exists(), "a stale lock of the old 3.11 profile"


@pytest.mark.parametrize("python", PROFILES)
def test_the_lock_has_none_of_what_the_set_up_cell_must_install(python):
    """Otherwise CI would find them installed and never run the set-up cell's pip."""
    pins = locked(PROFILES[python])
    installed_by_the_lesson = {"tf-agents", "gym", "gin-config", "pybullet", "dm-reverb"}
    assert not installed_by_the_lesson & set(pins), PROFILES[python].name


@pytest.mark.parametrize("python", PROFILES)
def test_every_version_the_set_up_cell_accepts_as_installed_is_the_locked_one(python):
    """A preinstalled package the set-up cell keeps (tensorboard, setuptools) is tested."""
    pins = locked(PROFILES[python])
    for package in set_up_cell_packages():
        if package.name in pins:
            assert Requirement(package.requirement).specifier.contains(pins[package.name]), (
                f"{PROFILES[python].name} locks {package.name} {pins[package.name]}, which the "
                f"set-up cell's {package.requirement!r} would replace (course_helpers/colab.py)"
            )


@pytest.mark.parametrize("python", PROFILES)
def test_tensorboard_is_in_the_lock_as_colab_preinstalls_it(python):
    assert "tensorboard" in locked(PROFILES[python])


@pytest.mark.parametrize("python", PROFILES)
def test_tf_keras_the_set_up_cell_picks_is_the_locked_one(python, monkeypatch):
    pins = locked(PROFILES[python])
    real = colab.importlib.metadata.version
    monkeypatch.setattr(
        colab.importlib.metadata,
        "version",
        lambda name: str(pins["tensorflow"]) if name == "tensorflow" else real(name),
    )
    keras = colab._tf_keras_package()
    assert keras is not None
    assert Requirement(keras.requirement).specifier.contains(pins["tf-keras"])


def test_the_tested_tensorflow_versions_are_those_of_the_locks():
    tested = sorted(
        {
            f"{v.major}.{v.minor}"
            for v in (locked(path)["tensorflow"] for path in PROFILES.values())
        },
        key=Version,
    )
    assert list(colab.TESTED_TENSORFLOW) == tested, "course_helpers/colab.py TESTED_TENSORFLOW"


def test_every_package_the_set_up_cell_installs_is_pinned_or_bounded():
    for package in set_up_cell_packages():
        assert package.is_bounded, (
            f"{package.requirement} has no upper bound (course_helpers/colab.py)"
        )
    assert colab.Package("tf-keras~=2.21.0").is_bounded
    assert not colab.Package("tensorboard>=2.15").is_bounded


def test_course_helpers_dependencies_are_bounded_and_hold_every_tested_version():
    """The lessons' first cell installs course_helpers from a zip, with these ranges."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    locks = {
        "requirements.txt": locked(ROOT / "requirements.txt"),
        **{path.name: locked(path) for path in PROFILES.values()},
    }
    for line in project["dependencies"]:
        requirement = Requirement(line)
        assert colab.Package(line).is_bounded, f"pyproject.toml: {line!r} needs an upper bound"
        for name, pins in locks.items():
            version = pins.get(requirement.name)
            assert version is not None, f"{name} lacks {requirement.name}"
            assert requirement.specifier.contains(version), (
                f"pyproject.toml's {line!r} excludes {requirement.name} {version} of {name}"
            )


def test_pybullet_must_be_built_with_numpy_support():
    """A build without NumPy returns flat camera images, and Minitaur's render fails."""
    assert colab.LESSON_PACKAGES["pybullet"].needs_numpy


def test_ci_runs_both_colab_profiles():
    """`make ci` must test the Colab learners open today (3.13) and the older runtime (3.12)."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^ci:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert recipe, "Makefile: the ci target has no recipe"
    for python in PROFILES:
        assert re.search(rf"test-colab COLAB_PYTHON={re.escape(python)}\b", recipe.group(1)), (
            f"Makefile: `make ci` does not run the Python {python} Colab-like profile"
        )
    assert "make ci" in (ROOT / ".ci/run").read_text()


def test_the_tooling_extra_is_bounded_and_holds_the_pinned_versions():
    """course-helpers[tools]: what the course command adds to the runtime's dependencies."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = locked(ROOT / "requirements.txt")
    tools = project["optional-dependencies"]["tools"]
    assert {Requirement(line).name for line in tools} >= {
        "nbformat",
        "nbclient",
        "uniseg",
        "nbgrader",
    }
    for line in tools:
        requirement = Requirement(line)
        assert colab.Package(line).is_bounded, f"pyproject.toml: {line!r} needs an upper bound"
        version = pins.get(requirement.name)
        assert version is not None and requirement.specifier.contains(version), line
