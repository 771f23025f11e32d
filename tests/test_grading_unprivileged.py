"""The recommended set-up for a class one does not trust: grading as an unprivileged user.

The instructors' guide ("Grading as an unprivileged user") has the grading user run
`course grade` inside a control group that systemd delegates to it
(`systemd-run --user --scope -p Delegate=yes`). CI's machine has no systemd, so this test
does as root what systemd does for that user: it makes a group in each hierarchy grading
needs and hands it to the user (``chown``), starts the grader inside it, and then runs the
README's `course grade` as that user (``nobody`` here, with a home of its own). The Python
environment must be readable by that user, as the guide says; where this machine's lies in
a folder only root may enter (pyenv under ``/root``), the test opens that folder, and only
that one, in a mount namespace of its own, as installing under ``/opt`` would.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import threading
import uuid
from pathlib import Path

import nbformat
import pytest

from course_tools import exercises
from course_tools.grading import bubblewrap, cgroups
from grading import fixtures

pytestmark = pytest.mark.notebook

ROOT = Path(__file__).resolve().parents[1]
LESSON = "01_replay_buffers"
ASSIGNMENT = f"{LESSON}-en"
USER = "nobody"


def _problem() -> str | None:
    if os.geteuid() != 0:
        return "handing a control group to another user, as systemd does, needs root"
    for tool in ("setpriv", "unshare", "mount"):
        if shutil.which(tool) is None:
            return f"{tool} (util-linux) is not installed"
    if bubblewrap.problem():
        return f"no sandbox here: {bubblewrap.problem()}"
    if cgroups.unavailable() is not None:
        return f"no control group here: {cgroups.unavailable()}"
    return None


PROBLEM = _problem()
skip_unless_possible = pytest.mark.skipif(PROBLEM is not None, reason=str(PROBLEM))


def _closed_folders(paths: list[Path]) -> list[Path]:
    """The folders above ``paths`` that other users may not enter (e.g. ``/root``)."""
    closed: list[Path] = []
    for path in paths:
        for folder in reversed(path.resolve().parents):
            if folder != Path("/") and not folder.stat().st_mode & 0o001:
                if folder not in closed:
                    closed.append(folder)
                break
    return closed


def _open_in_this_namespace(folder: Path, spare: Path) -> str:
    """Shell lines that make ``folder`` enterable, in a private mount namespace only: a
    tmpfs of mode 755 over it, and each of its entries bound back from ``spare``."""
    return (
        f"mount --bind '{folder}' '{spare}' && "
        f"mount -t tmpfs -o mode=0755,size=1m tmpfs '{folder}' && "
        f"for e in '{spare}'/* '{spare}'/.[!.]*; do [ -e \"$e\" ] || continue; "
        f'n=$(basename "$e"); if [ -d "$e" ]; then mkdir "{folder}/$n"; '
        f'else touch "{folder}/$n"; fi; mount --bind "$e" "{folder}/$n" || true; done'
    )


def _delegate(owner: pwd.struct_passwd) -> list[Path]:
    """A control group per hierarchy grading needs, handed to ``owner`` as systemd's
    ``Delegate=yes`` hands one (the folder and its files belong to that user)."""
    name = f"course-test-delegated-{uuid.uuid4().hex[:8]}"
    if cgroups.version() == 2:
        folders = [cgroups.ROOT / name]
    else:
        folders = list(dict.fromkeys(cgroups._v1_parent(c) / name for c in cgroups.V1_CONTROLLERS))
    for folder in folders:
        folder.mkdir()
        for path in [folder, *folder.iterdir()]:
            os.chown(path, owner.pw_uid, owner.pw_gid)
    return folders


def _remove(folders: list[Path]) -> None:
    for folder in folders:
        for child in sorted(folder.glob("*/"), key=lambda p: -len(p.parts)):
            if (child / "cgroup.procs").exists():
                cgroups.Group([child], 1, 0).destroy()
        cgroups.Group([folder], 1, 0).destroy()


def _as_unprivileged(command: list[str], *, home: Path, groups: list[Path], base: Path) -> str:
    """A shell line, run as root in a new mount namespace: open the Python's folder, enter
    the delegated groups, become ``USER`` and run ``command`` with a home of its own."""
    owner = pwd.getpwnam(USER)
    spare = base / "spare"
    spare.mkdir()
    closed = _closed_folders([Path(sys.executable), ROOT])
    lines = [_open_in_this_namespace(folder, spare / str(i)) for i, folder in enumerate(closed)]
    for i in range(len(closed)):
        (spare / str(i)).mkdir()
    lines += [f"echo $$ > '{folder}/cgroup.procs'" for folder in groups]
    environment = {
        "HOME": str(home),
        "USER": USER,
        "LOGNAME": USER,
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
    }
    lines.append(
        "exec setpriv "
        f"--reuid={owner.pw_uid} --regid={owner.pw_gid} --clear-groups -- env -i "
        + " ".join(f"'{k}={v}'" for k, v in environment.items())
        + " "
        + " ".join(f"'{part}'" for part in command)
    )
    return " && ".join(lines)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A course owned by the grading user, one solved submission, graded by that user in
    a delegated group; then the same user's view without delegation."""
    owner = pwd.getpwnam(USER)
    base = Path(tempfile.mkdtemp(prefix="course-unprivileged-"))
    base.chmod(0o755)
    course, home = base / "course", base / "home"
    home.mkdir()
    subprocess.run(
        [sys.executable, "-m", "course_tools.cli", "assignment", LESSON, "--lang", "en",
         "--course", str(course), "--exchange", str(base / "exchange")],
        check=True, capture_output=True,
    )  # fmt: skip
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    generated = subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_assignment", ASSIGNMENT],
        cwd=course, capture_output=True, text=True, env={**os.environ, "PATH": path},
    )  # fmt: skip
    assert generated.returncode == 0, generated.stdout + generated.stderr
    notebook = nbformat.read(course / "release" / ASSIGNMENT / f"{LESSON}.ipynb", as_version=4)
    fixtures.solve(notebook, exercises.solutions(ROOT, LESSON))
    submitted = course / "submitted" / "ana" / ASSIGNMENT
    submitted.mkdir(parents=True)
    nbformat.write(notebook, submitted / f"{LESSON}.ipynb")
    for owned in [base, *base.rglob("*")]:  # the grading user's course, as on its machine
        os.lchown(owned, owner.pw_uid, owner.pw_gid)
    groups = _delegate(owner)
    grade_command = [sys.executable, "-m", "course_tools.cli", "grade", ASSIGNMENT,
                     "--course", str(course)]  # fmt: skip
    probe = [sys.executable, "-c",
             "from course_tools.grading import cgroups; print(cgroups.unavailable())"]  # fmt: skip
    seen: set[str] = set()  # the delegated groups' children that held processes
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.2):
            for folder in groups:
                for child in folder.glob("course-grading-*"):
                    try:
                        if (child / "cgroup.procs").read_text().split():
                            seen.add(f"{folder}/{child.name}")
                    except OSError:
                        pass

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        ran = subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
             _as_unprivileged(grade_command, home=home, groups=groups, base=base)],
            capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        done.set()
        watcher.join()
        left = [child.name for folder in groups for child in folder.glob("course-grading-*")]
        without = subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
             _as_unprivileged(probe, home=home, groups=[], base=base / "home")],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        yield {
            "ran": ran,
            "without": without,
            "course": course,
            "groups": groups,
            "left": left,
            "seen": seen,
            "owner": owner,
        }
    finally:
        _remove(groups)
        shutil.rmtree(base)


