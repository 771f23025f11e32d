"""A Linux control group per grading kernel: limits that hold for the whole sandbox.

Resource limits set with ``setrlimit`` count one process at a time, so a submission that
starts children multiplies them. A control group counts the kernel and every process it
starts together: its memory (``memory.max``, or ``memory.limit_in_bytes`` in the older
cgroup v1 layout), its processes and threads (``pids.max``) and its CPU time (read from
``cpu.stat`` or ``cpuacct.usage``; a watcher kills the whole group when it exceeds the
limit, since the kernel offers a CPU-time rate limit but no total).

Making a control group needs write access to ``/sys/fs/cgroup``: root has it. Another user
has it in a group *delegated* to them, the way systemd delegates one
(``systemd-run --user --scope -p Delegate=yes course grade ...``, or an administrator's
``chown`` of a group in each cgroup v1 hierarchy): grading then makes its groups inside the
group it was started in. :func:`create` returns None where it cannot make one, and
:func:`unavailable` says why; grading then keeps the per-process limits of
:mod:`course_tools.grading.sandbox` and bubblewrap's process-number namespace.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
# cgroup v1: one hierarchy per controller (cpu and cpuacct are often one, "cpu,cpuacct").
V1_CONTROLLERS = ("memory", "pids", "cpuacct")
# The cpu controller, where there is one, makes the sandbox share the processor with the
# grader as one group, however many processes a submission starts.
V1_OPTIONAL = ("cpu",)

# Puts its own process into each control group named, then becomes the command, with the
# environment it was given: the shell's own PWD and OLDPWD are not passed on.
_ENTER = (
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 70; shift; '
    'n=$((n - 1)); done; unset PWD OLDPWD; exec "$@"'
)


def version() -> int | None:
    """2 for the unified hierarchy, 1 for the older per-controller layout, None for none."""
    if (ROOT / "cgroup.controllers").exists():
        return 2
    if all((ROOT / name / "cgroup.procs").exists() for name in V1_CONTROLLERS):
        return 1
    return None


@dataclass
class Group:
    """One control group (one folder per hierarchy in cgroup v1) and its CPU watcher."""

    folders: list[Path]
    version: int
    cpu_seconds: float
    killed_for_cpu: bool = False
    _stop: threading.Event = field(default_factory=threading.Event)

    def enter_command(self, command: Sequence[str]) -> list[str]:
        """``command``, started inside this group before it runs anything."""
        procs = [str(folder / "cgroup.procs") for folder in self.folders]
        return ["/bin/sh", "-c", _ENTER, "sh", str(len(procs)), *procs, *command]

    def cpu_usage(self) -> float:
        """CPU seconds used by every process that has been in the group."""
        try:
            if self.version == 2:
                for line in (self.folders[0] / "cpu.stat").read_text().splitlines():
                    if line.startswith("usage_usec "):
                        return int(line.split()[1]) / 1e6
                return 0.0
            cpuacct = self.folders[V1_CONTROLLERS.index("cpuacct")]  # before any co-mounted cpu
            return int((cpuacct / "cpuacct.usage").read_text()) / 1e9
        except (OSError, ValueError):
            return 0.0

    def pids(self) -> set[int]:
        found: set[int] = set()
        for folder in self.folders:
            try:
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
            except OSError:
                pass
        return found

    def kill(self) -> None:
        """SIGKILL every process in the group, until none is left (at most 5 s)."""
        if self.version == 2 and (self.folders[0] / "cgroup.kill").exists():
            try:
                (self.folders[0] / "cgroup.kill").write_text("1")
            except OSError:
                pass
        deadline = time.monotonic() + 5
        while (left := self.pids()) and time.monotonic() < deadline:
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)

    def watch(self, interval: float = 0.5) -> None:
        """Kill the group once its CPU time passes ``cpu_seconds`` (in a daemon thread)."""

        def run() -> None:
            while not self._stop.wait(interval):
                if self.cpu_usage() > self.cpu_seconds:
                    self.killed_for_cpu = True
                    self.kill()
                    return

        threading.Thread(target=run, name="course-grading-cpu-watch", daemon=True).start()

    def destroy(self) -> None:
        """Kill what is left and remove the group's folders."""
        self._stop.set()
        self.kill()
        for folder in self.folders:
            for _ in range(50):  # a killed process leaves the group once it is reaped
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)


# In a delegated cgroup v2 group, the processes already there (the grader and what it
# started) move into this child: a v2 group that hands controllers to its children may hold
# no process itself. Its name is not one that sweep() removes.
LEAF = "course-grader"
HINT = (
    "run it as root, or in a control group delegated to you: "
    "systemd-run --user --scope -p Delegate=yes course grade ..."
)


