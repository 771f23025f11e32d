"""Where a lesson runs, and what a Colab runtime must install before the lesson can.

Binder and local set-ups install the pinned stack before the notebook opens (Python 3.11,
TensorFlow 2.15, tf-agents 0.19, dm-reverb 0.14). Colab starts from its own, newer
stack: Python 3.13 by default (3.12 on its older runtime versions), TensorFlow 2.20 or
later and Keras 3, with no tf-agents. There, :func:`course_helpers.setup` installs the
few packages the lessons still need, in the way that works on that stack (tf-agents with
``--no-deps``, since its own pins ask for TensorFlow 2.15 and a pygame that no longer
builds; pybullet compiled against the runtime's NumPy), quietly, with a progress bar.
Reverb cannot be installed there at all; :mod:`course_helpers.replay` stands in for it.

Every version installed here is pinned or bounded, and tested by the Colab-like CI
profiles (``ci/colab/requirements-3.13.txt`` and ``-3.12.txt``); a test keeps this list
and those locks in agreement.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

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
                i18n.gettext(
                    "{variable}={value} is not a runtime this course knows. Use one of: "
                    "{runtimes}, or unset it to detect the runtime."
                ).format(
                    variable=RUNTIME_VARIABLE, value=repr(forced), runtimes=", ".join(RUNTIMES)
                )
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
    #: Must be built with NumPy support (pybullet: camera images as arrays, not flat tuples).
    needs_numpy: bool = False
    #: The newest Python the package publishes wheels for; pip compiles it after that.
    wheels_until: tuple[int, int] | None = None
    #: How many object files that compile makes: the compile bar counts up to it.
    compiled_files: int | None = None

    @property
    def name(self) -> str:
        return Requirement(self.requirement).name

    @property
    def module(self) -> str:
        """The name it is imported by (pybullet, tf_agents)."""
        return self.name.replace("-", "_")

    @property
    def is_bounded(self) -> bool:
        """Whether the requirement pins a version or sets an upper bound."""
        return any(
            spec.operator in ("==", "===", "~=", "<", "<=")
            for spec in Requirement(self.requirement).specifier
        )

    def installed_version(self) -> str | None:
        try:
            return importlib.metadata.version(self.name)
        except importlib.metadata.PackageNotFoundError:
            return None

    def is_satisfied(self) -> bool:
        installed = self.installed_version()
        if installed is None:
            return False
        if not Requirement(self.requirement).specifier.contains(
            Version(installed), prereleases=True
        ):
            return False
        return not self.needs_numpy or numpy_enabled(self.module)


def numpy_enabled(module: str, python: str = sys.executable) -> bool:
    """Whether ``module`` (pybullet) was compiled with NumPy support.

    Asked in a separate process, so that the kernel does not import pybullet (and print
    its build banner) during the set-up.
    """
    check = f"import sys, {module}; sys.exit(0 if {module}.isNumpyEnabled() else 3)"
    return subprocess.run([python, "-c", check], capture_output=True).returncode == 0


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
    Package("setuptools>=64,<82"),
    # TensorFlow 2.21 stopped installing TensorBoard, and tf-agents' summaries import it.
    # Colab preinstalls it; a runtime without it gets it here.
    Package("tensorboard>=2.15,<3"),
)

#: Object files pybullet 3.2.7's setup.py compiles on Linux (counted in its build folder).
PYBULLET_OBJECT_FILES = 267

#: Packages one lesson needs; a lesson asks for them with ``setup(needs=[...])``.
LESSON_PACKAGES: dict[str, Package] = {
    # pybullet 3.2.7 has wheels up to Python 3.11 only (bullet3 issue 4789).
    "pybullet": Package(
        "pybullet==3.2.7",
        needs_numpy=True,
        wheels_until=(3, 11),
        compiled_files=PYBULLET_OBJECT_FILES,
    ),
}

#: TensorFlow versions (major.minor) the Colab-like CI profiles test: 2.20 on Python 3.12
#: and 2.21 on Python 3.13. A test keeps this equal to ci/colab/requirements-*.txt.
TESTED_TENSORFLOW: tuple[str, ...] = ("2.20", "2.21")


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


def _tensorflow_version() -> Version | None:
    try:
        return Version(importlib.metadata.version("tensorflow"))
    except importlib.metadata.PackageNotFoundError:
        return None


def _tf_keras_package() -> Package | None:
    """tf-keras of the installed TensorFlow's minor version: Keras 2 for tf-agents."""
    tensorflow = _tensorflow_version()
    if tensorflow is None or (tensorflow.major, tensorflow.minor) < (2, 16):
        return None  # TensorFlow 2.15 and older ship Keras 2 themselves.
    return Package(f"tf-keras~={tensorflow.major}.{tensorflow.minor}.0")


