"""The sandbox's own disk: what a graded notebook may write, in bytes and in files.

A submission could otherwise fill the disk that every student and the instructor share, or
leave hundreds of thousands of files in its graded folder for ``nbgrader generate_feedback``
to walk. So the graded folder a kernel sees is not the folder on disk but a copy of it on
a tmpfs of its own, mounted with a size (``size=``) and a number of files and folders
(``nr_inodes=``); a write past either fails in the student's cell with "No space left on
device", as on a full disk, and grading goes on. The copy is the submission as nbgrader
prepared it; what the notebook writes there is discarded with the sandbox, so the graded
folder on disk holds only what nbgrader wrote (the graded notebook, with its outputs, is
what is graded and what the feedback shows).

This module is the sandbox's process 1 (``python -m course_tools.grading.disk``, started
by bubblewrap, :func:`course_tools.grading.bubblewrap.command`). bubblewrap gives it two
capabilities, in the sandbox's own user namespace only: ``CAP_SYS_ADMIN`` to mount the
tmpfs (bubblewrap 0.8 can limit a tmpfs's size but not its number of files) and
``CAP_SETPCAP`` to drop every capability afterwards. Then it:

1. mounts the tmpfs, copies the graded folder (shown to it read-only) into it and moves
   the mount onto the graded folder;
2. drops every capability, from its bounding set too, and checks that none is left, so
   that nothing it starts can unmount the tmpfs or mount anything else;
3. starts the rest of its command line (dumb-init and the kernel) as its child, reaps
   every process the sandbox orphans, and watches the other places a notebook can write,
   the private ``/tmp`` (limited in size by bubblewrap) and ``/dev/shm``: past the limit
   of files there, it ends the sandbox;
4. reports to the grader, on a descriptor that nothing else in the sandbox holds, as soon
   as a limit is reached and once more at the end: one JSON object per line
   (:func:`read_reports`).

When it ends, so does every process in the sandbox, and the tmpfs with them.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

#: Where the tmpfs is mounted before it is moved onto the graded folder (bubblewrap makes
#: the empty folder).
MOUNT_POINT = "/run/course-disk"
#: The other places a notebook can write in the sandbox, watched for their number of files.
WATCHED = ("/tmp", "/dev/shm")
#: What the kernel's socket folder (on the grader's own disk) may hold: its sockets and
#: connection file, a handful; past these, the sandbox is ended.
SOCKET_FOLDER_BYTES, SOCKET_FOLDER_FILES = 2**20, 64
#: The longest report line the grader reads, and the most notes it writes for one sandbox.
LINE_LIMIT, MOST_NOTES = 2**16, 8
#: How often the watcher looks, in seconds.
POLL_SECONDS = 0.1
#: How a note on a full disk begins, in nbgrader's log and in ``course grade``'s report.
OVER_LIMIT = "over the disk limit"
#: The exit status when the sandbox was ended for writing too many files.
OVER_LIMIT_STATUS = 75

# Linux's numbers (include/uapi/linux/{mount,prctl,capability}.h).
_MS_MOVE = 8192
_CLONE_NEWNS = 0x00020000
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_CAPABILITY_VERSION_3 = 0x20080522


@dataclass
class Usage:
    """What one place of the sandbox holds, against its limits."""

    where: str
    bytes: int
    files: int
    max_bytes: int
    max_files: int

    @property
    def full(self) -> bool:
        return self.bytes >= self.max_bytes or self.files >= self.max_files


@dataclass
class Report:
    """One line of the report: ``full`` once a limit was reached, ``final`` at the end."""

    full: bool
    final: bool
    usage: list[Usage]

    def line(self) -> bytes:
        return (json.dumps(asdict(self)) + "\n").encode()


def read_reports(stream: IO[bytes]) -> Iterator[Report]:
    """The reports of :func:`main`, as they come, until the sandbox ends (a line longer
    than :data:`LINE_LIMIT` is read in pieces, none of which is a report)."""
    for raw in iter(lambda: stream.readline(LINE_LIMIT), b""):
        try:
            data = json.loads(raw)
            yield Report(
                full=bool(data["full"]),
                final=bool(data["final"]),
                usage=[Usage(**item) for item in data["usage"]],
            )
        except (ValueError, KeyError, TypeError):  # (only process 1 holds the descriptor)
            continue


def describe(report: Report) -> list[str]:
    """The instructor's notes for a full disk, one per limit reached, e.g. "over the disk
    limit: the graded folder held 512.0 MiB of at most 512 MiB"."""
    notes = []
    for usage in report.usage:
        place = usage.where
        if usage.bytes >= usage.max_bytes:
            notes.append(
                f"{OVER_LIMIT}: {place} held {usage.bytes / 2**20:.1f} MiB of at most "
                f"{usage.max_bytes / 2**20:g} MiB"
            )
        if usage.files >= usage.max_files:
            notes.append(
                f"{OVER_LIMIT}: {place} held {usage.files:,} files and folders of at most "
                f"{usage.max_files:,}"
            )
    return notes


