"""The grading sandbox: bubblewrap around each kernel, and a control group around bubblewrap.

The whole workflow, with hostile submissions, is in test_grading_workflow.py; these tests
check the pieces, and start a real sandboxed kernel on a tiny notebook.
"""

from __future__ import annotations

import errno
import io
import json
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat
import pytest

from course_tools.grading import bubblewrap, cgroups, grade, settings

NO_SANDBOX = bubblewrap.problem()
NO_CGROUP = cgroups.unavailable()


def test_the_kernel_command_shows_python_and_the_graded_folder_and_keeps_only_harmless_variables(
    tmp_path,
):
    folder, sockets = tmp_path / "course" / "autograded" / "ana" / "a", tmp_path / "sockets"
    folder.mkdir(parents=True)
    sockets.mkdir()
    command = bubblewrap.command(
        ["python", "-m", "ipykernel_launcher", "-f", str(sockets / "kernel.json")],
        folder=folder,
        sockets=sockets,
        readable=bubblewrap.python_paths(),
        environment={
            "PATH": "/home/teacher/.local/bin:/usr/bin",
            "COURSE_QUICK": "1",
            "COURSE_GRADING_TOKEN": "x",
            "AWS_SECRET_ACCESS_KEY": "x",
            "TF_CLI_CONFIG_FILE": "x",
            "JPY_PARENT_PID": "1",
            "LC_ALL": "C.UTF-8",
            "NBGRADER_EXECUTION": "autograde",
        },
    )
    # dumb-init starts the kernel and reaps what it leaves.
    started = command[command.index("--") + 1 :]
    assert started[:2] == [str(bubblewrap.init_program()), "--"]
    assert started[2:5] == ["python", "-m", "ipykernel_launcher"]
    options = command[: command.index("--")]
    assert {"--unshare-all", "--die-with-parent", "--clearenv"} <= set(options)
    writable = [options[i + 1] for i, o in enumerate(options) if o == "--bind"]
    assert writable == [str(sockets), str(folder)]
    assert str(tmp_path / "course") not in options  # the course itself is never mounted
    assert options[options.index("--chdir") + 1] == str(folder)
    assert str(Path(sys.prefix)) in options  # read-only
    shown = [options[i + 1] for i, o in enumerate(options) if o in ("--ro-bind", "--symlink")]
    assert not {"/etc/passwd", "/etc/group", "/etc/hosts", "/etc/resolv.conf"} & set(shown)
    assert options[options.index("--hostname") + 1] == bubblewrap.HOSTNAME
    kept = {options[i + 1]: options[i + 2] for i, o in enumerate(options) if o == "--setenv"}
    # Each kept variable is named (no COURSE_* or TF_* prefix); PATH is the sandbox's own.
    assert kept == {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "COURSE_QUICK": "1",
        "LC_ALL": "C.UTF-8",
        "NBGRADER_EXECUTION": "autograde",
    }


def test_bwrap_reads_its_options_from_an_unnamed_file_so_its_command_line_shows_only_the_kernel(
    tmp_path,
):
    command = bubblewrap.command(
        ["/venv/bin/python", "-m", "ipykernel_launcher"],
        folder=tmp_path,
        sockets=tmp_path,
        readable=[],
        environment={"LANG": "C.UTF-8"},
    )
    short, descriptor = bubblewrap.hide_options(command)
    split = command.index("--")
    try:
        assert short == [command[0], "--args", str(descriptor), *command[split:]]
        assert os.readlink(f"/proc/self/fd/{descriptor}").endswith("(deleted)")
        with os.fdopen(os.dup(descriptor), "rb") as hidden:
            options = hidden.read().split(b"\0")
        assert options[-1] == b"" and [o.decode() for o in options[:-1]] == command[1:split]
    finally:
        os.close(descriptor)


