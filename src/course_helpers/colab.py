"""Where a lesson runs, and what a Colab runtime must install before the lesson can.

Binder and local set-ups install the pinned stack before the notebook opens (Python 3.11,
TensorFlow 2.15, tf-agents 0.19, dm-reverb 0.14). Colab starts from its own, newer
stack: Python 3.12 or later, TensorFlow 2.20 and Keras 3, with no tf-agents. There,
:func:`course_helpers.setup` installs the few packages the lessons still need, in the
way that works on that stack (tf-agents with ``--no-deps``, since its own pins ask for
TensorFlow 2.15 and a pygame that no longer builds), quietly, with a progress bar.
Reverb cannot be installed there at all; :mod:`course_helpers.replay` stands in for it.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from packaging.requirements import Requirement
from packaging.version import Version

from course_helpers import i18n

#: Forces the runtime seen by :func:`detect_runtime`; CI sets ``colab`` to rehearse a
#: Colab session on a machine that only looks like one.
RUNTIME_VARIABLE = "COURSE_RUNTIME"
RUNTIMES = ("colab", "binder", "local")


def detect_runtime() -> str:
    """``colab``, ``binder`` or ``local``: where this kernel runs."""
    forced = os.environ.get(RUNTIME_VARIABLE, "").strip().lower()
    if forced:
        if forced not in RUNTIMES:
            raise ValueError(
                f"{RUNTIME_VARIABLE}={forced!r} is not a runtime this course knows. "
                f"Use one of: {', '.join(RUNTIMES)}, or unset it to detect the runtime."
            )
        return forced
    if "google.colab" in sys.modules or importlib.util.find_spec("google.colab") is not None:
        return "colab"
    # mybinder.org's launcher puts these in every session's environment.
    if "BINDER_LAUNCH_HOST" in os.environ or "BINDER_REPO_URL" in os.environ:
        return "binder"
    return "local"


@dataclass(frozen=True)
class Package:
    """One package the lessons need on Colab, and how to install it there."""

    requirement: str
    #: Install without the package's own dependencies (their pins conflict with Colab's).
    no_deps: bool = False

    @property
    def name(self) -> str:
        return Requirement(self.requirement).name

    def is_satisfied(self) -> bool:
        requirement = Requirement(self.requirement)
        try:
            installed = importlib.metadata.version(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            return False
        return requirement.specifier.contains(Version(installed), prereleases=True)


#: What the lessons need on top of Colab's own stack. The versions of tf-agents, gym,
#: gin-config and pybullet are those of requirements.txt (a test keeps them equal).
COLAB_PACKAGES: tuple[Package, ...] = (
    # tf-agents 0.19 pins TensorFlow 2.15 (not installable on Python 3.12) and pygame
    # 2.1.3 (does not build there). Its code runs on TensorFlow 2.20 with legacy Keras.
    Package("tf-agents==0.19.0", no_deps=True),
    # The tf-agents dependencies that Colab does not bring itself.
    Package("gin-config==0.5.0"),
    Package("gym==0.23.0"),
    # setuptools 82 removed pkg_resources, which gym and pybullet_envs import.
    Package("setuptools<82"),
)

#: Packages one lesson needs; a lesson asks for them with ``setup(needs=[...])``.
LESSON_PACKAGES: dict[str, Package] = {
    "pybullet": Package("pybullet==3.2.7"),
}


def missing_packages(needs: Iterable[str] = ()) -> list[Package]:
    """The packages a Colab lesson still lacks, tf-keras included, in install order."""
    wanted = list(COLAB_PACKAGES)
    for name in needs:
        if name not in LESSON_PACKAGES:
            raise ValueError(
                f"setup(needs=...) got {name!r}; the lessons can ask for: "
                f"{', '.join(LESSON_PACKAGES)}."
            )
        wanted.append(LESSON_PACKAGES[name])
    keras = _tf_keras_package()
    if keras is not None:
        wanted.insert(0, keras)
    # --no-deps installs go last: pip checks every earlier install against tf-agents'
    # outdated pins and would print a (harmless) conflict report.
    wanted.sort(key=lambda package: package.no_deps)
    return [package for package in wanted if not package.is_satisfied()]


def _tf_keras_package() -> Package | None:
    """tf-keras of the installed TensorFlow's minor version: Keras 2 for tf-agents."""
    try:
        tensorflow = Version(importlib.metadata.version("tensorflow"))
    except importlib.metadata.PackageNotFoundError:
        return None
    if (tensorflow.major, tensorflow.minor) < (2, 16):
        return None  # TensorFlow 2.15 and older ship Keras 2 themselves.
    return Package(f"tf-keras~={tensorflow.major}.{tensorflow.minor}.0")


def needs_source_build(package: Package) -> bool:
    """Whether pip will compile ``package`` here: pybullet has no wheel after Python 3.11."""
    return package.name == "pybullet" and sys.version_info >= (3, 12)


class InstallFailed(RuntimeError):
    """pip could not install a package the lesson needs."""


def install(packages: Sequence[Package], *, python: str = sys.executable) -> float:
    """Install ``packages`` with pip, quietly, behind one progress bar; returns seconds.

    pip's own output is kept back unless it fails: then the error names the package,
    shows the end of pip's output and the command to retry by hand.
    """
    from course_helpers.progress import progress

    started = time.monotonic()
    for package in packages:
        if needs_source_build(package):
            print(i18n.gettext(
                "{package} has no ready-made wheel for Python {version}, so pip compiles it "
                "from source. This takes several minutes (10 on two CPU cores, as Colab has); "
                "the bar below keeps counting while it works."
            ).format(package=package.requirement, version=_python_version()))
    with progress(len(packages), i18n.gettext("Installing for Colab"), unit="pkg") as bar:
        for package in packages:
            bar.set_postfix_str(package.requirement)
            _pip_install(package, python, bar)
            bar.update(1)
    importlib.invalidate_caches()
    return time.monotonic() - started


def _pip_install(package: Package, python: str, bar) -> None:
    command = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
               "--no-input", "--no-warn-script-location", package.requirement]
    if package.no_deps:
        command.insert(-1, "--no-deps")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    # Read pip's output in a thread so the bar can tick (elapsed time) while pip works.
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(process.stdout), daemon=True)
    reader.start()
    while process.poll() is None:
        bar.refresh()
        time.sleep(0.5)
    reader.join()
    if process.returncode != 0:
        tail = "".join(output[-15:]).rstrip()
        raise InstallFailed(i18n.gettext(
            "pip could not install {package} (exit code {code}). Its last lines:\n{tail}\n"
            "Run this in a cell to see everything: !{command}"
        ).format(package=package.requirement, code=process.returncode, tail=tail,
                 command=" ".join(command[2:]).replace(" --quiet", "")))


def _python_version() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"
