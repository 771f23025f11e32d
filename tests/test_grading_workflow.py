"""The instructor's whole grading workflow, on real submissions, in English and French.

generate -> release -> students fetch and submit -> collect (and receive a folder with
zip_collect) -> `course grade` (autograde, each submission alone and confined) -> export
to CSV -> generate feedback. The submissions (tests/grading/fixtures.py) include a crash,
an infinite loop, a memory hog, deleted, edited and tampered test cells, megabytes of
output and a write outside the student's folder, and hostile code: a gradebook opened with
SQLite, the course's files read and printed, a shell child writing into other students'
folders, a child that would outlive grading, a fork bomb and a network connection to the
grader's machine, and one that reads every process's environment; and three that write past
the sandbox's disk (bytes, files, files in /tmp). Graded two at a time (`--jobs 2`).
"""

from __future__ import annotations

import csv
import hashlib
import os
import secrets
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import nbformat
import pytest

from course_helpers.i18n import translator
from course_tools import exercises
from course_tools.grading import grade
from grading import fixtures
from grading.fixtures import CASES, MAX_SCORE, POINTS

pytestmark = pytest.mark.notebook

ROOT = Path(__file__).resolve().parents[1]
LESSON = "01_replay_buffers"
# The infinite loops cost this much. Every lesson 01 cell needs far less on a quiet machine,
# but at 30 s one of dana's other cells timed out once while a SAC run shared the two cores
# (28 November 2026: 6 points instead of 9), so leave room for a busy machine.
CELL_TIMEOUT = 60


