"""Autograde every submission of an assignment, each in its own nbgrader, several at once.

``nbgrader autograde`` already goes on after a failing submission, but one run shares a
process, a wall clock and a log among all students. Here each submission gets its own
``nbgrader autograde --student`` process with a time limit, so a hung or crashing
notebook costs only its own grade; ``jobs`` of them run at once (``course grade --jobs``),
each with its own sandbox and control group and the same limits. Around each run this
module:

- fingerprints the submitted files and proves afterwards that grading left them
  byte-identical (nbgrader works on a copy under ``autograded/``);
- records a failed run as 0 points in the gradebook, as nbgrader does for a missing
  notebook, so that ``nbgrader export`` lists it;
- reports, per student, the score, what went wrong and in which cell.

The gradebook is one SQLite file, and SQLite lets one process write at a time: nbgrader's
processes wait for each other (up to :data:`GRADEBOOK_TIMEOUT` seconds, set in the
course's configuration by :mod:`course_tools.grading.settings`), this module's own
gradebook reads and writes take a lock, and a submission whose nbgrader still found the
gradebook locked is graded again on its own once the others are done.

Each kernel runs in a sandbox (:mod:`course_tools.grading.kernel`). Before grading
anything, :func:`grade_all` checks that one can start here and, where none can, stops with
the reason and what to install, unless the instructor passed ``unsandboxed=True``
(``course grade --unsandboxed``); every submission graded that way is marked in the report.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from course_tools.grading import bubblewrap, cgroups, disk
from course_tools.grading.feedback import recorded_language
from course_tools.grading.kernel import KERNEL_PREFIX
from course_tools.grading.sanitize import NOTE, TOKEN_VARIABLE
from course_tools.grading.settings import (
    LANGUAGE_VARIABLE,
    UNSANDBOXED_VARIABLE,
    check_config,
    gradebook_url,
)

UNSANDBOXED_NOTE = (
    "graded WITHOUT the sandbox (--unsandboxed): its code could read and change the course"
)


class SandboxUnavailable(RuntimeError):
    """No sandbox can start on this machine; the message says why and what to do."""


@dataclass
class Outcome:
    """What grading one submission gave."""

    student: str
    score: float
    max_score: float
    # "graded", "failed" (nbgrader could not finish), "timed out", or "over the disk limit"
    # (the sandbox's own disk filled up: graded as far as it went; the notes say how full)
    status: str
    seconds: float
    notes: list[str] = field(default_factory=list)
    sandboxed: bool = True


def fingerprint(folder: Path) -> dict[str, str]:
    """SHA-256 of every file under ``folder``, by relative path."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def assignment_language(course: Path, assignment: str) -> str:
    for path in sorted((course / "source" / assignment).glob("*.ipynb")):
        return recorded_language(nbformat.read(path, as_version=4))
    raise FileNotFoundError(
        f"{course / 'source' / assignment} holds no notebook. Create it with "
        f"`course assignment <lesson> --lang <language> --course {course}`."
    )


def nbgrader_environment() -> dict[str, str]:
    """This process's environment, with this Python's bin/ first on PATH: nbgrader runs a
    bare `alembic`, installed beside it."""
    return {
        **os.environ,
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }


def run_nbgrader(*arguments: str, course: Path) -> subprocess.CompletedProcess[str]:
    """``nbgrader <arguments>`` in ``course``, with this Python's nbgrader; raises
    ``CalledProcessError`` (with nbgrader's output) if it fails."""
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *arguments],
        cwd=course,
        env=nbgrader_environment(),
        check=True,
        capture_output=True,
        text=True,
    )


def notes_in(lines: list[str], mark: str) -> list[str]:
    """The notes of a grading log's lines: what follows ``mark``, :data:`NOTE` and the
    run's secret, on nbgrader's own lines. A line a student wrote (a timed-out cell's
    source, which nbgrader's log quotes) does not know the secret, so it is no note."""
    return [line.split(mark, 1)[1].strip() for line in lines if mark in line]


def _cell_notes(notebook: Path) -> list[str]:
    """One line per cell that ended in an error: its id, the last error and its message.

    (A cell stopped for time shows two errors, the interrupt and then the timeout; the
    last one says why.)
    """
    notes = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
        if errors:
            message = " ".join(str(errors[-1].get("evalue", "")).split())
            notes.append(
                f"{cell.get('id', '?')}: {errors[-1].ename}"
                + (f": {message[:160]}" if message else "")
            )
    return notes