@skip_unless_possible
def test_an_unprivileged_grader_grades_with_limits_for_the_whole_sandbox(graded):
    ran = graded["ran"]
    assert ran.returncode == 0, ran.stdout + ran.stderr
    first = ran.stdout.splitlines()[0]
    assert "limited for the whole sandbox" in first and "delegated" in first, first
    line = next(line for line in ran.stdout.splitlines() if line.startswith("ana "))
    assert f"{fixtures.MAX_SCORE:g} / {fixtures.MAX_SCORE:g}" in line and "graded" in line


@skip_unless_possible
def test_the_kernel_ran_in_a_group_inside_the_delegated_one(graded):
    # (Inside, the kernel sees its own group as "/": the sandbox has a cgroup namespace.
    # So the test watches the delegated groups from outside while grading runs.)
    held = {Path(path).parent for path in graded["seen"]}
    assert held == set(graded["groups"]), (graded["seen"], graded["groups"])
    assert graded["left"] == [], "a sandbox's group outlived grading"


@skip_unless_possible
def test_grading_as_the_user_writes_only_the_users_files(graded):
    uid = graded["owner"].pw_uid
    others = [p for p in graded["course"].rglob("*") if p.lstat().st_uid != uid]
    assert others == []


@skip_unless_possible
def test_without_a_delegated_group_the_grader_is_told_how_to_get_one(graded):
    without = graded["without"]
    assert without.returncode == 0, without.stderr
    assert "systemd-run --user --scope -p Delegate=yes" in without.stdout, without.stdout