def nbgrader(*args: str, cwd: Path, **env: str) -> str:
    path = os.pathsep.join([str(Path(sys.executable).parent), env.pop("PATH", os.environ["PATH"])])
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=cwd,
        text=True,
        capture_output=True,
        env={**os.environ, "PATH": path, **env},
    )
    assert result.returncode == 0, (
        f"nbgrader {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    )
    return result.stdout + result.stderr


def course_cli(*args: str, **env: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "course_tools.cli", *args],
        text=True,
        capture_output=True,
        env={**os.environ, **env},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def gradebook_rows(course: Path) -> dict[str, list[tuple]]:
    """Every table of the gradebook and its rows, sorted."""
    with sqlite3.connect(course / "gradebook.db") as db:
        tables = [
            name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        ]
        return {
            name: sorted(db.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr)
            for name in tables
        }


# Tables that autograding fills: the rest is the instructor's and must not change.
GRADING_TABLES = {"student", "submitted_assignment", "submitted_notebook", "grade", "comment"}


def orphans() -> list[str]:
    """Command lines of running processes that hostile code left behind."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if fixtures.ORPHAN in text or "bomb()" in text:
            found.append(text)
    return found


@pytest.fixture(scope="module")
def listener():
    """A port on this machine that a submission tries to send its notebook to."""
    server = socket.create_server(("127.0.0.1", 0))
    received: list[bytes] = []

    def accept() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                received.append(connection.recv(65536))

    threading.Thread(target=accept, daemon=True).start()
    fixtures.NETWORK["port"] = server.getsockname()[1]
    yield received
    server.close()


@pytest.fixture(scope="module")
def course(tmp_path_factory, listener):
    base = tmp_path_factory.mktemp("grading")
    course, exchange = base / "course", base / "exchange"
    exchange.mkdir()
    solutions = exercises.solutions(ROOT, LESSON)
    for language in ("en", "fr"):
        course_cli(
            "assignment",
            LESSON,
            "--lang",
            language,
            "--course",
            str(course),
            "--exchange",
            str(exchange),
        )
    config = course / "nbgrader_config.py"  # the instructor shortens the per-cell limit
    config.write_text(  # and the sandbox's disk, so that filling it takes little time
        config.read_text()
        .replace("cell_timeout=120", f"cell_timeout={CELL_TIMEOUT}")
        .replace("disk_mb=512", f"disk_mb={fixtures.DISK_MB}")
        .replace("disk_files=10_000", f"disk_files={fixtures.DISK_FILES}")
    )
    course_id = course.name
    for language in ("en", "fr"):
        assignment = f"{LESSON}-{language}"
        nbgrader("generate_assignment", assignment, cwd=course)
        nbgrader("release_assignment", assignment, cwd=course)
        for case in (c for c in CASES if c.language == language):
            home = base / "students" / case.student
            home.mkdir(parents=True)
            via_exchange = case.student in ("ana", "fatou")
            if via_exchange:  # the student fetches the assignment, works, and submits
                nbgrader(
                    "fetch_assignment",
                    assignment,
                    f"--course={course_id}",
                    f"--Exchange.root={exchange}",
                    cwd=home,
                )
                path = home / assignment / f"{LESSON}.ipynb"
            else:  # the instructor receives the notebook in a folder, e.g. from an LMS
                path = (
                    course
                    / "downloaded"
                    / assignment
                    / "archive"
                    / case.student
                    / f"{LESSON}.ipynb"
                )
                path.parent.mkdir(parents=True)
                shutil.copy(course / "release" / assignment / f"{LESSON}.ipynb", path)
            notebook = nbformat.read(path, as_version=4)
            case.edit(notebook, solutions)
            nbformat.write(notebook, path)
            if via_exchange:
                # One machine plays every student, so each says who they are.
                nbgrader(
                    "submit",
                    assignment,
                    f"--course={course_id}",
                    f"--Exchange.root={exchange}",
                    f"--student={case.student}",
                    cwd=home,
                )
        nbgrader("collect", assignment, cwd=course)
        nbgrader("zip_collect", assignment, cwd=course)
    before = digest(course / "submitted")
    gradebook_before = gradebook_rows(course)
    # The grader's session holds a secret, as a JupyterHub or cloud token would be.
    secret = secrets.token_hex(16)
    graders = {name: secret for name in fixtures.SECRET_VARIABLES}
    graders["PATH"] = f"/opt/{secret}/bin:{os.environ['PATH']}"
    # Two submissions at a time, each in its own sandbox: the scores must be exactly those
    # that grading one at a time gives (CASES).
    reports = {
        language: course_cli(
            "grade", f"{LESSON}-{language}", "--course", str(course), "--jobs", "2", **graders
        )
        for language in ("en", "fr")
    }
    left_running = orphans()
    gradebook_after = gradebook_rows(course)
    nbgrader("export", cwd=course, **graders)
    for language in ("en", "fr"):
        nbgrader("generate_feedback", f"{LESSON}-{language}", cwd=course, **graders)
    return {
        "secret": secret,
        "path": course,
        "reports": reports,
        "before": before,
        "orphans": left_running,
        "gradebook": (gradebook_before, gradebook_after),
        "received": list(listener),
    }


def test_every_student_was_collected(course):
    assert sorted(grade.students(course["path"], f"{LESSON}-en")) == sorted(
        c.student for c in CASES if c.language == "en"
    )
    assert sorted(grade.students(course["path"], f"{LESSON}-fr")) == sorted(
        c.student for c in CASES if c.language == "fr"
    )


@pytest.mark.parametrize("case", CASES, ids=[f"{c.student}-{c.language}" for c in CASES])
def test_each_submission_gets_its_exact_score_in_the_gradebook_csv(course, case):
    with open(course["path"] / "grades.csv", newline="") as handle:
        rows = {(row["assignment"], row["student_id"]): row for row in csv.DictReader(handle)}
    row = rows[(f"{LESSON}-{case.language}", case.student)]
    assert (float(row["score"]), float(row["max_score"])) == (case.score, MAX_SCORE)


def report_of(report: str, student: str) -> tuple[str, list[str]]:
    """The student's line of a `course grade` report, and the indented notes under it."""
    lines = report.splitlines()
    index = next(i for i, line in enumerate(lines) if line.split()[:1] == [student])
    notes = []
    for line in lines[index + 1 :]:
        if not line.startswith("    "):
            break
        notes.append(line.strip())
    return lines[index], notes


@pytest.mark.parametrize("case", CASES, ids=[f"{c.student}-{c.language}" for c in CASES])
def test_the_report_tells_what_happened_to_each_submission(course, case):
    line, notes = report_of(course["reports"][case.language], case.student)
    assert f"{case.score:g} / {MAX_SCORE:g}" in line and case.status in line
    for expected in case.notes:
        assert any(expected in note for note in notes), (expected, notes)
    assert len(notes) == len(case.notes), notes


def test_grading_leaves_every_submitted_file_byte_identical(course):
    assert digest(course["path"] / "submitted") == course["before"]


def test_what_a_notebook_writes_while_graded_stays_out_of_the_graded_folder(course):
    # The graded folders hold what nbgrader put there, whatever the notebooks wrote (a
    # gigabyte, 300,000 files), so that feedback and export never walk what a student made.
    for student, language in (("uma", "en"), ("vera", "fr"), ("wim", "en"), ("ana", "en")):
        graded = course["path"] / "autograded" / student / f"{LESSON}-{language}"
        submitted = course["path"] / "submitted" / student / f"{LESSON}-{language}"
        if not graded.exists():  # nbgrader removes the folder of a notebook it gave up on
            continue
        assert sorted(p.name for p in graded.iterdir()) == sorted(
            p.name for p in submitted.iterdir()
        ), student


def test_a_write_outside_the_students_folder_is_refused(course):
    assert not list(course["path"].parent.rglob("escaped.txt"))


def test_megabytes_of_output_are_cut_in_the_graded_notebook(course):
    graded = course["path"] / "autograded" / "jules" / f"{LESSON}-fr" / f"{LESSON}.ipynb"
    assert graded.stat().st_size < 1_000_000
    cut = translator("fr")("[Output cut here: it was {count} characters long.]").format(
        count=5_000_001
    )
    assert cut in graded.read_text()


def test_a_deleted_test_cell_is_put_back_with_a_note_in_the_students_language(course):
    graded = nbformat.read(
        course["path"] / "autograded" / "gael" / f"{LESSON}-fr" / f"{LESSON}.ipynb", 4
    )
    restored = [
        c
        for c in graded.cells
        if c.metadata.get("nbgrader", {}).get("grade_id") == "ex-shapes-check"
    ]
    note = translator("fr")(
        "This cell (id: {cell_id}) was missing from the submission; grading put it back."
    ).format(cell_id="ex-shapes-check")
    assert len(restored) == 1 and restored[0].source.startswith(f"# {note}\n")


@pytest.mark.parametrize("language", ["en", "fr"])
def test_feedback_pages_are_in_the_students_language(course, language):
    pages = sorted((course["path"] / "feedback").glob(f"*/{LESSON}-{language}/{LESSON}.html"))
    graded = sorted(c.student for c in CASES if c.language == language and c.finished)
    assert sorted(p.parts[-3] for p in pages) == graded
    _ = translator(language)
    for page in pages:
        text = page.read_text()
        assert f'<html lang="{language}">' in text
        assert _("Feedback on {notebook}").format(notebook=LESSON) in text
        assert _("Score: {points}").format(points="") in text
    if language != "en":
        assert "Feedback on" not in text and "Student's answer" not in text


@pytest.mark.parametrize(
    "lesson, language", [("02_dqn_cartpole", "pt-br"), ("03_sac_minitaur", "es")]
)
def test_every_lessons_reference_solutions_get_full_marks_and_localized_feedback(
    tmp_path, lesson, language
):
    course, name = tmp_path / "course", f"{lesson}-{language}"
    course_cli("assignment", lesson, "--lang", language, "--course", str(course))
    nbgrader("generate_assignment", name, cwd=course)
    released = nbformat.read(course / "release" / name / f"{lesson}.ipynb", as_version=4)
    solutions = exercises.solutions(ROOT, lesson)
    for cell in released.cells:
        cell.source = solutions.get(cell.get("id"), cell.source)
    submitted = course / "submitted" / "teacher" / name / f"{lesson}.ipynb"
    submitted.parent.mkdir(parents=True)
    nbformat.write(released, submitted)
    line, notes = report_of(course_cli("grade", name, "--course", str(course)), "teacher")
    points = sum(e.points for e in exercises.load(ROOT, lesson).values())
    assert f"{points:g} / {points:g}" in line and notes == []
    nbgrader("generate_feedback", name, cwd=course)
    page = (course / "feedback" / "teacher" / name / f"{lesson}.html").read_text()
    assert f'<html lang="{language}">' in page
    assert translator(language)("Feedback on {notebook}").format(notebook=lesson) in page


def test_course_validate_answers_students_in_their_language(course):
    _ = translator("fr")
    released = course["path"] / "release" / f"{LESSON}-fr" / f"{LESSON}.ipynb"
    blank = subprocess.run(
        [sys.executable, "-m", "course_tools.cli", "validate", str(released)],
        capture_output=True,
        text=True,
    )
    assert blank.returncode == 1
    assert blank.stdout.startswith(
        _(
            "{num_failed} cell(s) failed. If you submit your notebook as "
            "it is, you will not receive full credit."
        ).format(num_failed=len(POINTS))
    )
    assert _("This cell failed:") in blank.stdout and "Pas encore" in blank.stdout
    solved = course["path"].parent / "students" / "fatou" / f"{LESSON}-fr" / f"{LESSON}.ipynb"
    done = subprocess.run(
        [sys.executable, "-m", "course_tools.cli", "validate", str(solved)],
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout.strip()) == (
        0,
        _("Success: your notebook passes every test."),
    )


def test_a_submission_that_outlives_its_time_is_stopped_and_recorded_as_zero(course):
    # Runs last: it regrades ana, after the CSV and the feedback above were written.
    out = course_cli(
        "grade",
        f"{LESSON}-en",
        "--course",
        str(course["path"]),
        "--student",
        "ana",
        "--timeout",
        "1",
    )
    line, notes = report_of(out, "ana")
    assert f"0 / {MAX_SCORE:g}" in line and "timed out" in line and notes[-1] == "stopped after 1 s"
    assert not list(course["path"].parent.rglob("escaped.txt"))
    assert digest(course["path"] / "submitted") == course["before"]


def test_the_gradebook_changes_only_by_the_grades_though_a_submission_opened_it(course):
    before, after = course["gradebook"]
    assert sorted(after) == sorted(before)  # no table added ("pwned") or dropped
    for table in set(before) - GRADING_TABLES:
        assert after[table] == before[table], table
    assert len(after["grade"]) > len(before["grade"])  # and grading did write its grades
    with sqlite3.connect(course["path"] / "gradebook.db") as db:
        assert db.execute("SELECT count(*) FROM grade WHERE manual_score = 100").fetchone() == (0,)


def test_nothing_of_the_course_or_of_another_student_reaches_a_graded_notebook_or_feedback(course):
    pages = list((course["path"] / "feedback").rglob("*.html"))
    graded = list((course["path"] / "autograded").rglob("*.ipynb"))
    assert pages and graded
    for path in pages + graded:
        text = path.read_text(errors="replace")
        for secret in fixtures.SECRETS:
            if secret == fixtures.ANA_WORDS and "/ana/" in str(path):
                continue  # her own words, in her own notebook and page
            assert secret not in text, (secret, path)
    # The reader found only its own folder: the copy of its notebook grading works on.
    noah = nbformat.read(
        course["path"] / "autograded" / "noah" / f"{LESSON}-en" / f"{LESSON}.ipynb", 4
    )
    printed = "".join(o.get("text", "") for c in noah.cells for o in c.get("outputs", []))
    assert "gradebook.db" not in printed and "nbgrader_config.py" not in printed


def test_nothing_of_the_graders_environment_reaches_a_graded_notebook_feedback_or_log(course):
    # Every file grading wrote: graded notebooks, feedback pages, the logs, the export.
    written = [p for p in course["path"].rglob("*") if p.is_file() and "submitted" not in p.parts]
    assert any("logs" in p.parts for p in written) and any(p.suffix == ".html" for p in written)
    for path in written:
        assert course["secret"].encode() not in path.read_bytes(), path
    # The reader did read /proc: process 1 keeps the sandbox's disk (no bubblewrap process
    # is inside), process 3 is the kernel, and its output goes to a pipe, not to nbgrader's
    # log.
    tara = nbformat.read(
        course["path"] / "autograded" / "tara" / f"{LESSON}-en" / f"{LESSON}.ipynb", 4
    )
    printed = "".join(o.get("text", "") for c in tara.cells for o in c.get("outputs", []))
    first = printed.split("/proc/1/cmdline: ", 1)[1].split("\n", 1)[0]
    assert first.split()[1:4] == ["-P", "-m", "course_tools.grading.disk"], first
    assert "ipykernel_launcher" in printed.split("/proc/3/cmdline: ", 1)[1].split("\n", 1)[0]
    assert "/proc/3/fd/1 -> pipe:" in printed and "bwrap" not in printed, printed[:3000]
    assert "/proc/1/environ: [Errno 13] Permission denied" in printed
    page = course["path"] / "feedback" / "tara" / f"{LESSON}-en" / f"{LESSON}.html"
    assert "/proc/1/cmdline" in page.read_text()


def test_a_shell_child_cannot_write_into_another_students_folders(course):
    # Her own graded folder was hers to write in, on the sandbox's own disk (the child did
    # write there: her notebook lists the file), and nothing of it reached the course.
    olga = nbformat.read(
        course["path"] / "autograded" / "olga" / f"{LESSON}-en" / f"{LESSON}.ipynb", 4
    )
    printed = "".join(o.get("text", "") for c in olga.cells for o in c.get("outputs", []))
    assert "olga-was-here.txt" in printed.split("in my folder:", 1)[1]
    assert not list(course["path"].parent.rglob("olga-was-here.txt"))


def test_no_process_a_submission_started_outlives_its_grading(course):
    assert course["orphans"] == []


def test_a_submission_cannot_reach_the_graders_machine_over_the_network(course):
    assert course["received"] == []
    sami = nbformat.read(
        course["path"] / "autograded" / "sami" / f"{LESSON}-en" / f"{LESSON}.ipynb", 4
    )
    printed = "".join(o.get("text", "") for c in sami.cells for o in c.get("outputs", []))
    assert "network:" in printed


def test_a_fork_bomb_is_stopped_at_the_process_limit_and_the_next_student_is_graded_as_usual(
    course,
):
    line, notes = report_of(course["reports"]["en"], "ravi")
    assert f"{MAX_SCORE:g} / {MAX_SCORE:g}" in line and "graded" in line and notes == []
    ravi = nbformat.read(
        course["path"] / "autograded" / "ravi" / f"{LESSON}-en" / f"{LESSON}.ipynb", 4
    )
    printed = "".join(o.get("text", "") for o in ravi.cells[-1].get("outputs", []))
    assert "refused: Resource temporarily unavailable" in printed, printed  # the limit was hit
    # The limit the kernel ran under is the grader's, and the bomb stayed below it. (How
    # many processes are left when they are counted varies: the bomb's shells exit when
    # their own forks are refused, so only the upper bound is a property of the sandbox.)
    assert int(printed.split("limit:")[1].split()[0]) == 512, printed
    assert int(printed.split("processes:")[1]) <= 512  # threads count too
    line, _ = report_of(course["reports"]["en"], "sami")  # graded right after ravi
    assert f"{MAX_SCORE:g} / {MAX_SCORE:g}" in line


def test_the_report_says_which_sandbox_graded(course):
    first = course["reports"]["en"].splitlines()[0]
    assert first.startswith("sandbox: bubblewrap")


def test_grading_without_the_sandbox_needs_the_flag_and_is_marked(course, tmp_path):
    # Without bwrap on PATH, nothing is graded, and the message says what to install.
    refused = subprocess.run(
        [
            sys.executable,
            "-m",
            "course_tools.cli",
            "grade",
            f"{LESSON}-en",
            "--course",
            str(course["path"]),
            "--student",
            "ana",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": str(Path(sys.executable).parent)},
    )
    assert refused.returncode == 2 and refused.stdout == ""
    assert "nothing was graded" in refused.stderr and "apt-get install bubblewrap" in refused.stderr
    out = course_cli(
        "grade",
        f"{LESSON}-en",
        "--course",
        str(course["path"]),
        "--student",
        "ana",
        "--unsandboxed",
    )
    assert out.splitlines()[0] == "sandbox: none (--unsandboxed)"
    line, notes = report_of(out, "ana")
    assert f"{MAX_SCORE:g} / {MAX_SCORE:g}" in line and notes == [grade.UNSANDBOXED_NOTE]
