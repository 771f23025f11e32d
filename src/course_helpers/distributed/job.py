"""What every job does besides its work: read its arguments, report, and not outlive its
launcher.

A job reports to whoever started it with one line of JSON on standard output per report,
marked with :data:`MARK`: the launcher (:mod:`course_helpers.distributed.cluster`) reads
them to draw its progress bars; a person who started the job by hand reads them in their
terminal. TensorFlow's and Reverb's own log lines go to standard error.
"""

from __future__ import annotations

import argparse
import atexit
import gettext as stdlib_gettext
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import polib

from course_helpers.i18n import catalog_path, gettext, set_language

#: The start of every report line.
MARK = "@job "
#: The launcher's language, for the jobs' messages (set by the launcher).
LANGUAGE_VARIABLE = "COURSE_LANGUAGE"


#: argparse's own words that a job's ``--help`` and its command-line errors show. argparse
#: passes them to gettext's global domain, its documented way of being translated; the
#: helpers' catalogs translate them, and :func:`argparse_in` points that domain there.
ARGPARSE_TEXTS = (
    "usage: ",
    "options",
    "show this help message and exit",
    "the following arguments are required: %s",
    "%(prog)s: error: %(message)s\n",
    "unrecognized arguments: %s",
    "argument %(argument_name)s: %(message)s",
    "invalid %(type)s value: %(value)r",
    "expected one argument",
)
_ARGPARSE_DOMAIN = "course_argparse"


def argparse_in(language: str) -> None:
    """Make argparse's own words (``usage:``, ``options``, its errors) speak ``language``.

    gettext's global domain reads compiled ``.mo`` catalogs, and the course keeps only
    ``.po`` files (read with polib), so the catalog is compiled, with polib, into a
    temporary folder removed when the process ends. Meant for a job's own process: it sets
    the process's global gettext domain and its ``LANGUAGE`` variable.
    """
    if language == "en" or not catalog_path(language).exists():
        return
    folder = Path(tempfile.mkdtemp(prefix="course-argparse-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    target = folder / language / "LC_MESSAGES"
    target.mkdir(parents=True)
    polib.pofile(str(catalog_path(language))).save_as_mofile(str(target / f"{_ARGPARSE_DOMAIN}.mo"))
    stdlib_gettext.bindtextdomain(_ARGPARSE_DOMAIN, str(folder))
    stdlib_gettext.textdomain(_ARGPARSE_DOMAIN)
    os.environ["LANGUAGE"] = language  # gettext's first choice of language


def arguments(description: str, *, address: bool = True, task: bool = False) -> argparse.Namespace:
    """Parse a job's command line: ``--root-dir``; ``--address`` (or, for the server,
    ``--port``) and ``--task`` where used. ``description`` is English, marked with
    :func:`~course_helpers.i18n.gettext_noop`; the help and the errors come in the language
    of the launcher (``COURSE_LANGUAGE``)."""
    language = os.environ.get(LANGUAGE_VARIABLE, "en")
    set_language(language)
    argparse_in(language)
    parser = argparse.ArgumentParser(description=gettext(description))
    parser.add_argument(
        "--root-dir", required=True, help=gettext("the run's folder, shared by all jobs")
    )
    if not address:
        parser.add_argument(
            "--port",
            type=int,
            default=None,
            help=gettext("the port to serve on (default: any free one)"),
        )
    else:
        parser.add_argument(
            "--address",
            required=True,
            help=gettext("the Reverb server, host:port (e.g. localhost:8008)"),
        )
    if task:
        parser.add_argument(
            "--task", type=int, default=0, help=gettext("this collect job's number")
        )
    parser.add_argument(
        "--exit-with-parent",
        action="store_true",
        help=gettext("stop when the process that started this job ends (the launcher passes it)"),
    )
    parsed = parser.parse_args()
    if parsed.exit_with_parent:
        exit_with_parent()
    return parsed


def exit_with_parent(poll_seconds: float = 0.5) -> None:
    """End this process when its parent ends: a kernel that restarts, or is killed,
    leaves no job behind. (Linux's ``PR_SET_PDEATHSIG`` does this for one thread's
    parent only; polling the parent works everywhere.)"""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_seconds)
        os.kill(os.getpid(), signal.SIGTERM)  # the main thread's finally blocks, if it can
        time.sleep(5)  # run them; it cannot while a Reverb call blocks it
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def stop_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit, so that ``finally`` blocks close Reverb's writers."""

    def handler(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


def report(**fields: Any) -> None:
    """One report line: ``@job {"job": "collect-0", "env_steps": 1200, ...}``."""
    fields.setdefault("time", time.time())
    sys.stdout.write(MARK + json.dumps(fields, default=_plain) + "\n")
    sys.stdout.flush()


def _plain(value: Any) -> Any:
    """NumPy's scalars (a train step, a loss) as the numbers JSON writes."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"cannot report {value!r}")


def quiet_tensorflow() -> None:
    """Keep TensorFlow's and absl's start-up chatter out of the job's log."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