def untested_tensorflow_note() -> str | None:
    """A line for the learner when this runtime's TensorFlow is not one the course tested.

    The lesson carries on: tf-keras of the same version usually exists and works. The
    line says which version was found, the newest tested, and how to get that one.
    """
    tensorflow = _tensorflow_version()
    if tensorflow is None or f"{tensorflow.major}.{tensorflow.minor}" in TESTED_TENSORFLOW:
        return None
    newest = TESTED_TENSORFLOW[-1]
    if tensorflow > Version(newest):
        note = i18n.gettext(
            "This runtime has TensorFlow {found}, newer than the versions this course was "
            "tested with on Colab ({tested}). The lesson carries on. If a cell fails, run "
            "{command} in a new cell, restart the session (Runtime > Restart session) and "
            "run the lesson again from the top."
        )
    else:
        note = i18n.gettext(
            "This runtime has TensorFlow {found}, older than the versions this course was "
            "tested with on Colab ({tested}). The lesson carries on. If a cell fails, run "
            "{command} in a new cell, restart the session (Runtime > Restart session) and "
            "run the lesson again from the top."
        )
    return note.format(
        found=tensorflow,
        tested=", ".join(TESTED_TENSORFLOW),
        command=f"%pip install tensorflow=={newest}.* tf-keras=={newest}.*",
    )


def needs_source_build(package: Package) -> bool:
    """Whether pip will compile ``package`` here: pybullet has no wheel after Python 3.11."""
    return package.wheels_until is not None and tuple(sys.version_info[:2]) > package.wheels_until


#: Minutes pybullet 3.2.7 took to compile here, on two CPU cores as Colab has, by Python
#: version (``course bench`` does not measure this; docs/en/measurements.md, "pybullet-compile", says how).
COMPILE_MINUTES: dict[str, int] = {"3.12": 4, "3.13": 4}

#: Where compiled wheels are kept, so that a second install on the same machine takes
#: seconds. Colab forgets it with the runtime; a folder on Google Drive does not.
WHEEL_CACHE_VARIABLE = "COURSE_WHEEL_CACHE"


def wheel_cache() -> Path:
    """The folder of wheels this course compiled, one subfolder per Python and NumPy."""
    root = os.environ.get(WHEEL_CACHE_VARIABLE, "").strip()
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "course_helpers" / "wheels"
    numpy = importlib.metadata.version("numpy").split(".")
    return base / f"cp{sys.version_info.major}{sys.version_info.minor}-numpy{numpy[0]}.{numpy[1]}"


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
        if needs_source_build(package) and _cached_wheel(package) is None:
            version = _python_version()
            print(
                i18n.gettext(
                    "{package} has no ready-made wheel for Python {version}, so pip compiles it "
                    "from source, with this runtime's NumPy. This takes about {minutes} minutes "
                    "on two CPU cores, as Colab has; the bar below counts the files compiled."
                ).format(
                    package=package.requirement,
                    version=version,
                    minutes=COMPILE_MINUTES.get(version, max(COMPILE_MINUTES.values())),
                )
            )
    with progress(len(packages), i18n.gettext("Installing for Colab"), unit="pkg") as bar:
        for package in packages:
            bar.set_postfix_str(package.requirement)
            if needs_source_build(package):
                wheel = _cached_wheel(package) or _compile_wheel(package, python, bar)
                _pip_install(
                    package,
                    python,
                    bar,
                    target=str(wheel),
                    options=["--no-deps", "--force-reinstall"],
                )
            else:
                _pip_install(package, python, bar)
            if package.needs_numpy and not numpy_enabled(package.module, python):
                raise InstallFailed(
                    i18n.gettext(
                        "{package} was installed without NumPy support, so its camera images "
                        "would come back as flat lists. Run {command} in a new cell, then "
                        "restart the session and run the lesson again from the top."
                    ).format(
                        package=package.requirement, command=f"%pip uninstall -y {package.name}"
                    )
                )
            bar.update(1)
    importlib.invalidate_caches()
    return time.monotonic() - started