def _own_v2() -> Path:
    """This process's own group in the unified hierarchy (``/proc/self/cgroup``'s ``0::``)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        if line.startswith("0::"):
            return ROOT / line[3:].strip().lstrip("/")
    return ROOT


def _v2_parent() -> Path:
    """Where grading makes its groups in cgroup v2: the root where it may write there (as
    root), otherwise the group it was started in (delegated, or the probe fails)."""
    if os.access(ROOT, os.W_OK):
        return ROOT
    own = _own_v2()
    return own.parent if own.name == LEAF else own


def _prepare_v2(parent: Path) -> str | None:
    """Let ``parent``'s children have memory and process limits; why not, where it cannot.

    The root has its controllers enabled by the system. A delegated group has them
    *available* (``cgroup.controllers``) and must enable them for its children
    (``cgroup.subtree_control``), which the kernel allows only once no process is in the
    group itself: they move to :data:`LEAF` first, as systemd's documentation of
    delegation describes.
    """
    wanted = {"memory", "pids"}
    if parent == ROOT:
        enabled = set((ROOT / "cgroup.subtree_control").read_text().split())
        missing = wanted - enabled
        return (
            f"the control groups under {ROOT} lack the controllers {', '.join(sorted(missing))}"
            if missing
            else None
        )
    available = set((parent / "cgroup.controllers").read_text().split())
    if wanted - available:
        return (
            f"the control group {parent} was delegated without the controllers "
            f"{', '.join(sorted(wanted - available))}"
        )
    enabled = set((parent / "cgroup.subtree_control").read_text().split())
    if wanted <= enabled:
        return None
    leaf = parent / LEAF
    try:
        leaf.mkdir(exist_ok=True)
        for pid in (parent / "cgroup.procs").read_text().split():
            try:
                (leaf / "cgroup.procs").write_text(pid)
            except ProcessLookupError:  # it ended meanwhile
                pass
        (parent / "cgroup.subtree_control").write_text(
            " ".join(f"+{name}" for name in sorted(wanted - enabled))
        )
    except OSError as error:
        return f"grading cannot enable memory and process limits in {parent} ({error.strerror})"
    try:  # the cpu controller, where delegated, makes the sandbox share the processor fairly
        if "cpu" in available - enabled:
            (parent / "cgroup.subtree_control").write_text("+cpu")
    except OSError:
        pass
    return None


def description() -> str:
    """Which control groups grading makes, for the report's first line."""
    found = version()
    if found == 2:
        parent = _v2_parent()
        return "cgroup v2" if parent == ROOT else f"cgroup v2, delegated: {parent}"
    parent = _v1_parent("pids")
    if os.geteuid() == 0 or parent == ROOT / "pids":
        return f"cgroup v{found}"
    return f"cgroup v1, delegated: {parent.relative_to(ROOT / 'pids')}"


def _v1_parent(controller: str) -> Path:
    """This process's own group in one v1 hierarchy (``/proc/self/cgroup``)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            parent = ROOT / controller / path.lstrip("/")
            if parent.is_dir():
                return parent
    return ROOT / controller


def unavailable() -> str | None:
    """Why no control group can be made here (None when one can)."""
    found = version()
    if found is None:
        return "this system has no cgroup file system at /sys/fs/cgroup"
    name = f"course-grading-probe-{uuid.uuid4().hex[:8]}"
    parents = [_v2_parent()] if found == 2 else [_v1_parent(c) for c in V1_CONTROLLERS]
    for parent in dict.fromkeys(parents):  # co-mounted controllers share one folder
        probe = parent / name
        try:
            probe.mkdir()
        except OSError as error:
            return f"grading cannot create a control group ({error.strerror}: {parent}); {HINT}"
        probe.rmdir()
    return _prepare_v2(parents[0]) if found == 2 else None


def create(*, memory_mb: int, processes: int, cpu_seconds: float) -> Group | None:
    """A new group with these limits, its CPU watcher running; None where none can be made."""
    if unavailable() is not None:
        return None
    name = f"course-grading-{uuid.uuid4().hex[:12]}"
    found = version()
    if found == 2:
        folder = _v2_parent() / name
        folder.mkdir()
        (folder / "memory.max").write_text(str(memory_mb * 2**20))
        (folder / "pids.max").write_text(str(processes))
        group = Group([folder], 2, cpu_seconds)  # (cpu.weight: one share, as in v1)
    else:
        folders = [_v1_parent(controller) / name for controller in V1_CONTROLLERS]
        optional = [
            _v1_parent(controller) / name
            for controller in V1_OPTIONAL
            if (ROOT / controller / "cgroup.procs").exists()
        ]
        unique: list[Path] = []
        for folder in folders + optional:  # co-mounted controllers share one folder
            if folder.resolve() not in [f.resolve() for f in unique]:
                try:
                    folder.mkdir()
                except PermissionError:
                    if folder not in optional:  # (cpu may not be delegated: it is optional)
                        raise
                    continue
                unique.append(folder)
        (folders[0] / "memory.limit_in_bytes").write_text(str(memory_mb * 2**20))
        (folders[1] / "pids.max").write_text(str(processes))
        group = Group(unique, 1, cpu_seconds)
    group.watch()
    return group


def sweep(older_than: float = 60.0) -> None:
    """Remove empty groups this module made that outlived their grader (killed for time)."""
    if version() is None:
        return
    parents = (
        [_v2_parent()]
        if version() == 2
        else [
            _v1_parent(c)
            for c in (*V1_CONTROLLERS, *V1_OPTIONAL)
            if (ROOT / c / "cgroup.procs").exists()
        ]
    )
    for parent in parents:
        for folder in parent.glob("course-grading-*"):
            try:
                if time.time() - folder.stat().st_mtime > older_than:
                    folder.rmdir()  # refused while a process is inside
            except OSError:
                pass
