"""Runtime set-up: environment variables, seeding and the optional virtual display."""

import json
import os
import random
import shutil
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

from course_helpers import runtime


@pytest.fixture(scope="module")
def fresh_process():
    """What a new Python process sees when it imports course_helpers, then sets up and uses Keras.

    One subprocess (TensorFlow takes seconds to import), started without the variables
    setup() provides, as a learner's kernel is. tf-agents builds its networks with
    tf.keras, so tf.keras must still load after setup().
    """
    script = textwrap.dedent(
        """
        import json, sys
        import course_helpers
        report = {"imported": {m: m in sys.modules for m in ("tensorflow", "pygame")}}
        course_helpers.setup()
        import tensorflow as tf
        report["dense"] = tf.keras.layers.Dense(2)(tf.ones((1, 3))).shape.as_list()
        print(json.dumps(report))
        """
    )
    env = {k: v for k, v in os.environ.items() if k not in runtime.RUNTIME_VARIABLES}
    env.pop("TF_USE_LEGACY_KERAS", None)
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=180
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_importing_course_helpers_imports_neither_tensorflow_nor_pygame(fresh_process):
    assert fresh_process["imported"] == {"tensorflow": False, "pygame": False}


def test_after_setup_tensorflow_keras_builds_layers_for_tf_agents(fresh_process):
    assert fresh_process["dense"] == [1, 2]


# Other tests have imported pygame, so removing SDL_VIDEODRIVER makes setup() warn.
@pytest.mark.filterwarnings("ignore:course_helpers.setup:RuntimeWarning")
def test_setup_sets_every_runtime_variable_that_is_unset(monkeypatch):
    for name in runtime.RUNTIME_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    runtime.setup()
    for name, value in runtime.RUNTIME_VARIABLES.items():
        assert os.environ[name] == value


def test_setup_never_overrides_a_value_the_user_set(monkeypatch):
    for name in runtime.RUNTIME_VARIABLES:
        monkeypatch.setenv(name, f"user-{name}")
    runtime.setup()
    for name in runtime.RUNTIME_VARIABLES:
        assert os.environ[name] == f"user-{name}"


