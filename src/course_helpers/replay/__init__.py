"""Reverb where it installs, an in-process stand-in where it does not.

Lessons 02 and 03 replay experience through Reverb, and they import it from here::

    from course_helpers.replay import reverb, reverb_replay_buffer, reverb_utils

Where dm-reverb is importable (Python 3.11: Binder, a local install) these three names
*are* the real modules: ``reverb``, ``tf_agents.replay_buffers.reverb_replay_buffer`` and
``tf_agents.replay_buffers.reverb_utils``. Where it is not (today's Colab: Python 3.12+,
no Reverb wheels) they are small stand-ins with the part of the API the lessons use, so
the lesson code runs unchanged. ``COURSE_REPLAY=inprocess`` picks the stand-in even where
Reverb is installed (tests; instructors previewing Colab); ``COURSE_REPLAY=reverb``
insists on Reverb.

The stand-in and what it does differently are in :mod:`course_helpers.replay.standin`.

Importing this module does not import TensorFlow; the names resolve when first used.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
from typing import Any

from course_helpers.i18n import gettext

#: The environment variable that chooses the backend: ``reverb`` or ``inprocess``.
BACKEND_VARIABLE = "COURSE_REPLAY"
_BACKENDS = ("reverb", "inprocess")

# The real modules behind each name the lessons import.
_REAL_MODULES = {
    "reverb": "reverb",
    "reverb_replay_buffer": "tf_agents.replay_buffers.reverb_replay_buffer",
    "reverb_utils": "tf_agents.replay_buffers.reverb_utils",
}


@functools.cache
def reverb_available() -> bool:
    """True when dm-reverb can be imported here (looked up once, without importing it)."""
    return importlib.util.find_spec("reverb") is not None


def backend() -> str:
    """``"reverb"`` or ``"inprocess"``: what the lessons' replay names resolve to right now."""
    raw = os.environ.get(BACKEND_VARIABLE, "")
    choice = raw.strip().lower()
    if not choice:
        return "reverb" if reverb_available() else "inprocess"
    if choice not in _BACKENDS:
        raise ValueError(
            gettext(
                "{variable}={value} is not understood. Set it to 'reverb' or 'inprocess', or "
                "leave it unset to use Reverb where it is installed."
            ).format(variable=BACKEND_VARIABLE, value=repr(raw))
        )
    if choice == "reverb" and not reverb_available():
        raise ModuleNotFoundError(
            gettext(
                "{variable}=reverb, but dm-reverb is not installed here (it installs only on "
                "Python 3.11 or older). Unset it to use the in-process stand-in."
            ).format(variable=BACKEND_VARIABLE)
        )
    return choice


def __getattr__(name: str) -> Any:
    """Resolve ``reverb``, ``reverb_replay_buffer`` and ``reverb_utils`` on each access (PEP 562).

    Nothing is cached, so changing ``COURSE_REPLAY`` takes effect at the next import.
    """
    if name not in _REAL_MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if backend() == "reverb":
        return importlib.import_module(_REAL_MODULES[name])
    from course_helpers.replay.standin import STAND_INS

    return STAND_INS[name]


def __dir__() -> list[str]:
    return sorted([*globals(), *_REAL_MODULES])


__all__ = ["BACKEND_VARIABLE", "backend", "reverb_available", *_REAL_MODULES]
