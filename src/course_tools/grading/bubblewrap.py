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
- its own host name and its own ``/etc/passwd``, ``group`` and ``hosts``, which name only
  root, nobody and the account it runs as (:func:`etc_files`), not the machine's;
- the folder that holds its connection file and its ZeroMQ sockets (Unix sockets, since a
  sandbox without a network cannot reach the grader's TCP ports).

Nothing else of the machine exists inside: not the gradebook, not ``source/`` or
``release/``, no other student's folder, no home folder. It has no network (a loopback
interface of its own only), its own process numbers (when the kernel ends, every process
it started ends with it), no capabilities, and only the environment variables named in
:data:`KERNEL_VARIABLES`, with a ``PATH`` of its own.

Nothing of the grader's environment reaches the sandbox through its first process either.
Inside, process 1 is bubblewrap's own init (it reaps what the kernel leaves), a copy of
the ``bwrap`` process: ``/proc/1/environ`` shows the environment ``bwrap`` was started
with, and ``/proc/1/cmdline`` its command line, whatever ``--clearenv`` does for the
kernel. So ``bwrap`` starts with an empty environment (:data:`BWRAP_ENVIRONMENT`), and
its options, mounts and the kernel's variables included, reach it through an unnamed
file that it reads and closes (``--args``, as Flatpak passes them; :func:`hide_options`):
its command line is ``bwrap --args N -- <kernel command>``, which the kernel's own
``/proc/self/cmdline`` shows anyway.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
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
    "nsswitch.conf",
    "host.conf",
    "mime.types",
    "ssl",
    "ca-certificates",
    "alternatives",
    "locale.alias",
    "matplotlibrc",
    "os-release",
)
# Files of /etc written for each sandbox instead of shown from the machine (see
# :func:`etc_files`): the machine's own list every account, with people's full names, and
# the names of the hosts around it. (No resolv.conf: the sandbox has no network.)
WRITTEN_ETC_FILES = ("passwd", "group", "hosts")
#: The sandbox's host name, instead of the grader's machine's.
HOSTNAME = "grading"
# The environment variables a grading kernel keeps from the grader's, each named: a prefix
# would let through whatever another tool names alike (TF_CLI_CONFIG_FILE is Terraform's).
# The locale, the course's own settings, the settings nbgrader gives the kernel (the checks
# fail their cell when NBGRADER_EXECUTION is set), and the libraries' thread and log
# settings. Not HOME or TMPDIR (the kernel makes its own), nor anything that holds a
# credential.
KERNEL_VARIABLES = (
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_COLLATE",
    "LC_MESSAGES",
    "LC_MONETARY",
    "LC_NUMERIC",
    "LC_TIME",
    "TZ",
    "COURSE_QUICK",
    "COURSE_HYPERPARAMETERS",
    "COURSE_REPLAY",
    "NBGRADER_EXECUTION",
    "NBGRADER_VALIDATING",
    "PYTHONHASHSEED",
    "PYTHONIOENCODING",
    "PYTHONPATH",
    "MPLBACKEND",
    "TF_CPP_MIN_LOG_LEVEL",
    "TF_ENABLE_ONEDNN_OPTS",
    "TF_USE_LEGACY_KERAS",
    "CUDA_VISIBLE_DEVICES",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
)
# The kernel's PATH: its Python's folder, then the system's; not the grader's PATH, whose
# other folders do not exist inside and would only describe the grader's machine.
SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
#: The environment ``bwrap`` itself starts with, which its init process (PID 1 inside the
#: sandbox) keeps for the sandbox's whole life: nothing.
BWRAP_ENVIRONMENT: dict[str, str] = {}

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
    etc: Mapping[str, int] | None = None,
    privileged: bool | None = None,
) -> list[str]:
    """``bwrap ... <kernel>``: the kernel command, sandboxed as the module doc says.

    ``etc`` maps names of :data:`WRITTEN_ETC_FILES` to descriptors of their contents
    (:func:`etc_files`, :func:`unnamed_file`), which the command's process must inherit.
    """
    privileged = os.geteuid() == 0 if privileged is None else privileged
    args = [executable() or "bwrap", "--unshare-all", "--hostname", HOSTNAME]
    args += ["--die-with-parent", "--clearenv"]
    if privileged:  # bwrap run by root keeps root's capabilities unless told otherwise
        args += ["--cap-drop", "ALL"]
    for name in SYSTEM_FOLDERS:
        if os.path.lexists(name):
            args += _mount("--ro-bind", Path(name))
    for name in ETC_FILES:
        if os.path.lexists(f"/etc/{name}"):
            args += _mount("--ro-bind", Path("/etc", name))
    for name, descriptor in sorted((etc or {}).items()):
        if name not in WRITTEN_ETC_FILES:
            raise ValueError(f"/etc/{name} is not one of {WRITTEN_ETC_FILES}")
        args += ["--ro-bind-data", str(descriptor), f"/etc/{name}"]
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
    for name, value in sorted(kernel_environment(kernel[0], environment).items()):
        args += ["--setenv", name, value]
    return [*args, "--", *kernel]


