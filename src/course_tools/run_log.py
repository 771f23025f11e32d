"""The file of runs that ``course bench --save-runs`` keeps, and ``--resume`` continues.

Lesson 3's runs take most of an hour each, so ten of them outlast a working session. The
log is written again, whole and atomically, after every run; ``--resume`` reads it back and
takes each finished run in place of running it again, as long as it was a run of the same
lesson code with the same seed and settings, in the same order. A run keeps its own
``machine`` (date, CPU, commit): a resumed benchmark may span days and machines.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from course_tools import lessons


def lesson_code(name: str, notebook_text: str | None = None) -> str:
    """A short fingerprint of a lesson's code cells (the English notebook's, or those of
    ``notebook_text``): two runs with the same fingerprint ran the same code."""
    text = notebook_text
    if text is None:
        text = lessons.lesson_path(name).read_text(encoding="utf-8")
    cells = json.loads(text)["cells"]
    code = "\n\0\n".join(
        "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        for cell in cells
        if cell.get("cell_type") == "code"
    )
    return hashlib.sha256(code.encode("utf-8")).hexdigest()[:16]


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
        log._waiting = list(enumerate(runs, start=1))
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
        code = run.get("lesson_code") or _lesson_code_at(
            name, run.get("machine", {}).get("commit", "")
        )
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
        return run

    def append(self, run: dict[str, Any]) -> None:
        """Keep a new run, stamped with its machine and the lesson's code, and save the log."""
        name = lessons.lesson_path(run["lesson"]).stem
        super().append({**run, "machine": self.machine(), "lesson_code": lesson_code(name)})
        self.save()

    def unused(self) -> int:
        """How many runs of the resumed file this benchmark did not ask for (they stay in it)."""
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
            os.replace(scratch, self.path)
        except BaseException:
            Path(scratch).unlink(missing_ok=True)
            raise
