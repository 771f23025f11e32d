"""The grading pieces, one by one, without running a lesson (the workflow test does that)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_helpers.i18n import translator
from course_helpers.languages import LANGUAGES
from course_tools import exercises
from course_tools.grading import assignment, feedback, sandbox, settings, validate

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted(p.stem for p in (ROOT / "exercises").glob("*.toml"))


def graded_cells(notebook):
    return {c.id: c.metadata["nbgrader"] for c in notebook.cells if "nbgrader" in c.metadata}


@pytest.mark.parametrize("lesson", LESSONS)
@pytest.mark.parametrize("language", LANGUAGES)
def test_every_exercise_becomes_a_solution_cell_and_a_test_cell_worth_its_points(lesson, language):
    notebook = assignment.source_notebook(ROOT, lesson, language)
    marked = graded_cells(notebook)
    found = exercises.load(ROOT, lesson)
    assert len(found) >= 3
    for answer_id, exercise in found.items():
        check_id = answer_id.replace("-answer", "-check")
        assert marked[answer_id]["solution"] and not marked[answer_id]["grade"]
        assert marked[check_id] == {
            "grade": True,
            "grade_id": check_id,
            "locked": True,
            "points": exercise.points,
            "schema_version": 3,
            "solution": False,
            "task": False,
        }
    assert set(marked) == {*found, *(a.replace("-answer", "-check") for a in found)}
    assert notebook.metadata["course_helpers"] == {"lesson": lesson, "language": language}


def test_the_released_notebook_reads_like_the_lesson_without_solutions_or_hidden_tests(tmp_path):
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions
    from traitlets.config import Config

    config = Config()
    settings.apply(config, root=tmp_path, course_id="c", language="fr")
    notebook = assignment.source_notebook(ROOT, "02_dqn_cartpole", "fr")
    for step in (ClearSolutions(config=config), ClearHiddenTests(config=config)):
        notebook, _ = step.preprocess(notebook, {})
    lesson = {
        c.id: c.source for c in nbformat.read(ROOT / "notebooks/fr/02_dqn_cartpole.ipynb", 4).cells
    }
    for cell_id in graded_cells(notebook):
        released = next(c.source for c in notebook.cells if c.id == cell_id)
        assert released.strip() == lesson[cell_id].strip()
    text = nbformat.writes(notebook)
    for solution in exercises.solutions(ROOT, "02_dqn_cartpole").values():
        assert solution.strip().splitlines()[-1].strip() not in text
    assert "HIDDEN TESTS" not in text and "seed=7" not in text


def test_a_new_course_gets_a_config_and_an_existing_one_is_never_rewritten(tmp_path):
    course = tmp_path / "course"
    assignment.write(ROOT, course, "01_replay_buffers", "es")
    config = course / "nbgrader_config.py"
    edited = config.read_text().replace("cell_timeout=120", "cell_timeout=60") + "# mine\n"
    config.write_text(edited)
    assignment.write(ROOT, course, "01_replay_buffers", "fr")
    assert config.read_text() == edited
    assert (course / "source/01_replay_buffers-fr/01_replay_buffers.ipynb").exists()


def test_a_foreign_config_is_named_in_the_error_and_left_alone(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    with pytest.raises(ValueError, match=r"nbgrader_config.py exists and does not call"):
        assignment.write(ROOT, tmp_path, "01_replay_buffers", "en")
    assert (tmp_path / "nbgrader_config.py").read_text() == "c = get_config()\n"


def test_a_config_written_before_the_tooling_moved_names_the_line_to_change(tmp_path):
    """A course set up before course_tools existed: both commands say which line to edit,
    and neither touches the instructor's file."""
    from course_tools.grading import grade

    course = tmp_path / "course"
    assignment.write(ROOT, course, "01_replay_buffers", "en")
    config = course / "nbgrader_config.py"
    old = config.read_text().replace("course_tools.grading", "course_helpers.grading")
    config.write_text(old)
    line = next(n for n, text in enumerate(old.splitlines(), 1) if "course_helpers.grading" in text)
    expected = (
        rf"nbgrader_config.py, line {line}: course_helpers.grading is now course_tools.grading"
    )
    with pytest.raises(ValueError, match=expected):
        assignment.write(ROOT, course, "01_replay_buffers", "fr")
    with pytest.raises(ValueError, match=expected):
        grade.load_config(course)
    assert config.read_text() == old
    assert not (course / "source" / "01_replay_buffers-fr").exists()


