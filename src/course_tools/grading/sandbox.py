"""Limits for the kernel that runs a student's notebook during grading.

nbgrader executes each submission in its own Jupyter kernel, a separate process. The
course's nbgrader configuration (:mod:`course_tools.grading.settings`) starts that
kernel with one extra start-up line, a call to :func:`confine`, which runs before any
student cell. It:

- caps the kernel's CPU time (``RLIMIT_CPU``; the kernel is killed when it is used up),
  its address space (``RLIMIT_AS``; a larger allocation raises ``MemoryError``) and the
  size of any file it writes (``RLIMIT_FSIZE``). Child processes inherit the limits;
- gives the kernel a private, empty temporary folder as ``TMPDIR`` and ``HOME``;
- refuses, through a Python audit hook (PEP 578), any attempt by Python code to create,
  write, rename or delete a file outside the submission's folder and that temporary
  folder;
- optionally switches the kernel to an unprivileged user (when grading runs as root).

What this does not isolate: the audit hook sees Python's own file functions, not writes
made by native code (``ctypes``, TensorFlow's C++ file system) or by child processes,
and it does not restrict reading or the network. Only the unprivileged user, whose
files are the submission folder and the temporary folder, is an operating-system
boundary; for hostile code, grade inside a container or virtual machine as well.
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from course_helpers.i18n import translator

# Python-level events that change the file system, and the index of their path arguments.
_PATH_EVENTS: dict[str, tuple[int, ...]] = {
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.mkdir": (0,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.truncate": (0,),
    "os.utime": (0,),
    "os.rename": (0, 1),
    "os.link": (0, 1),
    "os.symlink": (1,),
    "shutil.rmtree": (0,),
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
# Harmless destinations that libraries open for writing.
_ALWAYS_WRITABLE = ("/dev/null", "/dev/shm", "/dev/tty")


def _inside(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def write_guard(roots: Iterable[str], message: str) -> Callable[[str, tuple[Any, ...]], None]:
    """An audit hook that raises PermissionError for writes outside ``roots``.

    ``message`` is formatted with ``path``, the refused destination.
    """
    allowed = [os.path.realpath(root) for root in roots] + list(_ALWAYS_WRITABLE)

    def refuse_if_outside(raw: Any) -> None:
        if isinstance(raw, int) or raw is None:  # a file descriptor: already opened
            return
        path = os.path.realpath(os.fsdecode(raw))
        if not _inside(path, allowed):
            raise PermissionError(message.format(path=path))

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = args
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & _WRITE_FLAGS
            )
            if writes:
                refuse_if_outside(path)
        elif event in _PATH_EVENTS:
            for index in _PATH_EVENTS[event]:
                if index < len(args):
                    refuse_if_outside(args[index])

    return hook


def _drop_to(user: str, folders: Iterable[Path]) -> None:
    import pwd

    record = pwd.getpwnam(user)
    for folder in folders:  # the student's files become the unprivileged user's
        for path in [folder, *folder.rglob("*")]:
            os.chown(path, record.pw_uid, record.pw_gid, follow_symlinks=False)
    os.setgroups([])
    os.setgid(record.pw_gid)
    os.setuid(record.pw_uid)
    os.environ["USER"] = os.environ["LOGNAME"] = user


def confine(
    *,
    cpu_seconds: int,
    memory_mb: int,
    file_mb: int,
    user: str | None = None,
    processes: int | None = None,
    quick: bool = True,
    language: str = "en",
) -> None:
    """Confine this process (a grading kernel) to the current folder; see the module doc.

    Any failure ends the process at once: a kernel that could not be confined must not
    run student code.
    """
    try:
        folder = Path.cwd().resolve()
        private = Path(tempfile.mkdtemp(prefix="course-grading-"))
        for name in ("TMPDIR", "HOME", "MPLCONFIGDIR"):
            os.environ[name] = str(private)
        tempfile.tempdir = None
        os.environ["MPLBACKEND"] = "Agg"
        if quick:
            os.environ["COURSE_QUICK"] = "1"
        sys.dont_write_bytecode = True
        if user:
            _drop_to(user, [folder, private])
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 2**20,) * 2)
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_mb * 2**20,) * 2)
        if processes is not None:  # in a user namespace, this counts the sandbox's own
            resource.setrlimit(resource.RLIMIT_NPROC, (processes,) * 2)
        _ = translator(language)
        message = _(
            "Grading: a notebook may write files only inside its own folder; writing to "
            "{path} was refused."
        )
        sys.addaudithook(write_guard([str(folder), str(private)], message))
    except BaseException as error:  # noqa: BLE001 - anything at all must stop the kernel
        print(
            f"course_tools.grading.sandbox: could not confine the kernel: {error!r}",
            file=sys.stderr,
            flush=True,
        )
        os._exit(70)


def startup_line(**limits: Any) -> str:
    """The IPython start-up line that calls :func:`confine`, leaving no name behind.

    IPython has put the working folder, the submission, on ``sys.path`` by then: the line
    takes it off while it imports and runs :func:`confine` (a submitted ``course_tools/``
    or ``resource.py`` would otherwise run instead), and puts it back for the student's
    own imports.
    """
    return (
        "import sys as _s, os as _o; _p = _s.path[:]; "
        "_s.path[:] = [_x for _x in _p if _x not in ('', '.', _o.getcwd())]; "
        f"__import__('course_tools.grading.sandbox', fromlist=['confine']).confine(**{limits!r}); "
        "_s.path[:] = _p; del _s, _o, _p"
    )


def check_user(user: str) -> None:
    """Fail early, with the fix, when student code cannot run as ``user``.

    Besides existing and needing root, ``user`` must be able to read this Python and its
    packages: a virtual environment made from a Python under ``/root`` is not readable by
    anyone else, and every submission would then fail on its first import.
    """
    import pwd
    import subprocess

    try:
        pwd.getpwnam(user)
    except KeyError:
        raise ValueError(
            f"Grading user {user!r} does not exist on this machine. Create it "
            "(for example: useradd --no-create-home grader) or set user=None "
            "in nbgrader_config.py."
        ) from None
    if os.geteuid() != 0:
        raise PermissionError(
            f"Running student code as {user!r} needs root, and grading runs "
            f"as user id {os.geteuid()}. Run the grading command with sudo, "
            "or set user=None in nbgrader_config.py."
        )
    try:
        probe = subprocess.run(
            [sys.executable, "-c", "import tomllib, course_tools.grading"],
            user=user,
            cwd="/",
            capture_output=True,
            text=True,
        )
        failed = probe.returncode != 0
        reason = (probe.stderr.strip().splitlines() or ["no error message"])[-1]
    except OSError as error:  # the interpreter itself cannot be run
        failed, reason = True, str(error)
    if failed:
        raise PermissionError(
            f"User {user!r} cannot run {sys.executable} with the course's "
            f"packages ({reason}). Install the course environment where "
            f"{user!r} can read it (for example under /opt, not /root), or "
            "set user=None in nbgrader_config.py."
        )
