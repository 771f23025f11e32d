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

Nothing of the grader's session reaches the sandbox through another process either:

- No process of bubblewrap exists inside (``--as-pid-1``). Its init would otherwise be
  process 1, a copy of ``bwrap`` whose ``/proc/1/environ``, ``cmdline`` and memory a
  submission can read: the environment ``bwrap`` was started with (``--clearenv`` clears
  only the kernel's), and the machine's whole mount table, which ``bwrap`` reads before
  it changes root. Process 1 is dumb-init instead, started like the kernel, with the
  kernel's environment only; it reaps the processes a submission orphans, so that they
  do not stay zombies and use up the process limit, and it ends with the kernel.
- The sandbox has a user namespace of its own, and cannot make more (``--disable-userns``).
- ``bwrap`` starts with an empty environment (:data:`BWRAP_ENVIRONMENT`), and reads its
  options, the kernel's variables included, from an unnamed file that it closes
  (``--args``, as Flatpak passes them; :func:`hide_options`), so that the machine's other
  users do not see them in ``ps`` either.
- The kernel writes to a pipe that the grader reads, not to the grader's own output:
  ``/proc/self/fd/1`` would otherwise reopen nbgrader's log file, or the terminal an
  instructor types in (:mod:`course_tools.grading.kernel`).
- The kernel's keyrings are out of reach: a seccomp filter (:func:`seccomp_filter`)
  refuses ``keyctl``, ``add_key`` and ``request_key``, as Flatpak's does, since the
  sandbox would otherwise share the grader's session keyring; ``/proc/keys`` is hidden.
  It refuses io_uring too.
- ``/proc/cmdline`` (the machine's boot arguments) and ``/proc/keys`` read as empty.
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
from dataclasses import dataclass
from pathlib import Path

from course_tools.grading.disk import MOUNT_POINT

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
    # The public certificates only: /etc/ssl/private holds keys that root can read, and
    # /etc/ssl/certs a self-signed certificate named after the machine.
    "ssl/certs/ca-certificates.crt",
    "ssl/openssl.cnf",
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
#: Files of the sandbox's /proc that read as empty: the machine's boot arguments, and the
#: keys the kernel could otherwise describe.
HIDDEN_PROC_FILES = ("/proc/cmdline", "/proc/keys", "/proc/key-users")
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

INIT_HINT = (
    "It is in the course's lock and its tools extra: `pip install dumb-init` in the course "
    "environment (or `sudo apt-get install dumb-init`)."
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
    written: Mapping[str, int] | None = None,
    seccomp: int | None = None,
    privileged: bool | None = None,
    disk: Disk | None = None,
) -> list[str]:
    """``bwrap ... <kernel>``: the kernel command, sandboxed as the module doc says.

    ``written`` maps paths, those of :data:`WRITTEN_ETC_FILES` in ``/etc`` and
    :data:`HIDDEN_PROC_FILES`, to descriptors of what the sandbox reads there instead
    (:func:`written_files`), and ``seccomp`` is a descriptor of :func:`seccomp_filter`'s
    program: the command's process must inherit them. With ``disk``, the graded folder
    is the sandbox's own disk of :mod:`course_tools.grading.disk`, whose process 1 reports
    to ``disk.report`` (inherited too), and ``/tmp`` is limited to the same size.
    """
    privileged = os.geteuid() == 0 if privileged is None else privileged
    init = init_program()
    if init is None:
        raise FileNotFoundError(f"dumb-init is not installed. {INIT_HINT}")
    args = [executable() or "bwrap", "--unshare-all", "--unshare-user", "--disable-userns"]
    args += ["--hostname", HOSTNAME, "--as-pid-1", "--die-with-parent", "--clearenv"]
    if seccomp is not None:
        args += ["--seccomp", str(seccomp)]
    if privileged:  # bwrap run by root keeps root's capabilities unless told otherwise
        args += ["--cap-drop", "ALL"]
    if disk is not None:  # for process 1 alone, which drops them before it starts anything
        args += ["--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP"]
    for name in SYSTEM_FOLDERS:
        if os.path.lexists(name):
            args += _mount("--ro-bind", Path(name))
    for name in ETC_FILES:
        if os.path.lexists(f"/etc/{name}"):
            args += _mount("--ro-bind", Path("/etc", name))
    # The private /tmp first: a Python environment or a course under /tmp is mounted on top.
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += (["--size", str(disk.max_bytes)] if disk is not None else []) + ["--tmpfs", "/tmp"]
    allowed = {f"/etc/{name}" for name in WRITTEN_ETC_FILES} | set(HIDDEN_PROC_FILES)
    for destination, descriptor in sorted((written or {}).items()):
        if destination not in allowed:
            raise ValueError(f"{destination} is not one of {sorted(allowed)}")
        args += ["--ro-bind-data", str(descriptor), destination]
    # Python's own folders, outermost first, so that a folder inside another stays visible.
    for path in sorted(set(readable), key=lambda p: len(p.parts)):
        if not any(path == Path(s) or path.is_relative_to(s) for s in SYSTEM_FOLDERS):
            args += ["--ro-bind", str(path), str(path)]
    if not any(init.is_relative_to(folder) for folder in SYSTEM_FOLDERS):
        args += ["--ro-bind", str(init), str(init)]
    args += ["--bind", str(sockets), str(sockets)]
    if disk is None:
        args += ["--bind", str(folder), str(folder)]
    else:  # process 1 copies it onto the sandbox's own disk, mounted at MOUNT_POINT first
        args += ["--ro-bind", str(folder), str(folder), "--dir", MOUNT_POINT]
    args += ["--chdir", str(folder), "--remount-ro", "/"]
    for name, value in sorted(kernel_environment(kernel[0], environment).items()):
        args += ["--setenv", name, value]
    # dumb-init is process 1 and the kernel its only child: it reaps the orphans a
    # submission leaves, which would otherwise stay zombies and use up the process limit.
    # The kernel leads its own session and process group, as Jupyter starts kernels, so an
    # interrupt reaches it and the processes it started (ipykernel signals its group).
    started = [str(init), "--", *kernel]
    if disk is not None:
        started = [*disk.process_one(kernel[0], folder), "--", *started]
    return [*args, "--", *started]


@dataclass(frozen=True)
class Disk:
    """The limits of the sandbox's own disk (:mod:`course_tools.grading.disk`), and the
    descriptor its process 1 reports to."""

    max_bytes: int
    max_files: int
    report: int
    sockets: Path | None = None  # the kernel's socket folder, on the grader's disk

    def process_one(self, python: str, folder: Path) -> list[str]:
        """The command of the sandbox's process 1, run by the kernel's ``python`` with
        ``-P``: the graded folder, its working folder, is not on its import path (a
        submitted ``argparse.py`` would otherwise run with its capabilities)."""
        return [
            python,
            "-P",
            "-m",
            "course_tools.grading.disk",
            "--folder",
            str(folder),
            "--bytes",
            str(self.max_bytes),
            "--files",
            str(self.max_files),
            "--report",
            str(self.report),
            *(["--sockets", str(self.sockets)] if self.sockets else []),
        ]


def init_program(python: str = sys.executable) -> Path | None:
    """dumb-init, beside ``python`` (installed with the course's tools) or on PATH."""
    beside = Path(python).parent / "dumb-init"
    if beside.is_file():
        return beside
    found = shutil.which("dumb-init")
    return Path(found) if found else None


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


# seccomp: what the kernel's filter sees (struct seccomp_data: nr at 0, arch at 4), the
# classic BPF instructions it needs, and what it answers.
_LOAD_WORD, _JUMP_IF_EQUAL, _JUMP_IF_AT_LEAST, _RETURN = 0x20, 0x15, 0x35, 0x06
_ALLOW, _REFUSE = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
# The machine's architecture: its audit number, the system calls refused (the keyrings'
# add_key, request_key and keyctl; io_uring's setup, enter and register, a large part of
# the kernel that a notebook never needs), and where its numbers for another ABI begin
# (x32 on x86_64).
_REFUSED_CALLS = {
    "x86_64": (0xC000003E, (248, 249, 250, 425, 426, 427), 0x40000000),
    "aarch64": (0xC00000B7, (217, 218, 219, 425, 426, 427), None),
}


def seccomp_filter(machine: str | None = None) -> bytes | None:
    """The seccomp program (classic BPF, for ``bwrap --seccomp``) that refuses with EPERM
    the kernel keyrings' system calls and io_uring's, and every system call made through
    another ABI than the machine's own (which could reach them under other numbers).

    Written here as a dozen instructions because the maintained tool for it, libseccomp,
    has no Python binding on PyPI; Flatpak builds its filter with libseccomp in C.

    None on an architecture this module has no numbers for; grading then goes on without
    the filter, and the report's first line says so
    (:func:`course_tools.grading.grade.sandbox_description`).
    """
    import platform
    import struct

    known = _REFUSED_CALLS.get(machine or platform.machine())
    if known is None:
        return None
    arch, calls, other_abi = known
    # (code, jump if true, jump if false, value); a jump skips that many instructions.
    program = [(_LOAD_WORD, 0, 0, 4), (_JUMP_IF_EQUAL, 1, 0, arch), (_RETURN, 0, 0, _REFUSE)]
    program.append((_LOAD_WORD, 0, 0, 0))
    checks = [(_JUMP_IF_AT_LEAST, other_abi)] if other_abi else []
    checks += [(_JUMP_IF_EQUAL, number) for number in calls]
    for index, (code, value) in enumerate(checks):
        program.append((code, len(checks) - index, 0, value))  # to the refusal at the end
    program += [(_RETURN, 0, 0, _ALLOW), (_RETURN, 0, 0, _REFUSE)]
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in program)


def written_files(uid: int, gid: int, name: str) -> dict[str, int]:
    """What :func:`command` takes as ``written``: the ``/etc`` files of :func:`etc_files` and
    an empty file for each of :data:`HIDDEN_PROC_FILES` this machine has, each as a new
    descriptor (:func:`unnamed_file`) that the caller closes once ``bwrap`` has started."""
    contents = {f"/etc/{file}": data for file, data in etc_files(uid, gid, name).items()}
    contents.update({path: b"" for path in HIDDEN_PROC_FILES if os.path.exists(path)})
    return {path: unnamed_file(data) for path, data in contents.items()}


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
    if init_program() is None:
        return f"The grading sandbox needs dumb-init, which is not installed. {INIT_HINT}"
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
