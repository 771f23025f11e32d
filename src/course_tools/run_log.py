"""The file of runs that ``course bench --save-runs`` keeps, and ``--resume`` continues.

Lesson 3's runs take most of an hour each, so ten of them outlast a working session. The
log is written again, whole and atomically, after every run; ``--resume`` reads it back and
takes each finished run in place of running it again, as long as it was a run of the same
lesson code with the same seed and settings, in the same order. A run keeps its own
``machine`` (date, CPU, commit): a resumed benchmark may span days and machines.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import tempfile
import tokenize
from collections.abc import Callable
from pathlib import Path
from typing import Any

from course_tools import lessons


def lesson_code(name: str, notebook_text: str | None = None) -> str:
    """A short fingerprint of a lesson's code cells (the English notebook's, or those of
    ``notebook_text``), comments and layout left out: two runs with the same fingerprint ran
    the same lesson code. (The helpers it calls are not part of it; each run records its
    commit as well.)"""
    text = notebook_text
    if text is None:
        text = lessons.lesson_path(name).read_text(encoding="utf-8")
    cells = json.loads(text)["cells"]
    code = "\n\0\n".join(
        _without_comments(
            "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        )
        for cell in cells
        if cell.get("cell_type") == "code"
    )
    return "tokens-" + hashlib.sha256(code.encode("utf-8")).hexdigest()[:16]


def _without_comments(source: str) -> str:
    """The cell's tokens without its comments and layout (a translated or reworded comment
    does not change what runs); the source as it is where it does not tokenize."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO(source).readline)
        return " ".join(
            token.string
            for token in tokens
            if token.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE)
            and token.string.strip()
        )
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source


def _lesson_code_at(name: str, commit: str) -> str | None:
    """The fingerprint of lesson ``name`` at ``commit`` (for runs saved before runs carried
    one), or None where git cannot tell: no such commit, or a lesson edited for a trial."""
    if not commit or " " in commit:  # "abc1234 with local changes": not the commit's lesson
        return None
    relative = lessons.lesson_path(name).relative_to(lessons.project_root())
    shown = subprocess.run(
        ["git", "show", f"{commit}:{relative.as_posix()}"],
        capture_output=True,
        text=True,
        cwd=lessons.project_root(),
    )
    return lesson_code(name, shown.stdout) if shown.returncode == 0 else None


class RunLog(list):
    """The runs of one benchmark, in order: those a resumed file already holds, then each new
    one, appended (and the file rewritten) as soon as it ends."""

    def __init__(
        self,
        path: Path | None = None,
        machine: Callable[[], dict[str, Any]] = dict,
    ):
        """``machine`` describes where and when a run ends (``bench.machine_description``)."""
        super().__init__()
        self.path = path
        self.machine = machine
        self._waiting: list[tuple[int, dict[str, Any]]] = []
        #: The runs this benchmark took from the file or made, in order (not the file's
        #: runs it was not asked for): what its table and --write-reference use.
        self.used: list[dict[str, Any]] = []
        #: What the benchmark should tell its user about the runs it took.
        self.notes: list[str] = []

    @classmethod
    def resume(cls, path: Path, machine: Callable[[], dict[str, Any]] = dict) -> RunLog:
        """The log in ``path``, whose runs :meth:`take` hands back in order."""
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            runs = record["runs"]
            if not isinstance(runs, list):
                raise TypeError
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(
                f"--resume {path}: not a file of runs written by `course bench --save-runs` "
                f"({error or 'its runs are not a list'}); give the path of such a file, or "
                "leave out --resume to start a new one."
            ) from None
        log = cls(path, machine)
        for run in runs:
            # Runs saved before each run carried its own machine: the file's.
            run.setdefault("machine", record.get("machine", {}))
            super(RunLog, log).append(run)
        # Lesson 4's runs (the distributed group) are measured again at each run: only the
        # runs of lessons 2 and 3 are taken, in order.
        log._waiting = [
            (number, run)
            for number, run in enumerate(runs, start=1)
            if run.get("lesson") in ("02", "03")
        ]
        return log

    def take(
        self, lesson: str, device: str, seed: int, hyperparameters: str, quick: bool
    ) -> dict[str, Any] | None:
        """The next finished run in the file (its report, its machine...), if there is one
        left; it must be a run of this lesson's present code with this seed and settings."""
        if not self._waiting:
            return None
        number, run = self._waiting.pop(0)
        name = lessons.lesson_path(lesson).stem
        code = run.get("lesson_code")
        if not str(code).startswith("tokens-"):  # none, or 8e6ebfc's fingerprint of the raw cells
            code = _lesson_code_at(name, run.get("machine", {}).get("commit", ""))
        wanted = {
            "lesson": lesson,
            "device": device,
            "seed": seed,
            "hyperparameters": hyperparameters,
            "quick": quick,
            "lesson code": lesson_code(name),
        }
        found = {**{key: run.get(key) for key in wanted}, "lesson code": code}
        differ = [key for key in wanted if found[key] != wanted[key]]
        if differ:
            raise ValueError(
                f"--resume {self.path}: run {number} of the file does not match run "
                f"{number} of this benchmark ("
                + "; ".join(f"{key}: {found[key]!r} there, {wanted[key]!r} here" for key in differ)
                + "). Resume with the same groups, seeds (in the same order) and settings the "
                "file was started with, on the same lesson code, or give a new --save-runs path."
            )
        here, there = self.machine(), run.get("machine", {})
        differ = [key for key in ("cpu", "cores") if there.get(key) != here.get(key)]
        if differ:
            self.notes.append(
                f"Run {number} (seed {seed}) ran on another machine ("
                + ", ".join(
                    f"{key} {there.get(key)!r} there, {here.get(key)!r} here" for key in differ
                )
                + "): its times are not comparable with this machine's."
            )
        self.used.append(run)
        return run

    def append(self, run: dict[str, Any]) -> None:
        """Keep a new run, stamped with its machine (and the lesson's code, where the run
        does not carry the fingerprint taken before it started), and save the log."""
        name = lessons.lesson_path(run["lesson"]).stem
        stamped = {"lesson_code": lesson_code(name), **run, "machine": self.machine()}
        super().append(stamped)
        self.used.append(stamped)
        self.save()

    def unused(self) -> int:
        """How many runs of lessons 2 and 3 in the resumed file this benchmark did not ask
        for (they stay in it)."""
        return len(self._waiting)

    def save(self) -> None:
        """Write the whole log to its path, replacing the file only once the new one is whole."""
        if self.path is None:
            return
        # The file's own "machine" is its latest writer's; each run has its own.
        text = json.dumps({"machine": self.machine(), "runs": list(self)}, indent=1) + "\n"
        handle, scratch = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())  # whole on disk before it replaces the old file
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(scratch, 0o666 & ~umask)  # as open() would make it, not mkstemp's 0600
            os.replace(scratch, self.path)
        except BaseException:
            Path(scratch).unlink(missing_ok=True)
            raise
