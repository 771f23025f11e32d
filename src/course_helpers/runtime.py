"""Runtime set-up for the lessons: what must happen before TensorFlow is imported.

Some settings only take effect if they are in the environment when TensorFlow, Keras
or pygame first load (for example which Keras tf-agents gets, or whether pygame looks
for a screen). A lesson's first code cell therefore calls :func:`setup` before any
other import, and everything else in the lesson can assume a quiet, headless runtime.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import os
import random
import shutil
import sys
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from course_helpers import colab, i18n, quick, replay
from course_helpers.numbers import number

#: Environment variables the lessons need, set only where the learner has not set them.
RUNTIME_VARIABLES: dict[str, str] = {
    # Hide TensorFlow's C++ start-up chatter. TensorFlow 2.15 logs harmless "Unable to
    # register cuDNN factory" lines at ERROR level on every import, so only FATAL stays;
    # real failures still reach the learner as Python exceptions.
    "TF_CPP_MIN_LOG_LEVEL": "3",
    # gym 0.23 draws CartPole with pygame, which opens a window even for rgb arrays.
    # The dummy driver renders off screen, so no display server is needed.
    "SDL_VIDEODRIVER": "dummy",
    # Without a sound card pygame prints ALSA errors into the notebook.
    "SDL_AUDIODRIVER": "dummy",
    "PYGAME_HIDE_SUPPORT_PROMPT": "1",
}

# Warnings the pinned stack prints on every run that a learner cannot act on.
_NOISY_WARNINGS: tuple[tuple[str, type[Warning]], ...] = (
    ("gym", DeprecationWarning),
    ("gym", UserWarning),
    ("tensorflow", DeprecationWarning),
    ("tensorflow_probability", DeprecationWarning),
    ("tf_agents", DeprecationWarning),
    ("tensorflow.python.saved_model.nested_structure_coder", UserWarning),
    ("pybullet_envs", DeprecationWarning),
    ("pkg_resources", DeprecationWarning),
    ("pygame", UserWarning),
    # Python 3.11 flags "x is ()" comparisons in tf-agents and gym when it compiles them.
    (r".*(tf_agents|gym)", SyntaxWarning),
)
# setuptools 81 warns, as the caller's own warning, wherever pygame or pybullet_envs
# imports pkg_resources; the pin below 82 keeps pkg_resources working.
_NOISY_MESSAGES: tuple[tuple[str, type[Warning]], ...] = (
    ("pkg_resources is deprecated as an API", UserWarning),
)


@dataclass(frozen=True)
class Runtime:
    """What :func:`setup` configured, shown to the learner in a few lines."""

    display: str
    quick_mode: bool
    language: str = "en"
    place: str = "local"
    replay: str = "reverb"
    #: Packages installed for Colab by this call, and how long it took.
    installed: tuple[str, ...] = ()
    install_seconds: float = 0.0
    #: Lines the learner should read, such as a TensorFlow version the course has not tested.
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        _ = i18n.gettext
        mode = _("on (CI-sized run)") if self.quick_mode else _("off (full-size run)")
        place = {"colab": _("Colab"), "binder": _("Binder")}.get(self.place, _("this computer"))
        lines = [
            _("Runtime ready on {place}: rendering with {display}; quick mode {mode}.").format(
                place=place, display=self.display, mode=mode
            )
        ]
        if self.installed:
            lines.append(
                _("Installed for Colab in {seconds} s: {packages}.").format(
                    seconds=number(self.install_seconds, 0), packages=", ".join(self.installed)
                )
            )
        lines.append(replay_note(self.replay))
        lines.extend(self.notes)
        return "\n".join(lines)


def replay_note(backend: str) -> str:
    """One line telling the learner which replay buffer the lessons use here, and why."""
    _ = i18n.gettext
    if backend == "reverb":
        return _("Replay buffers: Reverb, as in the published TF-Agents tutorials.")
    return _(
        "Replay buffers: an in-process stand-in for Reverb, because {why}. The lesson "
        "code is unchanged; the stand-in keeps experience inside this process and does "
        "not enforce rate limiters. Launch the lesson on Binder to use Reverb itself."
    ).format(why=_without_reverb_because())


def _without_reverb_because() -> str:
    """Why the lessons do without Reverb here; completes "because ..." and "but ..."."""
    if replay.reverb_available():
        return i18n.gettext("{variable}=inprocess asks for the stand-in").format(
            variable="COURSE_REPLAY"
        )
    if sys.version_info >= (3, 12):
        return i18n.gettext(
            "it installs only on Python 3.11 or older, and this runtime has Python {version}"
        ).format(version=f"{sys.version_info.major}.{sys.version_info.minor}")
    return i18n.gettext("it is not installed in this runtime")


def setup(
    language: str = "en", virtual_display: bool = False, needs: Sequence[str] = ()
) -> Runtime:
    """Prepare a quiet, headless runtime. Call it before importing TensorFlow.

    Args:
        language: the lesson's language, one of :data:`course_helpers.languages.LANGUAGES`;
            text the helpers write into the notebook uses it.
        virtual_display: start an Xvfb virtual screen as well (needs the ``xvfb``
            system package). The lessons do not need one: CartPole renders with SDL's
            dummy driver and pybullet with its CPU renderer.
        needs: packages this lesson needs beyond the shared ones (``"pybullet"``). On
            Colab, what is missing is installed first; elsewhere it is already there.

    Example:
        >>> import course_helpers as course
        >>> print(course.setup())  # doctest: +ELLIPSIS
        Runtime ready ...
    """
    i18n.set_language(language)
    place = colab.detect_runtime()
    installed: list[str] = []
    seconds = 0.0
    notes: list[str] = []
    if place == "colab":
        untested = colab.untested_tensorflow_note()
        notes.extend([untested] if untested else [])
        missing = colab.missing_packages(needs)
        if missing:
            try:
                seconds = colab.install(missing)
            except colab.InstallFailed as failure:
                if untested:  # an untested TensorFlow is the likely cause: say what to do
                    raise colab.InstallFailed(f"{failure}\n{untested}") from None
                raise
            installed = [package.requirement for package in missing]
    variables = {**RUNTIME_VARIABLES, **_keras_variables()}
    late = [
        name
        for name in ("TF_USE_LEGACY_KERAS", "SDL_VIDEODRIVER")
        if name in variables and name not in os.environ and _imported_before(name)
    ]
    for name, value in variables.items():
        os.environ.setdefault(name, value)
    if late:
        warnings.warn(
            i18n.gettext(
                "course_helpers.setup() ran after TensorFlow or pygame was imported, so "
                "{variables} may not take effect. Restart the kernel and run the set-up "
                "cell first."
            ).format(variables=", ".join(late)),
            RuntimeWarning,
            stacklevel=2,
        )
    for module, category in _NOISY_WARNINGS:
        warnings.filterwarnings("ignore", category=category, module=module)
    for message, category in _NOISY_MESSAGES:
        warnings.filterwarnings("ignore", message=message, category=category)

    _quiet_absl()
    _import_gym_quietly()
    if replay.backend() == "reverb" and "ipykernel" in sys.modules:
        drop_native_stderr_lines(_REVERB_LOG_PREFIX)
    _register_magics()

    display = i18n.gettext("SDL's dummy video driver (no screen needed)")
    if virtual_display:
        display = start_virtual_display()
    return Runtime(
        display=display,
        quick_mode=quick.is_quick_mode(),
        language=language,
        place=place,
        replay=replay.backend(),
        installed=tuple(installed),
        install_seconds=seconds,
        notes=tuple(notes),
    )


class _CellFailed(Exception):
    """Marks a cell run by %%requires as failed; its own traceback is already shown."""

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        return []


def requires(line: str, cell: str) -> None:
    """``%%requires reverb``: run the cell where the package works; elsewhere, say why not.

    Lesson 01 teaches Reverb itself, which cannot be installed on Colab. Its Reverb
    cells start with this line, so that there they explain themselves instead of
    failing, and every other cell of the lesson still runs. ``%%requires cluster`` (lesson
    04) asks for Reverb and for the memory that the latest ``Cluster``'s jobs need, until
    they have started (Binder's 2 GB are too few for five TensorFlow processes).
    """
    from IPython import get_ipython
    from IPython.core.error import UsageError

    package = line.strip()
    if not package or " " in package:
        raise UsageError(
            i18n.gettext("Usage: {usage}, for example {example}").format(
                usage="%%requires <package>", example="%%requires reverb"
            )
        )
    if package in ("reverb", "cluster"):
        available = replay.backend() == "reverb"
    else:
        available = importlib.util.find_spec(package) is not None
    if available and package == "cluster":
        from course_helpers.distributed.cluster import latest_shortfall

        shortfall = latest_shortfall()
        if shortfall:
            print(
                i18n.gettext(
                    "Skipped here: {why}. Every other cell of this lesson runs. To run this "
                    "one too, run the lesson on a computer with more memory (see the "
                    "learners' guide), or read its stored run on the course's website."
                ).format(why=shortfall)
            )
            return
    if not available and package == "cluster":
        # Binder has Reverb but not the memory for lesson 4's jobs: point elsewhere.
        print(
            i18n.gettext(
                "Skipped here: this cell works with lesson 4's jobs, which need Reverb, but "
                "{why}; they also need more memory than Binder gives. Every other cell of "
                "this lesson runs. To run this one too, run the lesson on a Linux computer "
                "of your own (see the learners' guide)."
            ).format(why=_without_reverb_because())
        )
        return
    if not available:
        if package == "reverb":
            print(
                i18n.gettext(
                    "Skipped here: this cell needs Reverb, but {why}. Every other cell of this "
                    "lesson runs. To run this one too, open the lesson on Binder with the "
                    '"Launch Binder" badge at the top.'
                ).format(why=_without_reverb_because())
            )
        else:
            print(
                i18n.gettext(
                    "Skipped here: this cell needs the {package} package, which is not installed."
                ).format(package=package)
            )
        return
    result = get_ipython().run_cell(cell, store_history=False)
    if not result.success:
        raise _CellFailed()


def _register_magics() -> None:
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        shell.register_magic_function(requires, magic_kind="cell", magic_name="requires")


# Lines that TensorFlow logs through absl each time a policy is saved as a SavedModel
# (lesson 3's PolicySavedModelTrigger saves three when it is created): that it renamed
# signature inputs such as "0/step_type", that helper functions it did not trace "will
# not be directly callable after loading", and the path of each SavedModel's
# fingerprint file. All are expected and harmless: the exported policies load and act.
_SAVED_MODEL_NAME_NOTES = (
    "is not a valid tf.function parameter name",
    "with unsupported characters which will be renamed",
    "Found untraced functions such as",
    "Writing fingerprint to",
)


def _drop_saved_model_name_notes(record: logging.LogRecord) -> bool:
    message = record.getMessage()
    return not any(note in message for note in _SAVED_MODEL_NAME_NOTES)


def _quiet_absl() -> None:
    """Drop only the SavedModel export notes; every other absl message still shows."""
    try:
        from absl import logging as absl_logging
    except ImportError:  # absl comes with TensorFlow; without it there is nothing to quiet.
        return
    absl_logging.get_absl_logger().addFilter(_drop_saved_model_name_notes)


def _keras_variables() -> dict[str, str]:
    """Select Keras 2 where the tf-keras package provides it.

    tf-agents 0.19 is written for Keras 2. TensorFlow 2.15 ships Keras 2 itself, and
    there tf-agents fails if asked for legacy Keras without tf-keras installed. From
    TensorFlow 2.16 on, Keras 3 is the default and tf-keras must be selected.
    """
    if importlib.util.find_spec("tf_keras") is None:
        return {}
    return {"TF_USE_LEGACY_KERAS": "1"}


def _imported_before(variable: str) -> bool:
    module = "tensorflow" if variable.startswith("TF_") else "pygame"
    return module in sys.modules


_virtual_display = None


def start_virtual_display(size: tuple[int, int] = (1024, 768)) -> str:
    """Start one Xvfb screen for this process (once) and point ``DISPLAY`` at it.

    Useful for environments that render through OpenGL windows. Raises a
    :class:`RuntimeError` with the install command when Xvfb is missing.
    """
    global _virtual_display
    if _virtual_display is None:
        if shutil.which("Xvfb") is None:
            raise RuntimeError(
                i18n.gettext(
                    "A virtual display needs Xvfb, which is not installed. Install it with "
                    "'sudo apt-get install xvfb' (Debian/Ubuntu), or call "
                    "course.setup() without virtual_display=True: the lessons do not need it."
                )
            )
        from pyvirtualdisplay import Display

        _virtual_display = Display(visible=False, size=size)
        _virtual_display.start()
    return i18n.gettext("an Xvfb virtual display ({display})").format(
        display=os.environ.get("DISPLAY", "?")
    )


def seed_everything(seed: int) -> int:
    """Seed Python, NumPy and TensorFlow, so that a run starts from the same weights and
    sees the same first episodes as another run with the same seed.

    Environments are seeded separately, in the lesson, because that is where a
    learner sees them created. Training can still differ a lot between two runs with one
    seed: Reverb samples with its own generator, and the lessons' threads (a learner
    beside a collector) interleave differently each time.
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(
            i18n.gettext("seed must be a non-negative integer, got {value}.").format(
                value=repr(seed)
            )
        )
    random.seed(seed)
    import numpy as np

    np.random.seed(seed)
    import tensorflow as tf

    tf.random.set_seed(seed)
    return seed


