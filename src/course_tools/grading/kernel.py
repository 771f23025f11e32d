"""The Jupyter kernel manager that starts each grading kernel in a sandbox.

nbgrader runs a submission through nbclient, which asks a ``KernelManager`` to start,
interrupt and stop the kernel. The course's configuration names
:class:`SandboxedKernelManager` (``c.Execute.kernel_manager_class``), which changes three
things, and nothing else, about jupyter_client's own manager:

- the kernel command is wrapped in bubblewrap (:mod:`course_tools.grading.bubblewrap`),
  inside a control group when this machine lets grading make one
  (:mod:`course_tools.grading.cgroups`);
- the kernel talks to nbgrader over Unix sockets in a private folder (ZeroMQ's ``ipc``
  transport), since the sandbox has no network;
- an interrupt is a message on the control channel (the kernel then signals itself),
  because a signal sent from outside would reach bubblewrap, not the kernel;
- what starts the sandbox (bubblewrap, and the ``setpriv`` and control-group steps before
  it) gets no environment at all, and bubblewrap its options through an unnamed file,
  since the sandbox's process 1 shows both (see :mod:`course_tools.grading.bubblewrap`).

When the kernel ends (shut down, killed, or at the end of grading), the whole sandbox
ends with it: bubblewrap's process-number namespace takes every process the kernel
started, those in new sessions too, and the control group's remaining processes are
killed before it is removed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, TextIO

from jupyter_client.manager import AsyncKernelManager
from traitlets import Int, List, Unicode

from course_tools.grading import bubblewrap, cgroups, disk


class SandboxedKernelManager(AsyncKernelManager):
    """An ``AsyncKernelManager`` (what nbclient uses) whose kernel runs in bubblewrap, with whole-sandbox limits."""

    memory_mb = Int(8192, help="memory of the whole sandbox, MiB (with a control group)").tag(
        config=True
    )
    processes = Int(64, help="processes and threads of the whole sandbox").tag(config=True)
    cpu_seconds = Int(900, help="CPU time of the whole sandbox (with a control group)").tag(
        config=True
    )
    private = List(Unicode(), help="folders the kernel must never see (the course folder)").tag(
        config=True
    )
    user = Unicode(
        "", help="run the sandbox as this user (grading as root); empty: as grading"
    ).tag(config=True)
    disk_mb = Int(
        512, help="what the graded folder may hold, MiB (0: no disk of its own); /tmp too"
    ).tag(config=True)
    disk_files = Int(
        10_000, help="files and folders the graded folder may hold, and /tmp and /dev/shm"
    ).tag(config=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # A short path: a Unix socket's name is limited to about 100 characters.
        self._sockets = Path(tempfile.mkdtemp(prefix="cg-"))
        self.transport = "ipc"
        self.ip = str(self._sockets / "k")
        self.connection_file = str(self._sockets / "kernel.json")
        self._group: cgroups.Group | None = None
        self._descriptors: tuple[int, ...] = ()  # bwrap's unnamed files, until it starts
        self._disk_reader: threading.Thread | None = None

    async def _async_pre_start_kernel(self, **kw: Any) -> tuple[list[str], dict[str, Any]]:
        kernel_cmd, kw = await super()._async_pre_start_kernel(**kw)
        assert self.kernel_spec is not None
        if kernel_cmd[1:2] == ["-m"]:  # -P: the graded folder is not on the import path, so
            kernel_cmd = [kernel_cmd[0], "-P", *kernel_cmd[1:]]  # a submitted module shadows none
        self.kernel_spec.interrupt_mode = "message"
        folder = Path(kw.get("cwd") or os.getcwd()).resolve()
        readable = bubblewrap.python_paths(kernel_cmd[0])
        bubblewrap.check_readable(readable, [Path(p).resolve() for p in self.private])
        self._group = cgroups.create(
            memory_mb=self.memory_mb, processes=self.processes, cpu_seconds=self.cpu_seconds
        )
        disk_ends: tuple[int, int] | None = os.pipe() if self.disk_mb > 0 else None
        try:
            sandboxed, self._descriptors = sandbox_command(
                kernel_cmd,
                folder=folder,
                sockets=self._sockets,
                readable=readable,
                environment=kw.get("env") or os.environ,
                user=self.user,
                group=self._group,
                disk=None
                if disk_ends is None
                else bubblewrap.Disk(
                    self.disk_mb * 2**20, self.disk_files, disk_ends[1], sockets=self._sockets
                ),
            )
        except BaseException:  # no control group left behind a sandbox that never started
            if self._group is not None:
                self._group.destroy()
                self._group = None
            if disk_ends is not None:
                os.close(disk_ends[0])
                os.close(disk_ends[1])
            raise
        if disk_ends is not None:
            self._disk_reader = relay_disk_reports(os.fdopen(disk_ends[0], "rb"), sys.stderr)
        # No JPY_PARENT_PID (``independent``): bwrap's environment stays empty. The
        # kernel's output goes to a pipe (see relay_output), not to the grader's own.
        kw.update(
            env=dict(bubblewrap.BWRAP_ENVIRONMENT),
            independent=True,
            pass_fds=self._descriptors,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        return sandboxed, kw

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
        try:
            await super()._async_launch_kernel(kernel_cmd, **kw)
        finally:  # the started process holds its own copies
            for descriptor in self._descriptors:
                os.close(descriptor)
            self._descriptors = ()
        process = getattr(self.provisioner, "process", None)
        if process is not None and process.stdout is not None:
            relay_output(process.stdout, sys.stderr)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if self._disk_reader is not None:  # the sandbox has ended: its last report is in
            self._disk_reader.join(timeout=5)
            self._disk_reader = None
        if self._group is not None:
            self._group.destroy()
            self._group = None
        if not restart:
            shutil.rmtree(self._sockets, ignore_errors=True)

    # jupyter_client's AsyncKernelManager binds cleanup_resources to its own base method,
    # which nbclient calls when a kernel dies: bind it to this class's, so that a dead
    # sandbox's control group and socket folder go too.
    cleanup_resources = _async_cleanup_resources


#: Put before each line the sandboxed kernel writes, in the grader's log.
KERNEL_PREFIX = "[sandboxed kernel] "
#: The longest line relayed whole, and what the log takes of one kernel's output in all.
LINE_LIMIT = 16 * 2**10
OUTPUT_LIMIT = 16 * 2**20


def relay_output(source: IO[bytes], target: TextIO, limit: int = OUTPUT_LIMIT) -> threading.Thread:
    """Copy the kernel's output to ``target`` (nbgrader's log), in a daemon thread that
    ends with the output: each line after :data:`KERNEL_PREFIX`, at most ``limit`` bytes
    in all, and then one line that says the rest was left out.

    The kernel's own descriptors 1 and 2 are this pipe's end: were they the grader's log
    file or terminal, ``/proc/self/fd/1`` would reopen them, to read what nbgrader wrote
    there or what the instructor types. The prefix goes before every piece of text that
    ``str.splitlines`` would make a line (a carriage return, a form feed, U+2028 end one
    too), so that no line of the log reads as nbgrader's: :mod:`course_tools.grading.grade`
    takes notes from nbgrader's lines only. The pipe is read to its end whatever happens
    (a line longer than :data:`LINE_LIMIT` comes in pieces; past ``limit``, or if
    ``target`` fails, the rest is read and dropped), so the kernel never blocks on it.
    """

    def copy() -> None:
        written, open_target = 0, True
        with source:
            for chunk in iter(lambda: source.readline(LINE_LIMIT), b""):
                if not open_target:
                    continue
                if written + len(chunk) > limit:
                    left_out = f"output past {limit // 2**20} MiB left out of this log"
                    chunk, open_target = f"[{left_out}]".encode(), False
                written += len(chunk)
                pieces = chunk.decode(errors="replace").splitlines() or [""]
                try:
                    target.write("".join(f"{KERNEL_PREFIX}{piece}\n" for piece in pieces))
                    target.flush()
                except (OSError, ValueError, AttributeError):  # closed, or no stderr at all
                    open_target = False

    thread = threading.Thread(target=copy, name="course-grading-kernel-output", daemon=True)
    thread.start()
    return thread


def relay_disk_reports(source: IO[bytes], target: TextIO) -> threading.Thread:
    """Write a note to ``target`` (nbgrader's log) for each limit of the sandbox's own disk
    (:mod:`course_tools.grading.disk`) that it reports reached; in a daemon thread that
    ends when the sandbox does. :mod:`course_tools.grading.grade` reads the notes."""
    from course_tools.grading.sanitize import note_mark

    mark = note_mark()

    def relay() -> None:
        written: set[str] = set()
        with source:  # (read to its end, so that process 1 never blocks)
            for report in disk.read_reports(source):
                for note in disk.describe(report) if report.full else []:
                    if note in written or len(written) >= disk.MOST_NOTES:
                        continue
                    written.add(note)
                    try:
                        target.write(f"{mark} {note}\n")
                        target.flush()
                    except (OSError, ValueError, AttributeError):
                        pass

    thread = threading.Thread(target=relay, name="course-grading-disk", daemon=True)
    thread.start()
    return thread


def sandbox_command(
    kernel: list[str],
    *,
    folder: Path,
    sockets: Path,
    readable: list[Path],
    environment: Mapping[str, str],
    user: str = "",
    group: cgroups.Group | None = None,
    disk: bubblewrap.Disk | None = None,
) -> tuple[list[str], tuple[int, ...]]:
    """The command that starts ``kernel`` in its sandbox, and the descriptors it inherits.

    bubblewrap's command (:func:`course_tools.grading.bubblewrap.command`), its ``/etc``
    accounts written for the user it runs as, its seccomp filter, its options in an
    unnamed file; started as
    ``user`` where one is named; inside ``group`` where there is one; with the sandbox's
    own disk where ``disk`` says (its report descriptor is among those returned). Run it
    with ``env=bubblewrap.BWRAP_ENVIRONMENT`` and ``pass_fds=descriptors``, then close them.
    """
    import pwd

    if user:
        record = pwd.getpwnam(user)
        uid, gid, name = record.pw_uid, record.pw_gid, user
    else:  # root, or the instructor's own account, which the sandbox need not name
        uid, gid = os.geteuid(), os.getegid()
        name = "root" if uid == 0 else "grader"
    written = bubblewrap.written_files(uid, gid, name)
    program = bubblewrap.seccomp_filter()
    seccomp = None if program is None else bubblewrap.unnamed_file(program)
    try:
        command = bubblewrap.command(
            kernel,
            folder=folder,
            sockets=sockets,
            readable=readable,
            environment=environment,
            written=written,
            seccomp=seccomp,
            disk=disk,
        )
    except BaseException:  # no descriptor left open behind a sandbox that never started
        for descriptor in [*written.values(), *([] if seccomp is None else [seccomp])]:
            os.close(descriptor)
        raise
    command, options = bubblewrap.hide_options(command)
    if user:
        command = _as_user(user, command, [folder, sockets])
    if group is not None:
        command = group.enter_command(command)
    inherited = (options, *written.values(), *([] if seccomp is None else [seccomp]))
    return command, inherited + (() if disk is None else (disk.report,))


def _as_user(user: str, command: list[str], folders: list[Path]) -> list[str]:
    """``command`` started as ``user`` (util-linux's setpriv), who is given ``folders``."""
    import pwd

    record = pwd.getpwnam(user)
    for folder in folders:
        for path in [folder, *folder.rglob("*")]:
            os.chown(path, record.pw_uid, record.pw_gid, follow_symlinks=False)
    return [
        shutil.which("setpriv") or "/usr/bin/setpriv",  # (started with no PATH)
        f"--reuid={record.pw_uid}",
        f"--regid={record.pw_gid}",
        "--clear-groups",
        "--",
        *command,
    ]
