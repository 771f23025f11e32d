"""The `course` command: list, run and lab."""

import json
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest

from course_tools import cli

REPOSITORY = Path(__file__).resolve().parents[1]


def test_course_list_prints_the_lessons_in_order(project, capsys):
    assert cli.main(["list"]) == 0
    assert capsys.readouterr().out.splitlines() == ["01_hello", "02_broken"]


# Starts a Jupyter kernel or server: a `notebook` test.
@pytest.mark.notebook
def test_course_run_writes_the_executed_lesson_and_returns_0(project, capsys):
    output = project / "executed.ipynb"
    assert cli.main(["run", "hello", "--quick", "-o", str(output)]) == 0
    assert f"Executed notebook written to {output}" in capsys.readouterr().out
    executed = nbformat.read(output, as_version=4)
    assert executed.cells[0].outputs[0].text.strip() == "1"


def test_course_run_of_an_unknown_lesson_returns_1_with_the_reason_on_stderr(project, capsys):
    assert cli.main(["run", "helo"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("course run: Unknown lesson 'helo'")
    assert "Did you mean 'hello'" in captured.err


# Starts a Jupyter kernel or server: a `notebook` test.
@pytest.mark.notebook
def test_course_run_of_a_failing_lesson_returns_1_naming_the_cell(project, capsys):
    assert cli.main(["run", "02", "-o", str(project / "broken.ipynb"), "--cell-timeout", "60"]) == 1
    err = capsys.readouterr().err  # after the progress bar, which also draws on stderr
    assert "course run: 02_broken.ipynb failed in cell 1" in err
    assert (project / "broken.ipynb").is_file()


def test_course_run_refusing_to_overwrite_the_lesson_returns_1(project, capsys):
    assert cli.main(["run", "01", "-o", "notebooks/en/01_hello.ipynb"]) == 1
    assert "Refusing to write" in capsys.readouterr().err


def test_course_run_of_an_unknown_language_exits_with_a_usage_error(project, capsys):
    with pytest.raises(SystemExit) as exit:
        cli.main(["run", "01", "--lang", "de"])
    assert exit.value.code == 2
    assert "invalid choice: 'de'" in capsys.readouterr().err


def test_course_without_a_command_exits_with_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit:
        cli.main([])
    assert exit.value.code == 2
    assert "usage: course" in capsys.readouterr().err


def test_course_lab_passes_every_option_to_jupyter_lab(project, monkeypatch):
    # os.execve would replace the test process: record the command instead.
    calls = []
    monkeypatch.setattr(cli.os, "execve", lambda path, argv, env: calls.append((path, argv)))
    options = ["--no-browser", "--port", "8890", "--ServerApp.token=abc", "--allow-root"]
    assert cli.main(["lab", *options]) == 0
    ((path, argv),) = calls
    assert path == sys.executable
    assert argv == [
        sys.executable,
        "-m",
        "jupyterlab",
        f"--ServerApp.root_dir={project / 'notebooks'}",
        *options,
    ]


@pytest.mark.parametrize("uid, expected", [(0, ["--allow-root"]), (1000, [])])
def test_course_lab_allows_root_only_when_running_as_root(project, monkeypatch, uid, expected):
    """JupyterLab refuses to start as root, as in many containers, unless told to."""
    calls = []
    monkeypatch.setattr(cli.os, "execve", lambda path, argv, env: calls.append(argv))
    monkeypatch.setattr(cli.os, "geteuid", lambda: uid)
    assert cli.main(["lab", "--no-browser"]) == 0
    ((argv,),) = [calls]
    assert argv[-1 - len(expected) :] == ["--no-browser", *expected]


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status, response.read().decode()


INSTRUCTOR_PLUGINS = {
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:course-list",
}


# Starts a Jupyter kernel or server: a `notebook` test.
@pytest.mark.notebook
@pytest.mark.parametrize("instructor", [False, True], ids=["learner", "instructor"])
def test_course_lab_serves_the_lessons_in_jupyterlab_with_instructor_tools_only_when_asked(
    instructor,
):
    port, token = free_port(), secrets.token_hex(16)
    course = Path(sys.executable).parent / "course"
    server = subprocess.Popen(
        [
            str(course),
            "lab",
            *(["--instructor"] if instructor else []),
            "--no-browser",
            "--port",
            str(port),
            f"--ServerApp.token={token}",
            "--ServerApp.open_browser=False",
            "--allow-root",
        ],
        cwd=REPOSITORY,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stderr is not None  # stderr=PIPE
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                status, body = get(f"{base}/api/contents/en?token={token}")
                break
            except urllib.error.HTTPError:
                raise  # the server answered, but not with the listing
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if server.poll() is not None:
                    pytest.fail(
                        f"course lab exited with {server.returncode}:\n{server.stderr.read()[-3000:]}"
                    )
                if time.monotonic() > deadline:
                    pytest.fail("course lab did not answer within 60 seconds")
                time.sleep(0.5)
        assert status == 200
        listing = json.loads(body)
        served = {item["name"] for item in listing["content"] if item["name"].endswith(".ipynb")}
        on_disk = {path.name for path in (REPOSITORY / "notebooks" / "en").glob("*.ipynb")}
        assert served == on_disk  # the server's root is notebooks/, as a learner sees it
        numbers = sorted(name[:3] for name in served if name[:2].isdigit() and name[2] == "_")
        if on_disk:
            assert numbers, "notebooks/en holds notebooks but none is a numbered lesson"
            assert numbers == [f"{n:02d}_" for n in range(1, len(numbers) + 1)]  # 01_, 02_, ...
        status, page = get(f"{base}/lab?token={token}")
        assert status == 200
        assert "JupyterLab" in page
        # What the browser is told to load: the learner's page leaves out the Create
        # Assignment panel, the Formgrader and the course list, and keeps the rest.
        config_data = re.search(
            r'<script id="jupyter-config-data" type="application/json">' r"(.*?)</script>",
            page,
            re.S,
        )
        assert config_data is not None, "the page carries no jupyter-config-data"
        config = json.loads(config_data.group(1))
        disabled = set(config.get("disabledExtensions", []))
        assert disabled & INSTRUCTOR_PLUGINS == (set() if instructor else INSTRUCTOR_PLUGINS)
        assert not disabled & {
            "@jupyter/nbgrader:assignment-list",
            "@jupyter/nbgrader:validate-assignment",
            "@jupyter/nbgrader:menu",
        }
        # ...and the server behind the Formgrader is not running for learners.
        try:
            formgrader = get(f"{base}/formgrader?token={token}")[0]
        except urllib.error.HTTPError as error:
            formgrader = error.code
        assert (formgrader == 404) is not instructor
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        server.stderr.close()