def kernel_environment(python: str, grader: Mapping[str, str]) -> dict[str, str]:
    """The kernel's environment: those of :data:`KERNEL_VARIABLES` that ``grader`` sets, and a
    ``PATH`` of ``python``'s folder and the system's. (Not JPY_PARENT_PID: the kernel's
    parent is outside its process numbers, so it must not watch for it.)"""
    kept = {name: grader[name] for name in KERNEL_VARIABLES if name in grader}
    folder = os.path.dirname(python)
    kept["PATH"] = os.pathsep.join(([folder] if os.path.isabs(folder) else []) + list(SYSTEM_PATH))
    return kept


def etc_files(uid: int, gid: int, name: str) -> dict[str, bytes]:
    """``/etc/passwd``, ``group`` and ``hosts`` for a sandbox whose processes run as ``uid``
    and ``gid``, named ``name``: root, nobody and that account, and this host only.

    Programs look their user up (``getpass.getuser()`` fails without an entry), but need
    no other account of the machine.
    """
    users = {0: ("root", 0, "/root"), 65534: ("nobody", 65534, "/nonexistent")}
    users.setdefault(uid, (name, gid, "/nonexistent"))
    groups = {0: "root", 65534: "nogroup"}
    groups.setdefault(gid, name)
    passwd = "".join(
        f"{user}:x:{number}:{group}::{home}:/usr/sbin/nologin\n"
        for number, (user, group, home) in sorted(users.items())
    )
    group = "".join(f"{title}:x:{number}:\n" for number, title in sorted(groups.items()))
    hosts = f"127.0.0.1\tlocalhost {HOSTNAME}\n::1\tlocalhost ip6-localhost ip6-loopback\n"
    return {"passwd": passwd.encode(), "group": group.encode(), "hosts": hosts.encode()}


def unnamed_file(data: bytes) -> int:
    """A descriptor of a deleted file that holds ``data``, read from its start: no path
    leads to it, and it is gone once every process holding it has closed it."""
    with tempfile.TemporaryFile() as file:
        file.write(data)
        file.flush()
        descriptor = os.dup(file.fileno())  # (Popen's pass_fds makes it inheritable)
    os.lseek(descriptor, 0, os.SEEK_SET)
    return descriptor


def hide_options(command: Sequence[str]) -> tuple[list[str], int]:
    """``command`` (from :func:`command`) with its options moved into an unnamed file.

    Returns the short command, ``bwrap --args N -- <kernel>``, and ``N``: a descriptor of a
    deleted file that holds the options, NUL-separated, at its start. The process that runs
    the command must inherit ``N`` (``subprocess.Popen(..., pass_fds=(N,))``); ``bwrap``
    reads and closes it before it starts anything, and the caller closes its own copy
    once the process has started.
    """
    split = list(command).index("--")
    descriptor = unnamed_file(b"".join(os.fsencode(o) + b"\0" for o in command[1:split]))
    return [command[0], "--args", str(descriptor), *command[split:]], descriptor


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