def test_setup_lets_cartpole_render_a_frame_without_a_display_server():
    """No DISPLAY, no Xvfb, no SDL setting of the user's: after setup(), pygame draws
    CartPole off-screen and hands back a real picture (without it, pygame finds no video
    device and render() raises)."""
    probe = (
        "import numpy as np, course_helpers\n"
        "course_helpers.setup()\n"
        "import gym\n"
        "env = gym.make('CartPole-v0')\n"
        "env.reset(seed=0)\n"
        "frame = env.render(mode='rgb_array')\n"
        "colours = len(np.unique(frame.reshape(-1, 3), axis=0))\n"
        "print(frame.shape, frame.dtype, colours)\n"
    )
    headless = {
        name: value
        for name, value in os.environ.items()
        if name not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")
    }
    result = subprocess.run(
        [sys.executable, "-c", probe], env=headless, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    shape, dtype, colours = result.stdout.strip().splitlines()[-1].rsplit(" ", 2)
    assert (shape, dtype) == ("(400, 600, 3)", "uint8")
    assert int(colours) >= 3  # the cart, the pole and the track on a white background


def test_setup_reports_quick_mode_from_course_quick(monkeypatch):
    monkeypatch.setenv("COURSE_QUICK", "1")
    ready = runtime.setup()
    assert ready.quick_mode is True
    assert "quick mode on" in str(ready)
    monkeypatch.setenv("COURSE_QUICK", "0")
    ready = runtime.setup()
    assert ready.quick_mode is False
    assert "quick mode off" in str(ready)


def test_setup_reports_the_dummy_video_driver_when_no_virtual_display_is_asked_for():
    assert "SDL's dummy video driver" in str(runtime.setup())


def test_setup_after_pygame_was_imported_warns_that_the_video_driver_may_not_apply(monkeypatch):
    import pygame  # noqa: F401

    monkeypatch.delenv("SDL_VIDEODRIVER")
    with pytest.warns(RuntimeWarning, match="SDL_VIDEODRIVER") as warned:
        runtime.setup()
    assert "Restart the kernel" in str(warned[0].message)


def test_running_setup_twice_does_not_warn(recwarn):
    import pygame  # noqa: F401
    import tensorflow  # noqa: F401

    runtime.setup()
    runtime.setup()
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_setup_silences_only_the_saved_model_renaming_notes_from_absl(caplog):
    from absl import logging as absl_logging

    runtime.setup()
    with caplog.at_level("INFO", logger="absl"):
        absl_logging.warning(
            "Function `action` contains input name(s) 0/step_type with unsupported "
            "characters which will be renamed to step_type in the SavedModel."
        )
        absl_logging.info("Writing fingerprint to /tmp/sac/policies/policy/fingerprint.pb")
        absl_logging.warning("Checkpoint could not be restored.")
    messages = [record.getMessage() for record in caplog.records]
    assert messages == ["Checkpoint could not be restored."]


def test_start_virtual_display_without_xvfb_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(runtime, "_virtual_display", None)
    monkeypatch.setattr(runtime.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="apt-get install xvfb"):
        runtime.start_virtual_display()
    with pytest.raises(RuntimeError, match="Xvfb"):
        runtime.setup(virtual_display=True)


@pytest.mark.skipif(shutil.which("Xvfb") is None, reason="Xvfb is not installed on this machine")
def test_start_virtual_display_starts_xvfb_and_sets_display(monkeypatch):
    monkeypatch.setattr(runtime, "_virtual_display", None)
    monkeypatch.delenv("DISPLAY", raising=False)
    try:
        description = runtime.start_virtual_display()
        assert os.environ.get("DISPLAY", "").startswith(":")
        assert os.environ["DISPLAY"] in description
        assert runtime.start_virtual_display() == description  # started once, then reused
    finally:
        if runtime._virtual_display is not None:
            runtime._virtual_display.stop()


def _draws():
    import tensorflow as tf

    return random.random(), np.random.rand(3).tolist(), tf.random.uniform((3,)).numpy().tolist()


def test_seed_everything_makes_python_numpy_and_tensorflow_draws_repeat():
    assert runtime.seed_everything(123) == 123
    first = _draws()
    runtime.seed_everything(123)
    assert _draws() == first
    runtime.seed_everything(124)
    assert _draws() != first


@pytest.mark.parametrize("seed", [-1, 1.5, "42", None, True])
def test_seed_everything_rejects_seeds_that_are_not_non_negative_integers(seed):
    with pytest.raises(ValueError, match="non-negative integer"):
        runtime.seed_everything(seed)


@pytest.fixture
def shell():
    """An IPython shell, as in a notebook kernel, with the magics setup() registers."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    runtime._register_magics()
    yield shell
    shell.user_ns.pop("made", None)


def test_requires_runs_the_cell_where_reverb_is_installed(shell, monkeypatch, capsys):
    monkeypatch.delenv("COURSE_REPLAY", raising=False)
    result = shell.run_cell("%%requires reverb\nmade = 'here'\nmade")
    assert result.success and shell.user_ns["made"] == "here"
    assert "'here'" in capsys.readouterr().out  # the last expression is shown, as in any cell


def test_requires_skips_the_cell_where_reverb_is_missing_and_says_why(shell, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_REPLAY", "inprocess")
    result = shell.run_cell("%%requires reverb\nmade = 'here'")
    assert result.success and "made" not in shell.user_ns
    out = capsys.readouterr().out
    assert out.startswith("Skipped here: this cell needs Reverb, but COURSE_REPLAY=inprocess")
    assert "Launch Binder" in out


def test_requires_skips_a_cell_whose_package_is_not_installed(shell, capsys):
    result = shell.run_cell("%%requires no_such_package_here\nmade = 1")
    assert result.success and "made" not in shell.user_ns
    assert "needs the no_such_package_here package" in capsys.readouterr().out


def test_requires_cluster_skips_where_the_latest_clusters_jobs_would_not_fit(
    shell, monkeypatch, capsys, tmp_path
):
    """Lesson 4 on Binder: Reverb is there, 2 GB of memory are not enough for five
    TensorFlow processes; its job cells say so instead of failing midway."""
    from course_helpers.distributed import DEFAULTS, cluster

    monkeypatch.delenv("COURSE_REPLAY", raising=False)
    monkeypatch.setattr(cluster, "_latest", None)  # restored after the test
    cluster.Cluster(tmp_path / "run", DEFAULTS, collect_jobs=2)
    monkeypatch.setattr(cluster, "memory_limit_mb", lambda: 2048.0)
    result = shell.run_cell("%%requires cluster\nmade = 'here'")
    assert result.success and "made" not in shell.user_ns
    out = capsys.readouterr().out
    assert out.startswith("Skipped here: these 5 jobs, each a process with its own TensorFlow")
    assert "this machine allows 2.0 GB" in out and "Every other cell" in out

    monkeypatch.setattr(cluster, "memory_limit_mb", lambda: 64 * 1024.0)
    result = shell.run_cell("%%requires cluster\nmade = 'here'")
    assert result.success and shell.user_ns["made"] == "here"


def test_requires_cluster_gives_reverbs_reason_where_reverb_is_missing(shell, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_REPLAY", "inprocess")
    result = shell.run_cell("%%requires cluster\nmade = 'here'")
    assert result.success and "made" not in shell.user_ns
    out = capsys.readouterr().out
    assert out.startswith("Skipped here: this cell works with lesson 4's jobs, which need Reverb")
    # Binder has Reverb but too little memory for the jobs: the notice points elsewhere.
    assert "Launch Binder" not in out and "a Linux computer of your own" in out


def test_an_error_inside_a_requires_cell_fails_the_cell(shell, monkeypatch):
    """nbval and a learner must see the failure, not a silently 'successful' cell."""
    monkeypatch.delenv("COURSE_REPLAY", raising=False)
    result = shell.run_cell("%%requires reverb\n1 / 0")
    assert not result.success


def test_setup_names_the_replay_buffer_in_use(monkeypatch):
    monkeypatch.delenv("COURSE_REPLAY", raising=False)
    assert "Replay buffers: Reverb" in str(runtime.setup())
    monkeypatch.setenv("COURSE_REPLAY", "inprocess")
    note = str(runtime.setup()).splitlines()[-1]
    assert note.startswith(
        "Replay buffers: an in-process stand-in for Reverb, because "
        "COURSE_REPLAY=inprocess asks for the stand-in."
    )


def test_the_reason_for_doing_without_reverb_fits_the_runtime(monkeypatch):
    """Colab (Python 3.12+), a 3.11 runtime without Reverb (the Colab-like CI profile)."""
    monkeypatch.setattr(runtime.replay, "reverb_available", lambda: False)

    def python(major, minor):  # what sys.version_info looks like on that Python
        version = type(
            "version_info",
            (tuple,),
            {"major": property(lambda v: v[0]), "minor": property(lambda v: v[1])},
        )
        return types.SimpleNamespace(version_info=version((major, minor, 0)))

    monkeypatch.setattr(runtime, "sys", python(3, 12))
    assert runtime._without_reverb_because() == (
        "it installs only on Python 3.11 or older, and this runtime has Python 3.12"
    )
    monkeypatch.setattr(runtime, "sys", python(3, 11))
    assert runtime._without_reverb_because() == "it is not installed in this runtime"


def test_setup_hides_the_pkg_resources_notice_that_pygame_and_pybullet_trigger():
    import warnings

    runtime.setup()
    with warnings.catch_warnings(record=True) as seen:
        warnings.warn(
            "pkg_resources is deprecated as an API. See https://setuptools.pypa.io", UserWarning
        )
        warnings.warn("a warning the learner should still see", UserWarning)
    assert [str(w.message) for w in seen] == ["a warning the learner should still see"]


def test_native_stderr_lines_with_the_prefix_are_dropped_and_the_rest_kept_in_order():
    # In a child process: the filter replaces file descriptor 2 for the whole process.
    script = """
import os, time
from course_helpers.runtime import drop_native_stderr_lines
drop_native_stderr_lines(b"[reverb/cc/")
drop_native_stderr_lines(b"[reverb/cc/")  # a second set-up call changes nothing
os.write(2, b"first\\n[reverb/cc/server.cc:71] Started replay server on port 1\\n")
os.write(2, b"[reverb/cc/client.cc:165] Sampler and ")
os.write(2, b"server are owned by the same process\\nsecond\\nno newline")
time.sleep(0.5)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert result.stderr == b"first\nsecond\nno newline"


def test_setup_swallows_gyms_unmaintained_notice(monkeypatch):
    script = """
import contextlib, io, sys
import course_helpers as course
course.setup()
buffer = io.StringIO()
with contextlib.redirect_stderr(buffer):
    import gym
print(repr(buffer.getvalue()))
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.stdout.strip() == "''" and "unmaintained" not in result.stderr, result.stderr