#: Taken around this module's own gradebook reads and writes, one job at a time.
_GRADEBOOK_LOCK = threading.Lock()
#: What SQLite says when a writer waited :data:`GRADEBOOK_TIMEOUT` seconds in vain.
LOCKED = "database is locked"


def _gradebook_url(course: Path) -> str:
    return gradebook_url(course)


def default_jobs() -> int:
    """How many submissions ``course grade`` grades at once: the CPUs it may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on Linux)
        return os.cpu_count() or 1


def _record_zero(course: Path, assignment: str, student: str) -> None:
    from nbgrader.api import Gradebook

    with _GRADEBOOK_LOCK, Gradebook(_gradebook_url(course)) as gradebook:
        gradebook.update_or_create_student(student)
        submission = gradebook.update_or_create_submission(assignment, student)
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                grade.auto_score = 0
                grade.needs_manual_grade = False
        gradebook.db.commit()


def _scores(course: Path, assignment: str, student: str) -> tuple[float, float]:
    from nbgrader.api import Gradebook

    with _GRADEBOOK_LOCK, Gradebook(_gradebook_url(course)) as gradebook:
        submission = gradebook.find_submission(assignment, student)
        return float(submission.score), float(submission.max_score)


def grade_one(
    course: Path, assignment: str, student: str, *, timeout: float, unsandboxed: bool = False
) -> Outcome:
    """Autograde one student's submission; never raises for anything the student wrote."""
    submitted = course / "submitted" / student / assignment
    before = fingerprint(submitted)
    logs = course / "logs" / assignment
    logs.mkdir(parents=True, exist_ok=True)
    env = {**nbgrader_environment(), LANGUAGE_VARIABLE: assignment_language(course, assignment)}
    env.pop(UNSANDBOXED_VARIABLE, None)
    # Genuine notes carry this run's secret (the kernel never sees it: it is not among
    # the variables the sandbox keeps), so that a line a student wrote is no note.
    mark = NOTE + secrets.token_hex(16)
    env[TOKEN_VARIABLE] = mark.removeprefix(NOTE)
    if unsandboxed:
        env[UNSANDBOXED_VARIABLE] = "1"
    command = [
        sys.executable,
        "-m",
        "nbgrader",
        "autograde",
        assignment,
        "--student",
        student,
        "--force",
    ]
    start = time.monotonic()
    with open(logs / f"{student}.log", "wb") as log:
        process = subprocess.Popen(
            command,
            cwd=course,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            status = "graded" if process.wait(timeout=timeout) == 0 else "failed"
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # nbgrader; its sandbox dies with it
            process.wait()
            status = "timed out"
            cgroups.sweep(older_than=5)
    seconds = time.monotonic() - start
    if fingerprint(submitted) != before:
        raise RuntimeError(
            f"Grading changed files in {submitted}; this must never happen. "
            "Please report it with the log in " + str(logs / f"{student}.log")
        )
    autograded = course / "autograded" / student / assignment
    log_text = (logs / f"{student}.log").read_text(errors="replace")
    # nbgrader's own lines only: what the sandboxed kernel writes comes after KERNEL_PREFIX.
    graders = [line for line in log_text.splitlines() if not line.startswith(KERNEL_PREFIX)]
    notes = notes_in(graders, mark)
    if status == "graded":
        for notebook in sorted(autograded.glob("*.ipynb")):
            notes += _cell_notes(notebook)
    else:
        _record_zero(course, assignment, student)
        # The exception that stopped nbgrader: the last "module.SomeError: message" line.
        reasons = [
            line.strip() for line in graders if re.match(r"\s*[\w.]+(Error|Exception)\b: ", line)
        ]
        if any("could not confine" in line for line in log_text.splitlines()):
            # (the kernel says so itself, on a line of its own: quoted, it could be forged)
            reasons.append(f"the kernel could not be confined; see {logs / (student + '.log')}")
        notes.append(
            reasons[-1] if reasons else f"nbgrader did not finish; see {logs / (student + '.log')}"
        )
        if status == "timed out":
            notes.append(f"stopped after {timeout:.0f} s")
    if any(note.startswith(disk.OVER_LIMIT) for note in notes):
        status = disk.OVER_LIMIT  # (graded as far as it went, or failed: the note says)
    if unsandboxed:
        notes.append(UNSANDBOXED_NOTE)
    score, max_score = _scores(course, assignment, student)
    return Outcome(student, score, max_score, status, seconds, notes, sandboxed=not unsandboxed)


def load_config(course: Path) -> None:
    """Read the course's nbgrader_config.py once, so that its mistakes stop grading early."""
    from traitlets.config.loader import PyFileConfigLoader

    if not (course / "nbgrader_config.py").exists():
        raise FileNotFoundError(
            f"{course / 'nbgrader_config.py'} does not exist; is {course} the "
            "course folder? `course assignment` creates it."
        )
    check_config(course / "nbgrader_config.py")
    PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()


def _check_generated(course: Path, assignment: str) -> None:
    from nbgrader.api import Gradebook, MissingEntry

    if not (course / "gradebook.db").exists():
        raise ValueError(
            f"{course} has no gradebook yet. Run `nbgrader generate_assignment "
            f"{assignment}` in {course} first."
        )
    with Gradebook(_gradebook_url(course)) as gradebook:
        try:
            gradebook.find_assignment(assignment)
        except MissingEntry:
            raise ValueError(
                f"{assignment} is not in {course / 'gradebook.db'}. Run `nbgrader "
                f"generate_assignment {assignment}` in {course} first."
            ) from None


def students(course: Path, assignment: str) -> list[str]:
    return sorted(
        path.parent.name for path in (course / "submitted").glob(f"*/{assignment}") if path.is_dir()
    )


def sandbox_description() -> str:
    """One line on the sandbox grading will use here, for the top of the report."""
    version = subprocess.run(
        [bubblewrap.executable() or "bwrap", "--version"], capture_output=True, text=True
    ).stdout.strip()
    why_not = cgroups.unavailable()
    keyrings = (
        ""
        if bubblewrap.seccomp_filter() is not None
        else f"; no seccomp filter for {platform.machine()}: the kernel keyrings stay reachable"
    )
    if why_not is None:
        return (
            f"sandbox: {version}; memory, processes and CPU time limited for the whole "
            f"sandbox ({cgroups.description()}){keyrings}"
        )
    return (
        f"sandbox: {version}; no control group ({why_not}): memory and CPU time are "
        f"limited per process, processes for the whole sandbox{keyrings}"
    )


def grade_all(
    course: Path,
    assignment: str,
    *,
    only: list[str] | None = None,
    timeout: float = 1800,
    unsandboxed: bool = False,
    jobs: int = 1,
) -> list[Outcome]:
    """Grade each submission of ``assignment`` (all, or those of ``only``), ``jobs`` at once;
    the outcomes come in the students' order."""
    if jobs < 1:
        raise ValueError(f"--jobs must be 1 or more, not {jobs}.")
    if not unsandboxed:
        problem = bubblewrap.problem()
        if problem:
            raise SandboxUnavailable(f"course grade: nothing was graded. {problem}")
        cgroups.sweep()  # empty groups of an earlier grader that was killed
    load_config(course)
    _check_generated(course, assignment)
    found = students(course, assignment)
    unknown = sorted(set(only or []) - set(found))
    if unknown:
        raise ValueError(
            f"No submission of {assignment} in {course / 'submitted'} for: "
            f"{', '.join(unknown)}. Students with one: {', '.join(found) or 'none'}."
        )

    def grade(student: str) -> Outcome:
        return grade_one(course, assignment, student, timeout=timeout, unsandboxed=unsandboxed)

    chosen = only or found
    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(chosen)))) as pool:
        outcomes = list(pool.map(grade, chosen))
    # nbgrader gave up waiting for the gradebook (a very busy machine): once more, alone.
    return [
        grade(outcome.student)
        if outcome.status == "failed" and any(LOCKED in note for note in outcome.notes)
        else outcome
        for outcome in outcomes
    ]


def report(outcomes: list[Outcome], sandbox: str | None = None) -> str:
    """A plain-text table: one line per student, then the notes under it; ``sandbox``,
    when given, is the first line."""
    lines = [sandbox] if sandbox else []
    width = max([10, *(len(outcome.status) for outcome in outcomes)])
    lines.append(f"{'student':<16} {'score':>11} {'status':<{width}} {'time':>7}")
    for outcome in outcomes:
        lines.append(
            f"{outcome.student:<16} {outcome.score:>5g} / {outcome.max_score:<3g} "
            f"{outcome.status:<{width}} {outcome.seconds:>6.1f}s"
        )
        lines += [f"    {note}" for note in outcome.notes]
    return "\n".join(lines)
