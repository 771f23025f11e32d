"""The Colab set-up: where a lesson runs, what is missing there, and installing it.

The real installs are rehearsed by the Colab-like CI profile (make test-colab). Here,
pip runs offline against a wheel made by the test, into a throw-away folder.
"""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

import pytest

from course_helpers import colab, runtime

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def no_forced_runtime(monkeypatch):
    for name in (colab.RUNTIME_VARIABLE, "BINDER_LAUNCH_HOST", "BINDER_REPO_URL"):
        monkeypatch.delenv(name, raising=False)


def test_a_plain_machine_is_local_and_mybinder_is_recognised(monkeypatch):
    assert colab.detect_runtime() == "local"
    monkeypatch.setenv("BINDER_LAUNCH_HOST", "https://mybinder.org/")
    assert colab.detect_runtime() == "binder"


def test_course_runtime_rehearses_colab_and_refuses_unknown_names(monkeypatch):
    monkeypatch.setenv("COURSE_RUNTIME", "colab")
    assert colab.detect_runtime() == "colab"
    monkeypatch.setenv("COURSE_RUNTIME", "kaggle")
    with pytest.raises(ValueError, match="COURSE_RUNTIME='kaggle'.*colab, binder, local"):
        colab.detect_runtime()


def test_the_pinned_stack_lacks_nothing_so_colab_set_up_installs_nothing():
    assert colab.missing_packages(["pybullet"]) == []


def test_a_lesson_can_only_ask_for_packages_the_course_knows():
    with pytest.raises(ValueError, match="needs=.*'mujoco'.*pybullet"):
        colab.missing_packages(["mujoco"])


def test_colab_versions_are_the_versions_ci_tests():
    locked = dict(re.findall(r"^([\w-]+)==(\S+)", (ROOT / "requirements.txt").read_text(), re.M))
    for package in (*colab.COLAB_PACKAGES, *colab.LESSON_PACKAGES.values()):
        pinned = re.fullmatch(r"([\w-]+)==(\S+)", package.requirement)
        if pinned:
            name, version = pinned.groups()
            assert locked.get(name) == version, f"{package.requirement} vs requirements.txt"


def test_tensorflow_2_16_and_later_get_tf_keras_of_the_same_minor_version(monkeypatch):
    real = colab.importlib.metadata.version
    monkeypatch.setattr(
        colab.importlib.metadata,
        "version",
        lambda name: "2.20.0" if name == "tensorflow" else real(name),
    )
    keras = colab._tf_keras_package()
    assert keras is not None
    assert keras.requirement == "tf-keras~=2.20.0"
    # The pinned stack has no tf-keras, so on such a Colab it would be installed first.
    assert [p.requirement for p in colab.missing_packages()] == ["tf-keras~=2.20.0"]


def test_tensorflow_2_15_needs_no_tf_keras():
    assert colab._tf_keras_package() is None  # the pinned stack has TF 2.15


def test_an_untested_tensorflow_is_named_with_the_newest_tested_and_what_to_do(monkeypatch):
    real = colab.importlib.metadata.version
    for found, expected in (("2.23.0", "newer than"), ("2.19.1", "older than")):
        monkeypatch.setattr(
            colab.importlib.metadata,
            "version",
            lambda name, v=found: v if name == "tensorflow" else real(name),
        )
        note = colab.untested_tensorflow_note()
        assert note is not None
        newest = colab.TESTED_TENSORFLOW[-1]
        assert f"TensorFlow {found}, {expected} the versions" in note
        assert ", ".join(colab.TESTED_TENSORFLOW) in note
        assert f"%pip install tensorflow=={newest}.* tf-keras=={newest}.*" in note
    monkeypatch.setattr(
        colab.importlib.metadata,
        "version",
        lambda name: f"{newest}.0" if name == "tensorflow" else real(name),
    )
    assert colab.untested_tensorflow_note() is None


def test_setup_on_colab_shows_the_untested_tensorflow_and_a_failed_install_repeats_it(monkeypatch):
    monkeypatch.setenv("COURSE_RUNTIME", "colab")
    monkeypatch.setattr(colab, "untested_tensorflow_note", lambda: "TensorFlow 9.9 is untested.")
    monkeypatch.setattr(colab, "missing_packages", lambda needs: [])
    assert str(runtime.setup()).endswith("\nTensorFlow 9.9 is untested.")

    def failing_install(packages):
        raise colab.InstallFailed("pip could not install tf-keras~=9.9.0.")

    monkeypatch.setattr(colab, "missing_packages", lambda needs: [colab.Package("tf-keras~=9.9.0")])
    monkeypatch.setattr(colab, "install", failing_install)
    with pytest.raises(colab.InstallFailed, match="tf-keras~=9.9.0.\nTensorFlow 9.9 is untested."):
        runtime.setup()


def test_a_build_without_numpy_does_not_count_as_installed(monkeypatch):
    pybullet = colab.LESSON_PACKAGES["pybullet"]
    assert pybullet.is_satisfied()  # the pinned stack's wheel has NumPy support
    monkeypatch.setattr(colab, "numpy_enabled", lambda module, python=None: False)
    assert not pybullet.is_satisfied()


def test_pybullet_is_compiled_only_after_python_3_11(monkeypatch):
    pybullet = colab.LESSON_PACKAGES["pybullet"]
    monkeypatch.setattr(colab.sys, "version_info", (3, 12, 0))
    assert colab.needs_source_build(pybullet)
    monkeypatch.setattr(colab.sys, "version_info", (3, 11, 9))
    assert not colab.needs_source_build(pybullet)