def test_an_unknown_lesson_or_language_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="Lessons: 01_replay_buffers"):
        assignment.source_notebook(ROOT, "04_ppo", "en")
    with pytest.raises(ValueError, match="Unknown language 'de'"):
        assignment.source_notebook(ROOT, "01_replay_buffers", "de")


def test_a_localized_lesson_older_than_its_exercises_says_to_rebuild_it(tmp_path):
    lesson = "01_replay_buffers"
    for folder in ("exercises", "notebooks/en", "notebooks/fr"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "exercises" / f"{lesson}.toml").write_text(
        (ROOT / "exercises" / f"{lesson}.toml").read_text()
    )
    (tmp_path / "notebooks" / "en" / f"{lesson}.ipynb").write_text(
        (ROOT / "notebooks" / "en" / f"{lesson}.ipynb").read_text()
    )
    stale = nbformat.read(ROOT / "notebooks" / "fr" / f"{lesson}.ipynb", as_version=4)
    stale.cells = [cell for cell in stale.cells if cell.id != "fifo-answer"]
    nbformat.write(stale, tmp_path / "notebooks" / "fr" / f"{lesson}.ipynb")
    with pytest.raises(ValueError, match=r"no cell 'fifo-answer'.*course l10n build"):
        assignment.source_notebook(tmp_path, lesson, "fr")


def test_the_config_localizes_nbgraders_texts_and_confines_the_kernel(tmp_path):
    from traitlets.config import Config

    config = Config()
    settings.apply(
        config,
        root=tmp_path,
        course_id="c",
        language="pt-br",
        cell_timeout=42,
        cpu_seconds=100,
        memory_mb=2048,
    )
    _ = translator("pt-br")
    assert config.Validator.failed_warning.startswith(
        _(
            "{num_failed} cell(s) failed. If you submit your notebook as it is, you will not "
            "receive full credit."
        )
    )
    assert config.OverwriteCells.add_missing_cells is True
    assert config.Execute.timeout == 42
    startup = config.Execute.extra_arguments[0]
    assert (
        "confine(" in startup and "'cpu_seconds': 100" in startup and "'memory_mb': 2048" in startup
    )
    assert feedback.LimitOutputSize in config.Autograde.autograde_preprocessors
    assert feedback.Localize in config.GenerateFeedback.preprocessors
    assert config.GenerateFeedback.HTMLExporter.template_name == "course_feedback"
    assert "template_name" not in config.HTMLExporter  # the formgrader's pages stay its own


def test_a_grading_user_that_cannot_be_used_stops_before_any_grading(tmp_path):
    from traitlets.config import Config

    with pytest.raises(ValueError, match="does not exist on this machine"):
        settings.apply(
            Config(), root=tmp_path, course_id="c", language="en", user="no-such-user-here"
        )


def test_the_write_guard_refuses_writes_outside_and_allows_inside(tmp_path):
    inside, outside = tmp_path / "student", tmp_path / "instructor.txt"
    inside.mkdir()
    script = f"""
import os, sys
from course_tools.grading.sandbox import write_guard
sys.addaudithook(write_guard([{str(inside)!r}], "refused {{path}}"))
open({str(inside / "ok.txt")!r}, 'w').write('fine')
for attempt in (lambda: open({str(outside)!r}, 'w'), lambda: os.remove({str(inside / "ok.txt")!r} + '/../../x'),
                lambda: os.rename({str(inside / "ok.txt")!r}, {str(outside)!r})):
    try:
        attempt()
        print('allowed')
    except PermissionError as error:
        print(error)
print(open({str(inside / "ok.txt")!r}).read())
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True).stdout
    assert out.splitlines() == [
        f"refused {outside}",
        f"refused {tmp_path / 'x'}",
        f"refused {outside}",
        "fine",
    ]
    assert not outside.exists()


def test_a_confined_process_has_its_limits_and_a_private_home(tmp_path):
    script = """
