"""Finding lessons by name and running one headless, in a throw-away course project.

The `project` fixture (conftest.py) holds 01_hello, 02_broken and scratch.ipynb.
"""

import os

import nbformat
import pytest

from course_tools import lessons
from course_tools.lessons import LessonFailed


def outputs_text(notebook, index):
    return "".join(output.get("text", "") for output in notebook.cells[index].outputs)


def test_project_root_is_the_checkout_holding_notebooks_en(project):
    assert lessons.project_root() == project


def test_project_root_is_found_from_a_subfolder(project, monkeypatch):
    monkeypatch.chdir(project / "notebooks" / "en")
    assert lessons.project_root() == project


def test_lesson_names_lists_the_numbered_notebooks_in_order(project):
    assert lessons.lesson_names() == ["01_hello", "02_broken"]


@pytest.mark.parametrize("name", ["01_hello", "01", "hello", "01_hello.ipynb"])
def test_lesson_path_resolves_full_name_number_or_title(project, name):
    assert lessons.lesson_path(name) == project / "notebooks" / "en" / "01_hello.ipynb"


def test_lesson_path_of_an_unknown_name_suggests_the_closest_lesson(project):
    with pytest.raises(ValueError, match="Unknown lesson 'helo' in en") as error:
        lessons.lesson_path("helo")
    message = str(error.value)
    assert "Did you mean 'hello'" in message
    assert "Lessons: 01_hello, 02_broken." in message


def test_lesson_path_does_not_resolve_a_notebook_that_is_no_lesson(project):
    with pytest.raises(ValueError, match="Unknown lesson 'scratch'"):
        lessons.lesson_path("scratch")


def test_an_unknown_language_is_refused_listing_the_languages(project):
    with pytest.raises(ValueError, match="Unknown language 'de'") as error:
        lessons.lesson_names("de")
    assert "en, pt-br, es, fr" in str(error.value)
    with pytest.raises(ValueError, match="Unknown language 'de'"):
        lessons.lesson_path("01", language="de")


# Starts a Jupyter kernel or server: a `notebook` test.
@pytest.mark.notebook
@pytest.mark.parametrize("quick, shown", [(True, "1"), (False, "0")])
def test_run_lesson_writes_the_executed_copy_to_runs_with_quick_mode_passed_on(
    project, monkeypatch, quick, shown
):
    source = project / "notebooks" / "en" / "01_hello.ipynb"
    before = source.read_bytes()
    monkeypatch.setenv("COURSE_QUICK", "keep-me")
    target = lessons.run_lesson("hello", quick=quick, show_progress=False)
    assert target == project / "runs" / "en" / "01_hello.ipynb"
    executed = nbformat.read(target, as_version=4)
    assert outputs_text(executed, 0).strip() == shown
    assert os.environ["COURSE_QUICK"] == "keep-me"  # restored afterwards
    assert source.read_bytes() == before  # the lesson itself stays unexecuted


# Starts a Jupyter kernel or server: a `notebook` test.
@pytest.mark.notebook
def test_run_lesson_runs_extra_code_as_a_last_cell_of_the_executed_copy_only(project):
    source = project / "notebooks" / "en" / "01_hello.ipynb"
    before = source.read_bytes()
    target = lessons.run_lesson(
        "01",
        output=project / "out" / "hello.ipynb",
        show_progress=False,
        extra_code="print('extra', 6 * 7)",
    )
    executed = nbformat.read(target, as_version=4)
    assert len(executed.cells) == 2
    assert outputs_text(executed, 1).strip() == "extra 42"
    assert source.read_bytes() == before


# Starts a Jupyter kernel or server: a `notebook` test.
@pytest.mark.notebook
def test_a_cell_over_its_time_limit_is_named_and_the_notebook_still_written(project):
    source = project / "notebooks" / "en" / "03_slow.ipynb"
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("print('start')"),
        nbformat.v4.new_code_cell("import time\ntime.sleep(30)"),
    ]
    nbformat.write(notebook, source)
    target = project / "runs" / "slow.ipynb"
    with pytest.raises(LessonFailed, match=r"03_slow.ipynb timed out after 2 s in cell 1 \(id "):
        lessons.run_lesson("03", output=target, show_progress=False, cell_timeout=2)
    assert outputs_text(nbformat.read(target, as_version=4), 0).strip() == "start"


def test_course_run_sets_no_time_limit_unless_asked(project, monkeypatch):
    """A full SAC training cell runs for about an hour; a default limit would kill it."""
    from course_tools import cli

    seen: list[int | None] = []

    def run_lesson(*args):
        seen.append(args[-1])
        return "x"

    monkeypatch.setattr(cli.lessons, "run_lesson", run_lesson)
    assert cli.main(["run", "01"]) == 0
    assert cli.main(["run", "01", "--cell-timeout", "60"]) == 0
    assert seen == [None, 60]


def test_run_lesson_refuses_to_write_over_the_lesson(project):
    source = project / "notebooks" / "en" / "01_hello.ipynb"
    before = source.read_bytes()
    with pytest.raises(ValueError, match="Refusing to write the executed notebook over the lesson"):
        lessons.run_lesson("01", output=source, show_progress=False)
    with pytest.raises(ValueError, match="Choose another --output path"):
        lessons.run_lesson("01", output="notebooks/en/../en/01_hello.ipynb", show_progress=False)
    assert source.read_bytes() == before


# Starts a Jupyter kernel or server: a `notebook` test.
@pytest.mark.notebook
def test_a_failing_lesson_is_written_anyway_and_the_error_names_the_cell(project):
    target = project / "runs" / "broken.ipynb"
    with pytest.raises(LessonFailed) as error:
        lessons.run_lesson("02", output=target, show_progress=False)
    source = nbformat.read(project / "notebooks" / "en" / "02_broken.ipynb", as_version=4)
    message = str(error.value)
    assert f"02_broken.ipynb failed in cell 1 (id {source.cells[1].id!r})" in message
    assert str(target) in message
    assert "ZeroDivisionError" in message
    executed = nbformat.read(target, as_version=4)
    assert outputs_text(executed, 0).strip() == "before"
    assert executed.cells[1].outputs[0].output_type == "error"
    assert executed.cells[2].outputs == []  # execution stopped at the failing cell


def test_lesson_failed_is_a_runtime_error():
    assert issubclass(LessonFailed, RuntimeError)