def tmpfs_options(max_bytes: int, max_files: int) -> str:
    """The mount options of the graded folder's tmpfs. Its own root counts as one file."""
    return f"size={max_bytes},nr_inodes={max_files + 1},mode=0755"


@dataclass(frozen=True)
class Place:
    """A place where the sandbox can write: its name in the notes, its path, its limits,
    whether passing them ends the sandbox (where nothing else enforces them), and whether
    to count its files one by one (a folder on the grader's disk) instead of asking its
    tmpfs."""

    name: str
    path: str
    max_bytes: int
    max_files: int
    ends: bool = False
    walk: bool = False

    def usage(self) -> Usage:
        if self.walk:
            return _walked(self)
        found = usage(self.path, self.max_bytes, self.max_files)
        return Usage(self.name, found.bytes, found.files, self.max_bytes, self.max_files)


def _walked(place: Place) -> Usage:
    """Count a folder's files and bytes, stopping one file past the limit."""
    files, size, folders = 0, 0, [place.path]
    while folders and files <= place.max_files:
        try:
            entries = list(os.scandir(folders.pop()))
        except OSError:
            continue
        for entry in entries:
            files += 1
            try:
                size += entry.stat(follow_symlinks=False).st_size
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
            except OSError:
                pass
    return Usage(place.name, size, files, place.max_bytes, place.max_files)


def usage(where: str, max_bytes: int, max_files: int, *, own_root: bool = True) -> Usage:
    """What the file system at ``where`` holds (the whole tmpfs, not only that folder)."""
    found = os.statvfs(where)
    # A full tmpfs has no free block or no free inode left; count it as at its limit.
    used_bytes = (found.f_blocks - found.f_bfree) * found.f_frsize
    used_files = found.f_files - found.f_ffree - (1 if own_root else 0)
    if found.f_blocks and found.f_bfree == 0:
        used_bytes = max(used_bytes, max_bytes)
    if found.f_files and found.f_ffree == 0:
        used_files = max(used_files, max_files)
    return Usage(where, used_bytes, used_files, max_bytes, max_files)


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")


def mount_disk(folder: str, max_bytes: int, max_files: int) -> None:
    """Mount the tmpfs, copy ``folder`` into it, and move it onto ``folder``."""
    libc = _libc()
    # A mount namespace of its own: bubblewrap's --disable-userns puts this process in a
    # user namespace nested in the one that owns bubblewrap's mounts, where it may not
    # mount; in a mount namespace it owns, it may mount on top of them (not remove them).
    _check(libc.unshare(_CLONE_NEWNS), "unshare the mount namespace")
    options = tmpfs_options(max_bytes, max_files).encode()
    _check(libc.mount(b"tmpfs", MOUNT_POINT.encode(), b"tmpfs", 0, options), "mount tmpfs")
    copy_tree(Path(folder), Path(MOUNT_POINT))  # (it counts against the limits)
    _check(libc.mount(MOUNT_POINT.encode(), folder.encode(), None, _MS_MOVE, None), "move mount")
    os.chdir(folder)  # the working folder was the one underneath
    # /dev/shm is a folder of bubblewrap's /dev, which no limit holds: a tmpfs of its own.
    if os.path.isdir("/dev/shm"):
        _check(libc.mount(b"tmpfs", b"/dev/shm", b"tmpfs", 0, options), "mount /dev/shm")


def copy_tree(source: Path, target: Path) -> None:
    """Copy what ``source`` holds into the existing folder ``target``: files with their
    modes, links as links. Stops at the first error, raised as it is (shutil.copytree
    gathers them into one ``shutil.Error``, which hides a full disk's ENOSPC)."""
    for entry in sorted(source.iterdir()):
        destination = target / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(entry), destination)
        elif entry.is_dir():
            destination.mkdir()
            copy_tree(entry, destination)
        else:
            shutil.copy2(entry, destination)