import os, resource, tempfile
from course_tools.grading.sandbox import confine
confine(cpu_seconds=50, memory_mb=3000, file_mb=1, language="es")
print(resource.getrlimit(resource.RLIMIT_CPU)[0], resource.getrlimit(resource.RLIMIT_AS)[0] >> 20)
print(os.environ["HOME"] == tempfile.gettempdir() != os.getcwd(), os.environ["COURSE_QUICK"])
try:
    bytearray(4 * 2**30)
except MemoryError:
    print("MemoryError")
try:
    open("big.bin", "wb").write(b"x" * 2 * 2**20)
except OSError as error:
    print("EFBIG" if error.errno == 27 else error)
try:
    open(os.path.join(os.path.dirname(os.getcwd()), "escape.txt"), "w")
except PermissionError as error:
    print(error)
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path
    )
    lines = out.stdout.splitlines()
    assert lines[:4] == ["50 3000", "True 1", "MemoryError", "EFBIG"], out.stderr
    refused = translator("es")(
        "Grading: a notebook may write files only inside its own folder; "
        "writing to {path} was refused."
    ).format(path=tmp_path.parent / "escape.txt")
    assert lines[4] == refused


def test_a_kernel_that_cannot_be_confined_exits_instead_of_running_student_code(tmp_path):
    script = "from course_tools.grading.sandbox import confine\nconfine(cpu_seconds=5, memory_mb=4096, file_mb=1, user='no-such-user-here')\nprint('ran')"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 70 and "ran" not in result.stdout
    assert "could not confine the kernel" in result.stderr


def test_long_outputs_are_cut_with_a_note_in_the_assignments_language(tmp_path):
    from traitlets.config import Config

    course = tmp_path / "course"
    assignment.write(ROOT, course, "01_replay_buffers", "es")
    config = Config()
    config.CourseDirectory.root = str(course)
    step = feedback.LimitOutputSize(config=config, max_chars=100)
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                outputs=[
                    nbformat.v4.new_output("stream", name="stdout", text="x" * 1000),
                    nbformat.v4.new_output(
                        "display_data", data={"text/html": "<b>" * 100, "text/plain": "y" * 50}
                    ),
                ]
            )
        ]
    )
    resources = {
        "nbgrader": {"assignment": "01_replay_buffers-es", "notebook": "01_replay_buffers"}
    }
    notebook, _ = step.preprocess(notebook, resources)
    stream, display = notebook.cells[0].outputs
    note = translator("es")("[Output cut here: it was {count} characters long.]")
    assert stream.text == "x" * 100 + "\n" + note.format(count=1000) + "\n"
    assert (
        display.data["text/html"] == note.format(count=300)
        and display.data["text/plain"] == "y" * 50
    )


def test_validate_reports_in_the_notebooks_language(tmp_path, monkeypatch):
    from nbgrader.validator import Validator

    path = tmp_path / "01_replay_buffers.ipynb"
    nbformat.write(assignment.source_notebook(ROOT, "01_replay_buffers", "fr"), path)
    _ = translator("fr")
    monkeypatch.setattr(
        Validator,
        "validate",
        lambda self, filename: {
            "failed": [{"source": "x = ...", "raw_error": "You did not provide a response."}]
        },
    )
    passed, report = validate.validate(path)
    assert not passed
    assert report.splitlines()[0] == _(
        "{num_failed} cell(s) failed. If you submit your notebook "
        "as it is, you will not receive full credit."
    ).format(num_failed=1)
    assert _("You did not provide a response.") in report and "You did not" not in report
    monkeypatch.setattr(Validator, "validate", lambda self, filename: {})
    assert validate.validate(path) == (True, _("Success: your notebook passes every test."))


