"""The `course` command: list, run and lab."""

import contextlib
import json
import os
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


def test_course_lab_passes_every_option_to_jupyter_lab(project, monkeypatch, tmp_path):
    # os.execve would replace the test process: record the command instead.
    calls = []
    monkeypatch.setattr(cli.os, "execve", lambda path, argv, env: calls.append((path, argv)))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    options = ["--no-browser", "--port", "8890", "--ServerApp.token=abc", "--allow-root"]
    assert cli.main(["lab", *options]) == 0
    ((path, argv),) = calls
    assert path == sys.executable
    assert argv == [
        sys.executable,
        "-m",
        "jupyterlab",
        f"--ServerApp.root_dir={project / 'notebooks'}",
        f"--LabApp.app_settings_dir={tmp_path / 'tf-agents-course' / 'lab-settings'}",
        *options,
    ]


def test_course_lab_in_a_language_opens_that_languages_folder(project, monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(cli.os, "execve", lambda path, argv, env: calls.append(argv))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cli.main(["lab", "--lang", "es", "--no-browser"]) == 0
    assert "--LabApp.default_url=/lab/tree/es" in calls[0]
    language_file = tmp_path / "tf-agents-course/lab-settings/overrides.d/course-language.json"
    assert json.loads(language_file.read_text()) == {
        "@jupyterlab/translation-extension:plugin": {"locale": "es_ES"}
    }
    # Without --lang, JupyterLab's own choice of language comes back.
    assert cli.main(["lab", "--no-browser"]) == 0
    assert not language_file.exists()


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


@contextlib.contextmanager
def running_course_lab(*arguments: str, environment: dict | None = None):
    """Start `course lab` with ``arguments`` on a free port; yield (base URL, token) once
    it answers, and stop it afterwards."""
    port, token = free_port(), secrets.token_hex(16)
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "course"),
            "lab",
            *arguments,
            *("--no-browser", "--port", str(port), f"--ServerApp.token={token}"),
            "--ServerApp.open_browser=False",
            "--allow-root",
        ],
        cwd=REPOSITORY,
        env=environment,
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
                get(f"{base}/api/status?token={token}")
                break
            except urllib.error.HTTPError:
                raise  # the server answered, but refused
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if server.poll() is not None:
                    pytest.fail(
                        f"course lab exited with {server.returncode}:\n{server.stderr.read()[-3000:]}"
                    )
                if time.monotonic() > deadline:
                    pytest.fail("course lab did not answer within 60 seconds")
                time.sleep(0.5)
        yield base, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        server.stderr.close()


# Starts a Jupyter kernel or server: a `notebook` test.
@pytest.mark.notebook
@pytest.mark.parametrize("instructor", [False, True], ids=["learner", "instructor"])
def test_course_lab_serves_the_lessons_in_jupyterlab_with_instructor_tools_only_when_asked(
    instructor,
):
    with running_course_lab(*(["--instructor"] if instructor else [])) as (base, token):
        status, body = get(f"{base}/api/contents/en?token={token}")
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


def settings(base: str, plugin: str, token: str) -> dict:
    """The defaults JupyterLab's page receives for ``plugin``'s settings: the schema's, with
    the overrides applied (the page adds the learner's own settings on top)."""
    answer = json.loads(get(f"{base}/lab/api/settings/{plugin}?token={token}")[1])
    return {name: value.get("default") for name, value in answer["schema"]["properties"].items()}


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


# Starts a Jupyter server: a `notebook` test.
@pytest.mark.notebook
def test_course_lab_in_a_language_shows_its_menus_and_no_news_and_binder_links_switch_it(
    tmp_path,
):
    """`course lab --lang pt-br` opens JupyterLab in Portuguese without the news pop-up, and
    /course/lab/fr/<path> (where each French Binder link goes) switches it to French."""
    environment = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "user-settings"),  # not the tester's own
    }
    with running_course_lab("--lang", "pt-br", environment=environment) as (base, token):
        locale = settings(base, "@jupyterlab/translation-extension:plugin", token)
        assert locale["locale"] == "pt_BR"
        news = settings(base, "@jupyterlab/apputils-extension:notification", token)
        assert news["fetchNews"] == "false"  # never asks; "none" would ask
        # The learner's own settings folder is not where these defaults went.
        assert (tmp_path / "cache/tf-agents-course/lab-settings/overrides.json").is_file()

        def open_in(code: str) -> str:
            """Follow a Binder link's path; return where it sends the browser, and the
            learner's own language setting afterwards."""
            opener = urllib.request.build_opener(NoRedirect)
            with pytest.raises(urllib.error.HTTPError) as answer:
                opener.open(
                    f"{base}/course/lab/{code}/{code}/01_replay_buffers.ipynb?token={token}"
                )
            assert answer.value.code == 302
            assert answer.value.headers["Location"].endswith(
                f"/lab/tree/{code}/01_replay_buffers.ipynb"
            )
            plugin = (
                f"{base}/lab/api/settings/@jupyterlab/translation-extension:plugin?token={token}"
            )
            return json.loads(get(plugin)[1])["settings"].get("locale")

        assert open_in("fr") == "fr_FR"
        assert open_in("es") == "es_ES"  # the course's own setting follows the links
        # Once the learner picks a language (as Settings > Language saves it), it stays.
        request = urllib.request.Request(
            f"{base}/lab/api/settings/@jupyterlab/translation-extension:plugin?token={token}",
            data=json.dumps({"raw": '{"locale": "pt_BR"}'}).encode(),
            method="PUT",
        )
        urllib.request.urlopen(request, timeout=5).close()
        assert open_in("fr") == "pt_BR"
