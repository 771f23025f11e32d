"""Shared set-up for the unit tests and for the lessons that nbval collects.

The environment defaults come first: they only take effect if they are in place before
anything imports TensorFlow or pygame, and the kernels nbval starts inherit them.
Each is a default, so a user can still override it on the command line.
"""

import os

# Lessons collected by nbval run in quick mode unless the user says otherwise.
os.environ.setdefault("COURSE_QUICK", "1")
# Plots render to memory; there is no screen.
os.environ.setdefault("MPLBACKEND", "Agg")
# Lesson 3 keeps its runs, to resume them, in a folder of this test session's own: a lesson
# that nbval runs trains from the start, whatever an earlier session left in runs/.
# The folder goes when the test session ends (the kernels nbval started have ended by then).
if "COURSE_RUNS" not in os.environ:
    import atexit
    import shutil
    import tempfile

    os.environ["COURSE_RUNS"] = tempfile.mkdtemp(prefix="course-runs-")
    atexit.register(shutil.rmtree, os.environ["COURSE_RUNS"], ignore_errors=True)

# The same runtime the lessons' first cell sets up (headless SDL, quiet TensorFlow, legacy
# Keras only where tf-keras exists), applied before anything imports TensorFlow or pygame.
# The kernels nbval starts inherit these variables.
import course_helpers  # noqa: E402

course_helpers.setup()

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from course_helpers.languages import TRANSLATED  # noqa: E402


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark lessons collected by nbval `notebook` and every other test (but the website's,
    marked `site`) `unit`."""
    for item in items:
        if str(item.fspath).endswith(".ipynb"):
            item.add_marker(pytest.mark.notebook)
        elif (
            item.get_closest_marker("notebook") is None and item.get_closest_marker("site") is None
        ):
            item.add_marker(pytest.mark.unit)


class OnScreen:
    """Fails a cell of a translated lesson whose output shows English: a helper's text or
    a number in English format (tests/on_screen.py). A plugin, not a hook of this file:
    a conftest's hooks reach only the tests below it, and the lessons are in notebooks/."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        path = Path(str(item.fspath))
        language = path.parent.name
        if not (
            call.when == "call"
            and report.passed
            and path.suffix == ".ipynb"
            and path.parent.parent.name == "notebooks"
            and language in TRANSLATED
        ):
            return
        import on_screen

        found = on_screen.problems(language, getattr(item, "test_outputs", None) or [])
        if found:
            cell = getattr(item, "cell", {})
            report.outcome = "failed"
            report.longrepr = (
                f"{path.relative_to(path.parents[2])}, cell {cell.get('id', item.name)!r} "
                f"shows English to a {language} learner:\n- "
                + "\n- ".join(found)
                + "\nRoute the text through the helpers' catalog, or the number through "
                "course.number()."
            )


def pytest_configure(config):
    config.pluginmanager.register(OnScreen(), "course-on-screen")


@pytest.fixture(scope="session")
def cartpole():
    """One CartPole-v0 Python environment (TF-Agents' gym suite), shared by the tests.

    Tests reset it before use; none relies on the state another test left behind.
    """
    from tf_agents.environments import suite_gym

    env = suite_gym.load("CartPole-v0")
    yield env
    env.close()


@pytest.fixture(scope="session")
def random_policy(cartpole):
    """A random Python policy built from CartPole's own specs."""
    from tf_agents.policies import random_py_policy

    return random_py_policy.RandomPyPolicy(cartpole.time_step_spec(), cartpole.action_spec())


def write_notebook(path, *sources):
    """Write a notebook of code cells (nbformat v4, with cell ids) for the python3 kernel."""
    import nbformat
    from nbformat import v4

    notebook = v4.new_notebook(cells=[v4.new_code_cell(source) for source in sources])
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(notebook, path)
    return path


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A throw-away course checkout, made the working folder.

    notebooks/en holds two lessons, 01_hello (prints COURSE_QUICK) and 02_broken (its
    cell 1 divides by zero), and scratch.ipynb, which is no lesson.
    """
    root = tmp_path / "course"
    en = root / "notebooks" / "en"
    en.mkdir(parents=True)
    write_notebook(en / "01_hello.ipynb", "import os\nprint(os.environ.get('COURSE_QUICK'))")
    write_notebook(en / "02_broken.ipynb", "print('before')", "1 / 0", "print('never')")
    write_notebook(en / "scratch.ipynb", "print('not a lesson')")
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def close_figures():
    """Close every matplotlib figure a test opened."""
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")