def test_grading_an_assignment_that_was_never_generated_says_what_to_run(tmp_path):
    from course_tools.grading import grade

    course = tmp_path / "course"
    assignment.write(ROOT, course, "01_replay_buffers", "en")
    with pytest.raises(
        ValueError, match=r"Run `nbgrader generate_assignment 01_replay_buffers-en`"
    ):
        grade.grade_all(course, "01_replay_buffers-en")
    with pytest.raises(FileNotFoundError, match="is .* the course folder"):
        grade.grade_all(tmp_path, "01_replay_buffers-en")


def test_tampered_grading_metadata_is_restored_and_every_change_is_logged(tmp_path, caplog):
    import logging

    from traitlets.config import Config

    from course_tools.grading.sanitize import NOTE, RestoreGradingMetadata

    course = tmp_path / "course"
    assignment.write(ROOT, course, "01_replay_buffers", "en")
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

    submission = assignment.source_notebook(ROOT, "01_replay_buffers", "en")
    for clear in (ClearSolutions, ClearHiddenTests):  # what the student received
        submission, _ = clear().preprocess(submission, {})
    cells = {c.id: c for c in submission.cells}
    cells["ex-time-check"].metadata["nbgrader"]["points"] = 100
    cells["ex-buffer-check"].source = "True"
    cells["intro"].metadata["nbgrader"] = {"grade": True, "points": 9, "grade_id": "bonus"}
    submission.cells.remove(cells["ex-shapes-check"])
    config = Config()
    config.CourseDirectory.root = str(course)
    step = RestoreGradingMetadata(config=config, log=logging.getLogger("grading-test"))
    with caplog.at_level(logging.WARNING, logger="grading-test"):
        restored, _ = step.preprocess(
            submission,
            {"nbgrader": {"assignment": "01_replay_buffers-en", "notebook": "01_replay_buffers"}},
        )
    notes = sorted(r.getMessage().split(NOTE)[1].strip() for r in caplog.records)
    assert notes == [
        "ex-buffer-check: test cell edited; the instructor's version was graded",
        "ex-shapes-check: cell missing; the instructor's version was put back",
        "ex-time-check: grading metadata differed from the instructor's copy and was restored",
        "intro: grading metadata added by the student was removed",
    ]
    by_id = {c.id: c for c in restored.cells}
    assert by_id["ex-time-check"].metadata["nbgrader"]["points"] == 1
    assert "nbgrader" not in by_id["intro"].metadata


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another user needs root")
def test_the_unprivileged_user_option_makes_the_os_refuse_what_the_hook_cannot_see(tmp_path):
    import pwd

    nobody = pwd.getpwnam("nobody")
    student, instructor = tmp_path / "student", tmp_path / "instructor.txt"
    student.mkdir()
    instructor.write_text("grades")
    script = f"""
import os, subprocess
from course_tools.grading.sandbox import confine
confine(cpu_seconds=60, memory_mb=4096, file_mb=1, user="nobody")
print(os.getuid(), os.getgid())
open("answer.txt", "w").write("mine")  # the submission's own folder stays writable
# A child process gets past the audit hook; the operating system still says no.
refused = subprocess.run(["sh", "-c", "echo x >> {instructor}"], capture_output=True).returncode != 0
print("refused" if refused else "written")
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=student
    )
    assert result.stdout.splitlines() == [f"{nobody.pw_uid} {nobody.pw_gid}", "refused"], (
        result.stderr
    )
    assert (student / "answer.txt").read_text() == "mine" and instructor.read_text() == "grades"


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another user needs root")
def test_a_grading_user_who_cannot_read_python_is_refused_before_any_grading(tmp_path, monkeypatch):
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "python").symlink_to(sys.executable)
    monkeypatch.setattr(sys, "executable", str(private / "python"))
    with pytest.raises(
        PermissionError,
        match=r"User 'nobody' cannot run .*private/python.*"
        r"example under /opt, not /root",
    ):
        sandbox.check_user("nobody")
