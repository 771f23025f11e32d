"""The command line that runs a grading kernel inside bubblewrap (``bwrap``).

bubblewrap is the sandbox Flatpak uses: a small setuid-free program, packaged by every
Linux distribution, that starts a process in new Linux namespaces. The kernel it starts
here sees:

- the operating system's programs and libraries and this Python environment, read-only
  (``/usr``, ``/bin``, ``/lib*``, a few files of ``/etc``, and every folder on this
  interpreter's ``sys.path``);
- the folder it grades, writable: nbgrader's copy of one submission under ``autograded/``;
- an empty private ``/tmp``, its own ``/proc`` and a minimal ``/dev``; everything else,
  the empty folders above the mounted ones included, is read-only;
- the folder that holds its connection file and its ZeroMQ sockets (Unix sockets, since a
  sandbox without a network cannot reach the grader's TCP ports).

Nothing else of the machine exists inside: not the gradebook, not ``source/`` or
``release/``, no other student's folder, no home folder. It has no network (a loopback
interface of its own only), its own process numbers (when the kernel ends, every process
it started ends with it), no capabilities, and only the environment variables listed in
:data:`KEPT_VARIABLES`.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

# System folders a Python kernel needs; a symbolic link (merged /usr) stays a link.
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Files of /etc that the dynamic linker, fonts, locales and name lookups read. Not the
# rest: /etc holds secrets (shadow, ssh keys) readable by root.
ETC_FILES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "fonts",
    "localtime",
    "timezone",
    "passwd",
    "group",
    "nsswitch.conf",
    "hosts",
    "host.conf",
    "resolv.conf",
    "mime.types",
    "ssl",
    "ca-certificates",
    "alternatives",
    "locale.alias",
    "matplotlibrc",
    "os-release",
)
# Environment variables the kernel keeps (exact names, or prefixes ending in "_").
KEPT_VARIABLES = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "LC_",
    "COURSE_",
    "JPY_",
    "PYTHONHASHSEED",
    "PYTHONIOENCODING",
    "PYTHONPATH",
    "TF_",
    "CUDA_",
    "OMP_",
    "MKL_",
    "OPENBLAS_",
    "MPLBACKEND",
    "PYDEVD_",
)

INSTALL_HINT = (
    "Install bubblewrap: `sudo apt-get install bubblewrap` (Debian, Ubuntu), "
    "`sudo dnf install bubblewrap` (Fedora), or `conda install -c conda-forge "
    "bubblewrap`."
)


def executable() -> str | None:
    """The ``bwrap`` program on PATH, or None."""
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=8)
def python_paths(python: str = sys.executable) -> list[Path]:
    """The folders ``python`` reads its code from: its prefixes and its ``sys.path``.

    Asked of ``python`` itself, started from ``/``: the grader's own ``sys.path`` would
    add the folder it runs in (the course folder, under ``python -m nbgrader``).
    """
    probe = (
        "import json, sys; print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix, "
        "sys.base_exec_prefix, *sys.path]))"
    )
    asked = subprocess.run(
        [python, "-c", probe], cwd="/", capture_output=True, text=True, check=True
    )
    found = set(json.loads(asked.stdout)) | {str(Path(python).parent)}
    paths = set()
    for entry in found:
        if entry and os.path.isabs(entry) and entry != "/":
            for path in (Path(entry), Path(entry).resolve()):  # a venv's python links elsewhere
                if path.exists():
                    paths.add(path)
    return sorted(paths)


def check_readable(paths: Iterable[Path], private: Iterable[Path]) -> None:
    """Refuse to show the kernel a folder that holds one of ``private`` (the course folder)."""
    for path in paths:
        for secret in private:
            if secret == path or secret.is_relative_to(path.resolve()):
                raise ValueError(
                    f"The grading sandbox would show {path} to student code, and it holds "
                    f"{secret}. {path} is on this Python's sys.path (or is its prefix): "
                    "install the course environment outside the course folder, or remove "
                    f"{path} from PYTHONPATH."
                )


def _mount(flag: str, path: Path) -> list[str]:
    if path.is_symlink():
        return ["--symlink", os.readlink(path), str(path)]
    return [flag, str(path), str(path)]


def command(
    kernel: Sequence[str],
    *,
    folder: Path,
    sockets: Path,
    readable: Iterable[Path],
    environment: Mapping[str, str],
    privileged: bool | None = None,
) -> list[str]:
    """``bwrap ... <kernel>``: the kernel command, sandboxed as the module doc says."""
    privileged = os.geteuid() == 0 if privileged is None else privileged
    args = [executable() or "bwrap", "--unshare-all", "--die-with-parent", "--clearenv"]
    if privileged:  # bwrap run by root keeps root's capabilities unless told otherwise
        args += ["--cap-drop", "ALL"]
    for name in SYSTEM_FOLDERS:
        if os.path.lexists(name):
            args += _mount("--ro-bind", Path(name))
    for name in ETC_FILES:
        if os.path.lexists(f"/etc/{name}"):
            args += _mount("--ro-bind", Path("/etc", name))
    # The private /tmp first: a Python environment or a course under /tmp is mounted on top.
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    # Python's own folders, outermost first, so that a folder inside another stays visible.
    for path in sorted(set(readable), key=lambda p: len(p.parts)):
        if not any(path == Path(s) or path.is_relative_to(s) for s in SYSTEM_FOLDERS):
            args += ["--ro-bind", str(path), str(path)]
    args += [
        "--bind",
        str(sockets),
        str(sockets),
        "--bind",
        str(folder),
        str(folder),
        "--chdir",
        str(folder),
        "--remount-ro",
        "/",
    ]
    for name, value in sorted(environment.items()):
        # (The kernel's parent is outside its process numbers: it must not watch for it.)
        if name != "JPY_PARENT_PID" and any(
            name == kept or (kept.endswith("_") and name.startswith(kept))
            for kept in KEPT_VARIABLES
        ):
            args += ["--setenv", name, value]
    return [*args, "--", *kernel]


def problem() -> str | None:
    """Why a sandbox cannot start on this machine, with what to do; None when it can."""
    if not sys.platform.startswith("linux"):
        return (
            f"The grading sandbox needs Linux namespaces, which {sys.platform} does not "
            "have. Grade on Linux (a virtual machine or a container will do), or pass "
            "--unsandboxed to grade without it."
        )
    bwrap = executable()
    if bwrap is None:
        return (
            f"The grading sandbox needs bubblewrap (bwrap), which is not installed. {INSTALL_HINT}"
        )
    probe = subprocess.run(
        [
            bwrap,
            "--unshare-all",
            "--die-with-parent",
            *sum((_mount("--ro-bind", Path(n)) for n in SYSTEM_FOLDERS if os.path.lexists(n)), []),
            "--",
            "/bin/true",
        ],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        said = probe.stderr.strip() or f"exit status {probe.returncode}"
        return (
            f"bubblewrap could not start a sandbox here ({said}). It needs user "
            "namespaces: enable them with `sudo sysctl -w kernel.unprivileged_userns_clone=1` "
            "(Debian) or `sudo sysctl -w user.max_user_namespaces=15000`; on Ubuntu 24.04 "
            "and later, `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`, or "
            "run grading as root. Inside a container, start it with --privileged or with "
            "a seccomp profile that allows unshare. Or pass --unsandboxed to grade without it."
        )
    return None