@pytest.fixture
def offline_index(tmp_path, monkeypatch):
    """A folder holding one tiny wheel; pip may look nowhere else and installs into site/."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    name = "course_demo_pkg"
    with zipfile.ZipFile(wheels / f"{name}-1.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr(f"{name}/__init__.py", "VALUE = 42\n")
        wheel.writestr(
            f"{name}-1.0.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: course-demo-pkg\nVersion: 1.0\n",
        )
        wheel.writestr(
            f"{name}-1.0.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        wheel.writestr(f"{name}-1.0.dist-info/RECORD", "")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    monkeypatch.setenv("PIP_TARGET", str(tmp_path / "site"))
    return tmp_path / "site"


def test_install_runs_pip_quietly_behind_one_progress_bar(offline_index, capsys):
    seconds = colab.install([colab.Package("course-demo-pkg==1.0", no_deps=True)])
    assert (offline_index / "course_demo_pkg" / "__init__.py").read_text() == "VALUE = 42\n"
    assert seconds > 0
    captured = capsys.readouterr()
    assert "Installing for Colab" in captured.err  # the bar
    assert "Successfully installed" not in captured.out + captured.err  # pip kept quiet


def test_a_failed_install_names_the_package_shows_pip_and_the_command_to_retry(offline_index):
    with pytest.raises(colab.InstallFailed) as failure:
        colab.install([colab.Package("course-missing-pkg==9.9")])
    message = str(failure.value)
    assert "pip could not install course-missing-pkg==9.9" in message
    assert "No matching distribution found" in message  # pip's own words
    assert "!pip install" in message and "course-missing-pkg==9.9" in message


def test_setup_on_a_colab_like_runtime_with_nothing_missing_says_where_it_runs(monkeypatch):
    monkeypatch.setenv("COURSE_RUNTIME", "colab")
    ready = runtime.setup()
    assert ready.place == "colab" and ready.installed == ()
    assert str(ready).startswith("Runtime ready on Colab: ")


def test_setup_reports_the_install_when_packages_were_missing(monkeypatch, offline_index):
    monkeypatch.setenv("COURSE_RUNTIME", "colab")
    demo = colab.Package("course-demo-pkg==1.0")
    monkeypatch.setattr(colab, "missing_packages", lambda needs: [demo])
    ready = runtime.setup(needs=["pybullet"])
    assert ready.installed == ("course-demo-pkg==1.0",)
    assert "Installed for Colab in " in str(ready) and "course-demo-pkg==1.0" in str(ready)


@pytest.fixture
def numpy_sdist(offline_index, tmp_path, monkeypatch):
    """A source-only package that, like pybullet, enables NumPy support only if its build
    can import numpy. Built wheels go to a throw-away wheel cache; the installed module is
    importable by the subprocess that checks it."""
    name = "course_demo_numpy"
    source = tmp_path / "sdist" / f"{name}-1.0"
    source.mkdir(parents=True)
    (source / "setup.py").write_text(
        "from setuptools import setup\n"
        "try:\n    import numpy\n    enabled = 1\nexcept ImportError:\n    enabled = 0\n"
        f"open('{name}.py', 'w').write(f'def isNumpyEnabled():\\n    return {{enabled}}\\n')\n"
        f"setup(name='course-demo-numpy', version='1.0', py_modules=['{name}'])\n"
    )
    (source / "PKG-INFO").write_text(
        "Metadata-Version: 2.1\nName: course-demo-numpy\nVersion: 1.0\n"
    )
    import tarfile

    wheels = Path(os.environ["PIP_FIND_LINKS"])
    with tarfile.open(wheels / f"{name}-1.0.tar.gz", "w:gz") as archive:
        archive.add(source, arcname=source.name)
    monkeypatch.setenv("COURSE_WHEEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PYTHONPATH", str(offline_index))
    return colab.Package("course-demo-numpy==1.0", needs_numpy=True, wheels_until=(3, 0))


def test_a_package_without_a_wheel_is_compiled_with_numpy_and_its_wheel_reused(numpy_sdist, capsys):
    colab.install([numpy_sdist])
    printed = capsys.readouterr()
    assert "has no ready-made wheel for Python" in printed.out
    assert "Compiling course-demo-numpy" in printed.err  # the compile bar
    assert colab.numpy_enabled("course_demo_numpy")
    cached = list(colab.wheel_cache().glob("course_demo_numpy-1.0-*.whl"))
    assert len(cached) == 1 and colab.wheel_cache().name.startswith("cp3")
    built_at = cached[0].stat().st_mtime_ns

    colab.install([numpy_sdist])  # a second runtime on the same machine
    printed = capsys.readouterr()
    assert "has no ready-made wheel" not in printed.out
    assert "Compiling" not in printed.err
    assert cached[0].stat().st_mtime_ns == built_at


def test_a_build_that_lacks_numpy_stops_the_set_up_with_what_to_do(numpy_sdist, monkeypatch):
    monkeypatch.setattr(colab, "numpy_enabled", lambda module, python=None: False)
    with pytest.raises(
        colab.InstallFailed, match="without NumPy support.*%pip uninstall -y course-demo-numpy"
    ):
        colab.install([numpy_sdist])


def test_the_untested_tensorflow_note_speaks_the_lesson_language(monkeypatch):
    from course_helpers import i18n

    real = colab.importlib.metadata.version
    monkeypatch.setattr(
        colab.importlib.metadata,
        "version",
        lambda name: "2.23.0" if name == "tensorflow" else real(name),
    )
    i18n.set_language("fr")
    try:
        note = colab.untested_tensorflow_note()
    finally:
        i18n.set_language("en")
    assert note is not None
    assert note.startswith("Cet environnement d’exécution a TensorFlow 2.23.0, plus récent que")
    assert "(Exécution > Redémarrer la session)" in note