def drop_capabilities() -> None:
    """Drop every capability, from the bounding set too, so that no child can regain one."""
    libc = _libc()
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    for capability in range(last + 1):
        _check(libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0), "drop from bounding set")
    _check(libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient")
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable, twice: all empty
    _check(libc.capset(header, data), "capset")
    held = {
        name: int(value, 16)
        for name, value in (
            line.split(":\t", 1)
            for line in Path("/proc/self/status").read_text().splitlines()
            if line.startswith("Cap")
        )
    }
    if any(held.values()):
        raise PermissionError(f"capabilities left after dropping them all: {held}")


def _write(descriptor: int, report: Report) -> None:
    try:
        os.write(descriptor, report.line())
    except OSError:  # the grader stopped reading: nothing more to tell
        pass


def supervise(child: int, places: Sequence[Place], report_to: int) -> int:
    """Reap every process until ``child`` ends, watching ``places``; return the exit status
    to end with."""
    told: set[str] = set()  # the notes already reported
    looked = 0.0
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return 0
        if pid == child:
            found = [place.usage() for place in places]
            full = bool(told) or any(u.full for u in found)
            _write(report_to, Report(full, True, found))
            return os.waitstatus_to_exitcode(status) % 256
        if pid and time.monotonic() - looked < POLL_SECONDS:
            continue  # an orphan reaped; look for more at once
        looked = time.monotonic()  # (a stream of orphans does not hold the look off)
        found = [place.usage() for place in places]
        notes = set(describe(Report(True, False, found)))
        if notes - told:
            told |= notes
            _write(report_to, Report(True, False, found))
        if any(
            u.files > u.max_files or u.bytes > u.max_bytes
            for u, place in zip(found, places)
            if place.ends
        ):
            os.kill(-1, signal.SIGKILL)  # every process of the sandbox but this one
            while True:
                try:
                    os.waitpid(-1, 0)
                except ChildProcessError:
                    break
            _write(report_to, Report(True, True, found))
            return OVER_LIMIT_STATUS
        # Until a process ends (an orphan to reap at once: zombies count against the
        # process limit) or it is time to look again.
        signal.sigtimedwait([signal.SIGCHLD], POLL_SECONDS)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_tools.grading.disk")
    parser.add_argument("--folder", required=True, help="the graded folder")
    parser.add_argument("--bytes", type=int, required=True, help="bytes it may hold")
    parser.add_argument("--files", type=int, required=True, help="files and folders it may hold")
    parser.add_argument("--report", type=int, required=True, help="descriptor to report to")
    parser.add_argument("--sockets", help="the kernel's socket folder, on the grader's disk")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- what to start")
    # Process 1 gets only the signals it handles: none but SIGCHLD (Python's own SIGINT
    # handler would let the kernel end the sandbox with kill(1, SIGINT)).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    options = parser.parse_args(argv)
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    os.set_inheritable(options.report, False)  # the child and the kernel never get it
    limits = (options.bytes, options.files)
    places = [Place("the graded folder", options.folder, *limits)]
    places += [Place(path, path, *limits, ends=path == "/tmp") for path in WATCHED]
    if options.sockets:
        places.append(
            Place(
                "the socket folder",
                options.sockets,
                SOCKET_FOLDER_BYTES,
                SOCKET_FOLDER_FILES,
                ends=True,
                walk=True,
            )
        )
    try:
        mount_disk(options.folder, options.bytes, options.files)
    except OSError as error:
        if error.errno == 28:  # ENOSPC: the submission alone is over the limits
            found = usage(MOUNT_POINT, options.bytes, options.files)
            found.where = "the graded folder"
            _write(options.report, Report(True, True, [found]))
            return OVER_LIMIT_STATUS
        print(f"course_tools.grading.disk: could not confine the kernel: {error}", file=sys.stderr)
        return 70
    try:
        drop_capabilities()
    except OSError as error:
        print(f"course_tools.grading.disk: could not confine the kernel: {error}", file=sys.stderr)
        return 70
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD])  # (for sigtimedwait)
    _libc().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)  # no process of the sandbox may trace this one
    child = os.fork()
    if child == 0:
        try:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGCHLD])
            # What Python changed for itself, back to the defaults a program expects.
            for number in (signal.SIGINT, signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(number, signal.SIG_DFL)
            os.execv(command[0], command)  # (exec makes the kernel traceable again)
        finally:
            os._exit(127)
    return supervise(child, places, options.report)


if __name__ == "__main__":
    sys.exit(main())