def _import_gym_quietly() -> None:
    """Import gym once with its "Gym has been unmaintained since 2022" notice swallowed.

    gym 0.23, which tf-agents 0.19 needs, prints that notice to stderr on import, in
    every lesson, and no setting turns it off. The lessons use gym only through
    tf-agents' ``suite_gym``; nothing in the notice is something a learner can act on.
    """
    if "gym" in sys.modules or importlib.util.find_spec("gym") is None:
        return
    with contextlib.redirect_stderr(io.StringIO()):
        import gym  # noqa: F401


# Reverb's C++ code logs to the process's stderr, outside Python's logging, lines such
# as "[reverb/cc/platform/default/server.cc:71] Started replay server on port 41233" or
# "Sampler and server are owned by the same process". Jupyter shows them in the cells.
_REVERB_LOG_PREFIX = b"[reverb/cc/"
_dropping: set[bytes] = set()
_dropping_lock = threading.Lock()


def drop_native_stderr_lines(prefix: bytes) -> None:
    """Keep lines that native code writes to stderr and that start with ``prefix`` out
    of the notebook; every other byte still reaches it, in order.

    No library setting does this: Reverb's logger has no level to set. So file
    descriptor 2, which the Jupyter kernel reads to show native output in the cell, is
    replaced by a pipe, and a daemon thread copies what arrives to the kernel's pipe,
    line by line, leaving out the matching lines. Python's own ``sys.stderr`` is not
    file descriptor 2 in a kernel and is untouched. Calling it again with the same
    prefix does nothing.
    """
    with _dropping_lock:
        if prefix in _dropping:
            return
        _dropping.add(prefix)
        original = os.dup(2)
        read_end, write_end = os.pipe()
        os.dup2(write_end, 2)
        os.close(write_end)
    threading.Thread(
        target=_copy_lines_except,
        args=(read_end, original, prefix),
        name=f"stderr filter {prefix.decode()}",
        daemon=True,
    ).start()


def _copy_lines_except(source: int, target: int, prefix: bytes) -> None:
    pending = b""
    while chunk := os.read(source, 65536):
        pending += chunk
        *lines, pending = pending.split(b"\n")
        kept = b"".join(line + b"\n" for line in lines if not line.startswith(prefix))
        # A partial line is held back only while it could still turn out to match.
        if pending and not (prefix.startswith(pending) or pending.startswith(prefix)):
            kept, pending = kept + pending, b""
        if kept:
            os.write(target, kept)