def _pip_command(python: str, subcommand: str, *options: str) -> list[str]:
    return [
        python,
        "-m",
        "pip",
        subcommand,
        "--quiet",
        "--disable-pip-version-check",
        "--no-input",
        *options,
    ]


def _pip_install(
    package: Package, python: str, bar, *, target: str | None = None, options: Sequence[str] = ()
) -> None:
    command = _pip_command(python, "install", "--no-warn-script-location", *options)
    if package.no_deps and "--no-deps" not in options:
        command.append("--no-deps")
    command.append(target or package.requirement)
    _run_pip(package, command, bar)


def _run_pip(
    package: Package,
    command: list[str],
    bar,
    *,
    env: dict[str, str] | None = None,
    on_tick=None,
    retry: Sequence[str] | None = None,
) -> None:
    """Run pip behind ``bar``; on failure, show its last lines and ``retry`` (default: the command)."""
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    # Read pip's output in a thread so the bar can tick (elapsed time) while pip works.
    output: list[str] = []
    stdout = process.stdout
    assert stdout is not None  # stdout=PIPE
    reader = threading.Thread(target=lambda: output.extend(stdout), daemon=True)
    reader.start()
    while process.poll() is None:
        if on_tick is not None:
            on_tick()
        bar.refresh()
        time.sleep(0.5)
    reader.join()
    if process.returncode != 0:
        tail = "".join(output[-15:]).rstrip()
        shown = [part for part in (retry or command)[2:] if part != "--quiet"]
        raise InstallFailed(
            i18n.gettext(
                "pip could not install {package} (exit code {code}). Its last lines:\n{tail}\n"
                "Run this in a cell to see everything: !{command}"
            ).format(
                package=package.requirement,
                code=process.returncode,
                tail=tail,
                command=" ".join(shown),
            )
        )


def _cached_wheel(package: Package) -> Path | None:
    requirement = Requirement(package.requirement)
    versions = [spec.version for spec in requirement.specifier if spec.operator == "=="]
    if len(versions) != 1:
        return None
    folder = wheel_cache()
    found = sorted(folder.glob(f"{package.name.replace('-', '_')}-{versions[0]}-*.whl"))
    return found[-1] if found else None


def _compile_wheel(package: Package, python: str, bar) -> Path:
    """Compile ``package`` against this runtime's NumPy; keep the wheel in :func:`wheel_cache`.

    ``--no-build-isolation`` is what gives pybullet NumPy support: its setup.py enables
    it only if it can import numpy, and pip's isolated build has setuptools alone. pip's
    own wheel cache is bypassed (``--no-cache-dir``) because it is keyed by the source
    archive, not by how the wheel was built, so it could hand back a build without NumPy.
    pybullet's setup.py compiles in parallel without printing the commands, so the bar
    counts the object files that appear in the build folder.
    """
    from course_helpers.progress import progress

    folder = wheel_cache()
    folder.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix="course-wheel-") as scratch,
        progress(
            package.compiled_files or iter(()),
            i18n.gettext("Compiling {package}").format(package=package.name),
            unit="file",
            leave=False,
        ) as files,
    ):
        build = Path(scratch) / "build"
        build.mkdir()
        environment = {**os.environ, "TMPDIR": str(build)}

        def count_objects() -> None:
            done = sum(1 for _ in build.rglob("*.o"))
            files.update((min(done, files.total) if files.total else done) - files.n)

        command = _pip_command(
            python,
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-cache-dir",
            "--wheel-dir",
            scratch,
            package.requirement,
        )
        by_hand = _pip_command(
            python, "install", "--no-build-isolation", "--no-cache-dir", package.requirement
        )
        _run_pip(package, command, bar, env=environment, on_tick=count_objects, retry=by_hand)
        built = sorted(Path(scratch).glob("*.whl"))
        if len(built) != 1:
            raise InstallFailed(
                i18n.gettext("pip wheel made {count} wheels for {package}, not one.").format(
                    count=len(built), package=package.requirement
                )
            )
        # Copy, then rename: another kernel never sees half a wheel in the cache.
        partial = folder / (built[0].name + ".partial")
        shutil.copyfile(built[0], partial)
        wheel = folder / built[0].name
        os.replace(partial, wheel)
    return wheel


def _python_version() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"