def test_a_python_folder_that_holds_the_course_is_refused_with_the_fix(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    with pytest.raises(
        ValueError,
        match=r"would show .* to student code, and it holds .*course.*"
        r"install the course environment outside",
    ):
        bubblewrap.check_readable([tmp_path], [course])
    bubblewrap.check_readable([tmp_path / "venv"], [course])  # a sibling is fine


def test_the_config_starts_kernels_in_the_sandbox_unless_grading_is_unsandboxed(
    tmp_path, monkeypatch
):
    from traitlets.config import Config

    monkeypatch.delenv(settings.UNSANDBOXED_VARIABLE, raising=False)
    config = Config()
    settings.apply(
        config, root=tmp_path, course_id="c", language="en", memory_mb=2048, processes=300
    )
    assert config.Execute.kernel_manager_class.endswith("kernel.SandboxedKernelManager")
    assert config.SandboxedKernelManager.private == [str(tmp_path.resolve())]
    assert config.SandboxedKernelManager.processes == 300
    assert "'processes': 300" in config.Execute.extra_arguments[0]

    monkeypatch.setenv(settings.UNSANDBOXED_VARIABLE, "1")
    plain = Config()
    settings.apply(plain, root=tmp_path, course_id="c", language="en")
    assert "kernel_manager_class" not in plain.Execute
    # Outside a sandbox, a process limit would count all of the grader's processes.
    assert "'processes': None" in plain.Execute.extra_arguments[0]


@pytest.mark.parametrize(
    "why, expected",
    [
        (
            "no bwrap",
            r"needs bubblewrap \(bwrap\), which is not installed\. Install bubblewrap: "
            r"`sudo apt-get install bubblewrap`",
        ),
        ("macOS", r"needs Linux namespaces, which darwin does not have.*--unsandboxed"),
        ("no dumb-init", r"needs dumb-init, which is not installed\. .*`pip install dumb-init`"),
    ],
)
def test_where_no_sandbox_can_start_nothing_is_graded_and_the_error_says_what_to_do(
    tmp_path, monkeypatch, why, expected
):
    if why == "no bwrap":
        monkeypatch.setattr(bubblewrap, "executable", lambda: None)
    elif why == "no dumb-init":
        monkeypatch.setattr(bubblewrap, "init_program", lambda python=None: None)
    else:
        monkeypatch.setattr(sys, "platform", "darwin")
    with pytest.raises(grade.SandboxUnavailable, match=r"nothing was graded\. .*" + expected):
        grade.grade_all(tmp_path, "01_replay_buffers-en")


@pytest.mark.skipif(NO_CGROUP is not None, reason=f"no control group here: {NO_CGROUP}")
def test_a_control_group_caps_the_processes_of_everything_inside_and_leaves_nothing(tmp_path):
    group = cgroups.create(memory_mb=512, processes=20, cpu_seconds=60)
    assert group is not None
    # 100 sleepers in the background, then count how many exist.
    script = (
        "for i in $(seq 100); do sleep 30 2>/dev/null & done; sleep 1; ls /proc | grep -c '^[0-9]'"
    )
    started = subprocess.Popen(
        group.enter_command(["/bin/sh", "-c", script]),
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        deadline = time.monotonic() + 10
        while _refused_forks(group) == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _refused_forks(group) > 0 and 10 < len(group.pids()) <= 20
    finally:
        group.destroy()
    started.wait(timeout=10)
    assert not any(folder.exists() for folder in group.folders)


@pytest.mark.skipif(NO_CGROUP is not None, reason=f"no control group here: {NO_CGROUP}")
def test_a_control_group_past_its_cpu_time_is_killed_whole():
    group = cgroups.create(memory_mb=512, processes=20, cpu_seconds=1)
    assert group is not None
    # Two busy children: the limit counts them together.
    busy = "while :; do :; done"
    started = subprocess.Popen(
        group.enter_command(["/bin/sh", "-c", f"({busy}) & {busy}"]), start_new_session=True
    )
    try:
        assert started.wait(timeout=90) == -9  # (a loaded machine gives the loops less CPU)
        deadline = time.monotonic() + 5  # the watcher may still be killing the other loop
        while group.pids() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert group.killed_for_cpu and not group.pids()
    finally:
        group.destroy()


@pytest.mark.skipif(NO_CGROUP is not None, reason=f"no control group here: {NO_CGROUP}")
def test_a_control_group_caps_the_memory_of_its_processes_together():
    group = cgroups.create(memory_mb=200, processes=20, cpu_seconds=60)
    assert group is not None
    # Two processes of 120 MiB each: each fits alone, not both.
    hold = (
        "import time; b = bytearray(120 * 2**20); b[::4096] = b'x' * len(b[::4096]); time.sleep(20)"
    )
    command = f'{sys.executable} -c "{hold}" & {sys.executable} -c "{hold}"; wait'
    started = subprocess.Popen(
        group.enter_command(["/bin/sh", "-c", command]),
        start_new_session=True,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 15
        while _oom_kills(group) == 0 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _oom_kills(group) >= 1
    finally:
        group.destroy()
        started.wait(timeout=10)


def _refused_forks(group: cgroups.Group) -> int:
    """Forks the group's process limit has refused (``max`` in pids.events)."""
    for folder in group.folders:
        if (folder / "pids.events").exists():
            return int((folder / "pids.events").read_text().split()[-1])
    return 0


def _oom_kills(group: cgroups.Group) -> int:
    """Processes the group's memory limit has killed (memory.events, or v1's oom_control)."""
    for folder in group.folders:
        for name in ("memory.events", "memory.oom_control"):
            if (folder / name).exists():
                for line in (folder / name).read_text().splitlines():
                    if line.startswith("oom_kill "):
                        return int(line.split()[1])
    return 0


def _run_sandboxed(
    cells: list[str],
    folder: Path,
    user: str = "",
    timeout: int = 60,
    extra_arguments: list[str] | None = None,
    **manager: object,
) -> list[str]:
    from nbclient import NotebookClient
    from traitlets.config import Config

    from course_tools.grading.kernel import SandboxedKernelManager

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    client = NotebookClient(  # (it makes the kernel manager, and so shuts its kernel down)
        notebook,
        timeout=timeout,
        interrupt_on_timeout=True,
        allow_errors=True,
        kernel_manager_class=SandboxedKernelManager,
        config=Config({"SandboxedKernelManager": {"user": user, **manager}}),
        resources={"metadata": {"path": str(folder)}},
        extra_arguments=extra_arguments or [],
    )
    client.execute()
    return [
        "".join(o.get("text", "") or f"{o.get('ename')}: {o.get('evalue')}" for o in cell.outputs)
        for cell in notebook.cells
    ]


@pytest.mark.notebook
@pytest.mark.skipif(NO_SANDBOX is not None, reason=f"no sandbox here: {NO_SANDBOX}")
def test_a_sandboxed_kernel_sees_its_folder_only_reaches_no_port_and_leaves_no_process(tmp_path):
    course = tmp_path / "course"
    folder = course / "autograded" / "ana" / "a"
    folder.mkdir(parents=True)
    (course / "gradebook.db").write_text("grades")
    (course / "autograded" / "ben").mkdir()
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[object] = []
    threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True).start()
    marker = f"course-test-orphan-{os.getpid()}"
    outputs = _run_sandboxed(
        [
            "import os, socket, subprocess, sys; print(sorted(os.listdir('../..')))",
            "print(os.path.exists('../../../gradebook.db'))",
            "open('answer.txt', 'w').write('mine'); print(open('answer.txt').read())",
            f"try:\n    socket.create_connection(('127.0.0.1', {server.getsockname()[1]}), timeout=3)\n"
            "except OSError as error:\n    print(type(error).__name__)",
            f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', '{marker}'], "
            "start_new_session=True); print('started')",
        ],
        folder,
    )
    server.close()
    assert outputs == ["['ana']\n", "False\n", "mine\n", "ConnectionRefusedError\n", "started\n"]
    # What the notebook wrote was on the sandbox's own disk, gone with it.
    assert not (folder / "answer.txt").exists() and accepted == []
    time.sleep(0.5)
    assert not [cmdline for cmdline in _command_lines() if marker in cmdline]


# Prints everything a student can read of every process in the sandbox: what /proc shows
# of its environment, command line and status, and where its links lead.
_PROC_READER = """import json, os
shown = {}
for pid in sorted((p for p in os.listdir("/proc") if p.isdigit()), key=int):
    for name in ("environ", "cmdline", "status", "maps"):
        try:
            with open(f"/proc/{pid}/{name}", "rb") as file:
                shown[f"/proc/{pid}/{name}"] = file.read().decode(errors="replace")
        except OSError as error:
            shown[f"/proc/{pid}/{name}"] = error.strerror
    for name in ("cwd", "root", "exe", *(f"fd/{n}" for n in os.listdir(f"/proc/{pid}/fd"))):
        try:
            shown[f"/proc/{pid}/{name}"] = os.readlink(f"/proc/{pid}/{name}")
        except OSError as error:
            shown[f"/proc/{pid}/{name}"] = error.strerror
for path in ("/etc/passwd", "/etc/hosts", "/proc/sys/kernel/hostname", "/proc/cmdline",
             "/proc/keys"):
    shown[path] = open(path).read()
shown["user"] = __import__("getpass").getuser()
# The session keyring: KEYCTL_READ lists its keys' ids, then each key's content.
import ctypes, platform, struct
keyctl = {"x86_64": 250, "aarch64": 219}[platform.machine()]
libc, buffer = ctypes.CDLL(None, use_errno=True), ctypes.create_string_buffer(65536)
size = libc.syscall(keyctl, 11, -3, buffer, len(buffer))
shown["keyctl"] = f"{size} {os.strerror(ctypes.get_errno())}"
for key in struct.unpack(f"{max(size, 0) // 4}i", buffer.raw[: max(size, 0)]):
    size = libc.syscall(keyctl, 11, key, buffer, len(buffer))
    shown[f"key {key}"] = buffer.raw[: max(size, 0)].decode(errors="replace")
print(json.dumps(shown))
"""


_WITH_CGROUP = pytest.param(
    True, marks=pytest.mark.skipif(NO_CGROUP is not None, reason=f"no control group: {NO_CGROUP}")
)


def _secret_in_the_graders_environment(monkeypatch) -> str:
    """A random secret, under a COURSE_* name, a TF_* name, an unrelated one and in PATH."""
    secret = secrets.token_hex(16)
    for name in ("COURSE_GRADING_TOKEN", "TF_CLI_CONFIG_FILE", "JUPYTERHUB_API_TOKEN"):
        monkeypatch.setenv(name, secret)
    monkeypatch.setenv("PATH", f"/opt/{secret}/bin:{os.environ['PATH']}")
    return secret


@pytest.fixture
def shared_folder():
    """A graded folder every user may reach, as a course folder shared with ``user=`` is."""
    base = Path(tempfile.mkdtemp(prefix="course-environ-"))
    base.chmod(0o755)
    folder = base / "autograded" / "ana" / "a"
    folder.mkdir(parents=True)
    yield folder
    shutil.rmtree(base)


@pytest.mark.notebook
@pytest.mark.skipif(NO_SANDBOX is not None, reason=f"no sandbox here: {NO_SANDBOX}")
@pytest.mark.parametrize("with_cgroup", [_WITH_CGROUP, False], ids=["cgroup", "no-cgroup"])
def test_no_process_in_a_grading_kernels_sandbox_shows_the_graders_environment(
    monkeypatch, shared_folder, graders_keyring, with_cgroup
):
    secret = _secret_in_the_graders_environment(monkeypatch)
    planted = graders_keyring(secret)
    if not with_cgroup:
        monkeypatch.setattr(cgroups, "create", lambda **limits: None)
    (shown,) = _run_sandboxed([_PROC_READER], shared_folder)
    assert secret not in shown
    read = json.loads(shown)
    # Process 1 keeps the sandbox's own disk (course_tools.grading.disk), dumb-init is its
    # child and the kernel dumb-init's: no process of bubblewrap is inside to show its
    # environment, its command line or its memory.
    assert read["/proc/1/cmdline"].split("\0")[1:4] == ["-P", "-m", "course_tools.grading.disk"]
    assert read["/proc/2/cmdline"].split("\0")[:2] == [str(bubblewrap.init_program()), "--"]
    assert "ipykernel_launcher" in read["/proc/3/cmdline"]
    assert not [k for k, v in read.items() if k.endswith("/exe") and "bwrap" in v], read
    assert "--ro-bind" not in shown and "--setenv" not in shown
    # Process 1 cannot be traced or read; the others have only the variables named for
    # the kernel, and a PATH of its own.
    assert read["/proc/1/environ"] == os.strerror(errno.EACCES)
    assert read["/proc/1/fd/0"] == os.strerror(errno.EACCES)
    for pid in (2, 3):
        pairs = [pair.split("=", 1) for pair in read[f"/proc/{pid}/environ"].split("\0") if pair]
        names = {name for name, _ in pairs}
        assert "PATH" in names and names <= {*bubblewrap.KERNEL_VARIABLES, "PATH", "PWD"}, names
    # The kernel's output is a pipe the grader reads, not nbgrader's log file or a terminal.
    assert read["/proc/3/fd/1"].startswith("pipe:") and read["/proc/3/fd/2"].startswith("pipe:")
    # Nothing in the sandbox holds a capability: none can unmount its disk.
    for pid in (1, 2, 3):
        held = [line for line in read[f"/proc/{pid}/status"].splitlines() if line.startswith("Cap")]
        assert len(held) == 5 and all(line.endswith("\t0000000000000000") for line in held), held
    # Not the machine's accounts, name or boot arguments; the kernel still knows its user.
    accounts = {line.split(":")[0] for line in read["/etc/passwd"].splitlines()}
    me = "root" if os.geteuid() == 0 else "grader"
    assert accounts == {"root", "nobody", me} and read["user"] == me
    assert read["/proc/sys/kernel/hostname"].strip() == bubblewrap.HOSTNAME
    assert read["/proc/cmdline"] == read["/proc/keys"] == ""
    # The grader's keyring is out of reach (the secret is in it where keyctl works here).
    assert read["keyctl"] == f"-1 {os.strerror(errno.EPERM)}", (read["keyctl"], planted)


@pytest.fixture
def graders_keyring():
    """Puts a secret in the grader's session keyring, as a login session's keys would be;
    returns whether it could (a container's seccomp profile may refuse keyctl)."""
    import ctypes
    import platform

    numbers = {"x86_64": (248, 250), "aarch64": (217, 219)}.get(platform.machine())
    libc = ctypes.CDLL(None, use_errno=True)
    added: list[int] = []

    def plant(secret: str) -> bool:
        if numbers is None:
            return False
        payload = secret.encode()
        key = libc.syscall(numbers[0], b"user", b"course:grading-token", payload, len(payload), -3)
        if key > 0:
            added.append(key)
        return key > 0

    yield plant
    for key in added:  # KEYCTL_REVOKE
        libc.syscall(numbers[1], 3, key) if numbers else None


def _grading_user_problem() -> str | None:
    if os.geteuid() != 0:
        return "grading as another user needs root"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed"
    return None


# What a process in the sandbox can read of every process there, in the shell (so that any
# user can run it: a Python environment under /root is not readable by nobody).
_SHELL_PROC_READER = (
    "for p in /proc/[0-9]*; do for f in environ cmdline status maps; do "
    'echo "== $p/$f"; cat "$p/$f"; echo; done; '
    'for l in "$p"/cwd "$p"/root "$p"/exe "$p"/fd/*; do echo "== $l -> $(readlink "$l")"; '
    "done; done; "
    "for f in /etc/passwd /etc/group /etc/hosts /proc/sys/kernel/hostname /proc/cmdline; do "
    'echo "== $f"; cat "$f"; done'
)


@pytest.mark.skipif(NO_SANDBOX is not None, reason=f"no sandbox here: {NO_SANDBOX}")
@pytest.mark.parametrize("with_cgroup", [_WITH_CGROUP, False], ids=["cgroup", "no-cgroup"])
@pytest.mark.parametrize(
    "user",
    [
        "",
        pytest.param(
            "nobody",
            marks=pytest.mark.skipif(
                _grading_user_problem() is not None, reason=str(_grading_user_problem())
            ),
        ),
    ],
    ids=["grader", "user-nobody"],
)
def test_every_way_of_starting_a_sandbox_keeps_the_graders_environment_out(
    monkeypatch, shared_folder, with_cgroup, user
):
    from course_tools.grading.kernel import sandbox_command

    secret = _secret_in_the_graders_environment(monkeypatch)
    sockets = Path(tempfile.mkdtemp(prefix="cg-"))
    group = cgroups.create(memory_mb=512, processes=64, cpu_seconds=60) if with_cgroup else None
    command, descriptors = sandbox_command(
        ["/bin/sh", "-c", _SHELL_PROC_READER],
        folder=shared_folder,
        sockets=sockets,
        readable=[],
        environment=os.environ,
        user=user,
        group=group,
    )
    try:
        ran = subprocess.run(
            command,
            env=bubblewrap.BWRAP_ENVIRONMENT,
            pass_fds=descriptors,
            cwd=shared_folder,
            capture_output=True,
            text=True,
            timeout=30,
        )
    finally:
        for descriptor in descriptors:
            os.close(descriptor)
        if group is not None:
            group.destroy()
        shutil.rmtree(sockets)
    assert ran.returncode == 0, ran.stderr
    shown = ran.stdout
    assert secret not in shown + ran.stderr
    read: dict[str, str] = {}
    for part in shown.split("== ")[1:]:  # "== <what>\n<its content>"
        what, _, content = part.partition("\n")
        read[what] = content
    # dumb-init is process 1, the command process 2; no process of bubblewrap is inside.
    assert read["/proc/1/cmdline"].split("\0")[1:2] == ["--"]
    assert read["/proc/2/cmdline"].split("\0")[:2] == ["/bin/sh", "-c"]
    assert not [k for k, v in read.items() if k.endswith("/exe") and "bwrap" in v]
    assert "--ro-bind" not in shown and "--setenv" not in shown
    named = {name for name in bubblewrap.KERNEL_VARIABLES if name in os.environ}
    for pid in (1, 2):
        pairs = read[f"/proc/{pid}/environ"].strip("\n").split("\0")
        assert {pair.split("=")[0] for pair in pairs if pair} == {*named, "PATH", "PWD"}
    expected_uid = str(pwd.getpwnam(user).pw_uid) if user else str(os.geteuid())
    assert read["/proc/2/status"].split("Uid:\t", 1)[1].split("\t", 1)[0] == expected_uid
    # bwrap closed the unnamed files it read (options, /etc files, seccomp filter).
    held = [what.split(" -> ")[1] for what in read if what.startswith("/proc/1/fd/")]
    assert held and not [h for h in held if "(deleted)" in h or h.startswith("/tmp/")], held
    # The machine's accounts and name stay outside: root, nobody and the sandbox's user.
    accounts = [line.split(":")[0] for line in read["/etc/passwd"].splitlines()]
    assert sorted(accounts) == sorted({"root", "nobody", user or "root"}), accounts
    assert read["/proc/sys/kernel/hostname"].strip() == bubblewrap.HOSTNAME
    assert read["/proc/cmdline"].strip() == ""


def _command_lines() -> list[str]:
    found = []
    for path in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            found.append(path.read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:  # ended meanwhile
            pass
    return found


@pytest.mark.skipif(os.geteuid() != 0, reason="handing folders to another user needs root")
def test_a_grading_user_starts_the_sandbox_and_owns_only_the_graded_folder(tmp_path):
    import pwd

    from course_tools.grading.kernel import _as_user

    nobody = pwd.getpwnam("nobody")
    folder, sockets, course_file = (
        tmp_path / "graded",
        tmp_path / "sockets",
        tmp_path / "gradebook.db",
    )
    folder.mkdir()
    sockets.mkdir()
    (folder / "answer.ipynb").write_text("{}")
    course_file.write_text("grades")
    command = _as_user("nobody", ["bwrap", "--", "python"], [folder, sockets])
    assert command[:5] == [
        shutil.which("setpriv"),
        f"--reuid={nobody.pw_uid}",
        f"--regid={nobody.pw_gid}",
        "--clear-groups",
        "--",
    ]
    assert command[5:] == ["bwrap", "--", "python"]
    owners = {p.stat().st_uid for p in (folder, folder / "answer.ipynb", sockets)}
    assert owners == {nobody.pw_uid} and course_file.stat().st_uid == os.geteuid()


def test_the_private_tmp_is_mounted_before_python_so_an_environment_under_tmp_stays_visible(
    tmp_path,
):
    venv = Path("/tmp/some-course-venv")
    command = bubblewrap.command(
        ["python"], folder=tmp_path, sockets=tmp_path, readable=[venv], environment={}
    )
    assert command.index("/tmp") < command.index(str(venv))


def _relayed(data: bytes, limit: int = 2**20, target: io.StringIO | None = None) -> str:
    """What relay_output writes to the log for ``data``, sent through a real pipe."""
    from course_tools.grading.kernel import relay_output

    read, write = os.pipe()
    target = target if target is not None else io.StringIO()
    thread = relay_output(os.fdopen(read, "rb"), target, limit=limit)
    with os.fdopen(write, "wb") as pipe:  # blocks if the relay stopped reading
        pipe.write(data)
    thread.join(timeout=30)
    assert not thread.is_alive()
    return target.getvalue() if not target.closed else ""


@pytest.mark.parametrize("separator", ["\r", "\f", "\x1e", "\x85", "\u2028", "\n"])
def test_no_line_a_kernel_writes_reads_as_the_graders_in_the_log(separator):
    from course_tools.grading.kernel import KERNEL_PREFIX
    from course_tools.grading.sanitize import NOTE

    forged = f"ok{separator}{NOTE} ex-time-answer: full marks\n".encode()
    log = _relayed(forged)
    lines = log.splitlines()  # as course grade reads the log
    assert NOTE in log and lines and all(line.startswith(KERNEL_PREFIX) for line in lines)


def test_a_kernels_output_past_the_limit_is_left_out_and_the_pipe_still_drains():
    log = _relayed(b"x" * (8 * 2**20) + b"\n" + b"y\n" * 2**20, limit=2**20)
    assert len(log) < 2**20 + 2**17
    assert log.splitlines()[-1].endswith("output past 1 MiB left out of this log]")


def test_a_log_that_cannot_be_written_does_not_block_the_kernel():
    closed = io.StringIO()
    closed.close()
    _relayed(b"z" * (4 * 2**20), target=closed)  # returns: the pipe was read to its end


@pytest.mark.notebook
@pytest.mark.skipif(NO_SANDBOX is not None, reason=f"no sandbox here: {NO_SANDBOX}")
def test_orphans_of_a_submission_are_reaped_and_do_not_use_up_the_process_limit(shared_folder):
    # 100 shells that each leave an orphan behind, with a limit of 64 processes and threads.
    outputs = _run_sandboxed(
        [
            "import os, subprocess, time\n"
            "for _ in range(100):\n"
            "    subprocess.run(['sh', '-c', 'true & exit 0'], check=True)\n"
            "time.sleep(0.5)\n"
            "states = [open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()[0]\n"
            "          for p in os.listdir('/proc') if p.isdigit()]\n"
            "print('zombies:', states.count('Z'))"
        ],
        shared_folder,
    )
    assert outputs == ["zombies: 0\n"], outputs


@pytest.mark.notebook
@pytest.mark.skipif(NO_SANDBOX is not None, reason=f"no sandbox here: {NO_SANDBOX}")
def test_a_cell_past_its_time_is_interrupted_and_the_next_one_runs(shared_folder):
    # As grading does at cell_timeout: a busy loop, then a child that sleeps.
    outputs = _run_sandboxed(
        [
            "while True:\n    pass",
            "import subprocess\nsubprocess.run(['sleep', '60'])",
            "print('still here')",
        ],
        shared_folder,
        timeout=5,
    )
    assert outputs[0].startswith("KeyboardInterrupt") and outputs[1].startswith("KeyboardInterrupt")
    assert outputs[2] == "still here\n"


def test_a_sandbox_that_cannot_be_built_leaves_no_descriptor_open(tmp_path, monkeypatch):
    from course_tools.grading.kernel import sandbox_command

    monkeypatch.setattr(bubblewrap, "init_program", lambda python=None: None)
    before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(FileNotFoundError, match="dumb-init is not installed"):
        sandbox_command(["python"], folder=tmp_path, sockets=tmp_path, readable=[], environment={})
    assert set(os.listdir("/proc/self/fd")) == before


@pytest.mark.notebook
@pytest.mark.skipif(NO_SANDBOX is not None, reason=f"no sandbox here: {NO_SANDBOX}")
def test_a_notebook_that_fills_its_disk_gets_no_space_and_the_grader_a_note(tmp_path, capsys):
    folder = tmp_path / "autograded" / "ana" / "a"
    folder.mkdir(parents=True)
    (folder / "given.csv").write_text("1,2\n")
    outputs = _run_sandboxed(
        [
            "print(open('given.csv').read().strip())",
            "try:\n    open('big.bin', 'wb').write(b'x' * 2**25)\n"
            "except OSError as error:\n    print(error.strerror)",
            "made = 0\ntry:\n    while True:\n"
            "        open(f'f{made}', 'w').close(); made += 1\n"
            "except OSError as error:\n    print(made, error.strerror)",
            "print('still running')",
        ],
        folder,
        disk_mb=16,
        disk_files=200,
    )
    # 200 files and folders: given.csv, big.bin and 198 more.
    assert outputs == [
        "1,2\n",
        "No space left on device\n",
        "198 No space left on device\n",
        "still running\n",
    ], outputs
    log = capsys.readouterr().err
    assert "course-grading-note: over the disk limit: the graded folder held 16.0 MiB" in log
    assert "held 200 files and folders of at most 200" in log
    assert sorted(p.name for p in folder.iterdir()) == ["given.csv"]  # nothing came out


@pytest.mark.notebook
@pytest.mark.skipif(NO_SANDBOX is not None, reason=f"no sandbox here: {NO_SANDBOX}")
def test_too_many_files_in_tmp_end_the_sandbox_with_a_note(tmp_path, capsys):
    folder = tmp_path / "autograded" / "ana" / "a"
    folder.mkdir(parents=True)
    from nbclient.exceptions import DeadKernelError

    with pytest.raises(DeadKernelError):
        _run_sandboxed(
            ["for made in range(100_000):\n    open(f'/tmp/f{made}', 'w').close()"],
            folder,
            disk_files=500,
        )
    assert "course-grading-note: over the disk limit: /tmp held" in capsys.readouterr().err


@pytest.mark.notebook
@pytest.mark.skipif(NO_SANDBOX is not None, reason=f"no sandbox here: {NO_SANDBOX}")
def test_a_submission_larger_than_the_disk_is_not_run_and_the_grader_is_told(tmp_path, capsys):
    folder = tmp_path / "autograded" / "ana" / "a"
    folder.mkdir(parents=True)
    (folder / "huge.bin").write_bytes(b"x" * 3 * 2**20)
    with pytest.raises(RuntimeError, match="Kernel died"):
        _run_sandboxed(["print('never')"], folder, disk_mb=2)
    assert "course-grading-note: over the disk limit: the graded folder held" in (
        capsys.readouterr().err
    )


_SHADOW = "print('SHADOWED', __name__, flush=True)\n"


@pytest.mark.notebook
@pytest.mark.skipif(NO_SANDBOX is not None, reason=f"no sandbox here: {NO_SANDBOX}")
def test_modules_in_the_submission_shadow_neither_process_1_nor_the_kernel_nor_confine(
    tmp_path, capsys
):
    # A submission that brings its own argparse (process 1 imports it), ipykernel_launcher
    # (the kernel's module) and course_tools (the confinement): none may run in their place.
    folder = tmp_path / "autograded" / "ana" / "a"
    (folder / "course_tools" / "grading").mkdir(parents=True)
    for name in ("argparse.py", "ipykernel_launcher.py", "json.py", "resource.py"):
        (folder / name).write_text(_SHADOW)
    for name in ("__init__.py", "grading/__init__.py", "grading/sandbox.py", "grading/disk.py"):
        (folder / "course_tools" / name).write_text(_SHADOW)
    from course_tools.grading import sandbox

    confined = sandbox.startup_line(
        cpu_seconds=60, memory_mb=4096, file_mb=16, user=None, processes=100, quick=True
    )
    outputs = _run_sandboxed(
        [
            "import resource, sys\nprint(resource.getrlimit(resource.RLIMIT_NPROC)[0])",
            "print([line for line in open('/proc/self/status') if line.startswith('CapEff')])",
            "try:\n    open('/tmp/outside.txt', 'w')\nexcept PermissionError:\n    print('refused')",
        ],
        folder,
        extra_arguments=[f"--IPKernelApp.exec_lines={[confined]!r}"],
    )
    assert "SHADOWED" not in capsys.readouterr().err + "".join(outputs), outputs
    assert outputs == ["100\n", "['CapEff:\\t0000000000000000\\n']\n", "refused\n"], outputs


@pytest.mark.notebook
@pytest.mark.skipif(NO_SANDBOX is not None, reason=f"no sandbox here: {NO_SANDBOX}")
def test_process_1_survives_the_signals_a_kernel_can_send_it(tmp_path):
    folder = tmp_path / "autograded" / "ana" / "a"
    folder.mkdir(parents=True)
    outputs = _run_sandboxed(
        [
            "import os, signal, time\n"
            "for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1):\n"
            "    os.kill(1, number)\n"
            "time.sleep(0.5)\nprint('alive')",
            "print('still alive')",
        ],
        folder,
    )
    assert outputs == ["alive\n", "still alive\n"], outputs


@pytest.mark.notebook
@pytest.mark.skipif(NO_SANDBOX is not None, reason=f"no sandbox here: {NO_SANDBOX}")
def test_dev_shm_has_the_disk_limits_and_the_socket_folder_ends_the_sandbox(tmp_path, capsys):
    from nbclient.exceptions import DeadKernelError

    folder = tmp_path / "autograded" / "ana" / "a"
    folder.mkdir(parents=True)
    outputs = _run_sandboxed(
        [
            "try:\n    open('/dev/shm/big', 'wb').write(b'x' * 2**25)\n"
            "except OSError as error:\n    print(error.strerror)",
        ],
        folder,
        disk_mb=16,
    )
    assert outputs == ["No space left on device\n"], outputs
    with pytest.raises(DeadKernelError):  # files where the kernel's sockets are
        _run_sandboxed(
            [
                "import os\nsockets = os.path.dirname(os.environ.get('JPY_SESSION_NAME', '') or "
                "[a for a in open('/proc/self/cmdline').read().split(chr(0)) if a.endswith('.json')][0])\n"
                "for made in range(5_000):\n    open(f'{sockets}/f{made}', 'w').close()"
            ],
            folder,
        )
    assert "over the disk limit: the socket folder held" in capsys.readouterr().err


def test_a_dead_kernels_sandbox_is_cleaned_up_by_the_method_nbclient_calls():
    from course_tools.grading.kernel import SandboxedKernelManager

    assert (
        SandboxedKernelManager.cleanup_resources is SandboxedKernelManager._async_cleanup_resources
    )
