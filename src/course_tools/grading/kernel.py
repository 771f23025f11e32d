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
  because a signal sent from outside would reach bubblewrap, not the kernel.

When the kernel ends (shut down, killed, or at the end of grading), the whole sandbox
ends with it: bubblewrap's process-number namespace takes every process the kernel
started, those in new sessions too, and the control group's remaining processes are
killed before it is removed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from jupyter_client.manager import AsyncKernelManager
from traitlets import Int, List, Unicode

from course_tools.grading import bubblewrap, cgroups


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

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # A short path: a Unix socket's name is limited to about 100 characters.
        self._sockets = Path(tempfile.mkdtemp(prefix="cg-"))
        self.transport = "ipc"
        self.ip = str(self._sockets / "k")
        self.connection_file = str(self._sockets / "kernel.json")
        self._group: cgroups.Group | None = None

    async def _async_pre_start_kernel(self, **kw: Any) -> tuple[list[str], dict[str, Any]]:
        kernel_cmd, kw = await super()._async_pre_start_kernel(**kw)
        assert self.kernel_spec is not None
        self.kernel_spec.interrupt_mode = "message"
        folder = Path(kw.get("cwd") or os.getcwd()).resolve()
        readable = bubblewrap.python_paths(kernel_cmd[0])
        bubblewrap.check_readable(readable, [Path(p).resolve() for p in self.private])
        sandboxed = bubblewrap.command(
            kernel_cmd,
            folder=folder,
            sockets=self._sockets,
            readable=readable,
            environment=kw.get("env") or os.environ,
        )
        if self.user:
            sandboxed = _as_user(self.user, sandboxed, [folder, self._sockets])
        self._group = cgroups.create(
            memory_mb=self.memory_mb, processes=self.processes, cpu_seconds=self.cpu_seconds
        )
        if self._group is not None:
            sandboxed = self._group.enter_command(sandboxed)
        return sandboxed, kw

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if self._group is not None:
            self._group.destroy()
            self._group = None
        if not restart:
            shutil.rmtree(self._sockets, ignore_errors=True)


def _as_user(user: str, command: list[str], folders: list[Path]) -> list[str]:
    """``command`` started as ``user`` (util-linux's setpriv), who is given ``folders``."""
    import pwd

    record = pwd.getpwnam(user)
    for folder in folders:
        for path in [folder, *folder.rglob("*")]:
            os.chown(path, record.pw_uid, record.pw_gid, follow_symlinks=False)
    return [
        "setpriv",
        f"--reuid={record.pw_uid}",
        f"--regid={record.pw_gid}",
        "--clear-groups",
        "--",
        *command,
    ]
