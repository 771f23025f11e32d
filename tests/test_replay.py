"""course_helpers.replay: which modules the lessons' three Reverb names resolve to.

Reverb where it installs, the in-process stand-in (tests/test_replay_standin.py) where it
does not, and COURSE_REPLAY to choose.
"""

import importlib
import subprocess
import sys

import pytest

from course_helpers import replay

needs_reverb = pytest.mark.skipif(
    not replay.reverb_available(), reason="dm-reverb is not installed"
)


@pytest.fixture
def clean_env(monkeypatch):
    """No COURSE_REPLAY, and reverb_available() looked up afresh before and after."""
    monkeypatch.delenv("COURSE_REPLAY", raising=False)
    replay.reverb_available.cache_clear()
    yield monkeypatch
    replay.reverb_available.cache_clear()


# --- Which modules the names are ----------------------------------------------------------


def test_importing_replay_does_not_import_tensorflow():
    code = "import sys, course_helpers.replay; print('tensorflow' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


@needs_reverb
def test_names_are_the_real_modules_where_reverb_is_installed(clean_env):
    from course_helpers.replay import reverb, reverb_replay_buffer, reverb_utils

    assert replay.backend() == "reverb"
    assert reverb is importlib.import_module("reverb")
    assert reverb_replay_buffer is importlib.import_module(
        "tf_agents.replay_buffers.reverb_replay_buffer"
    )
    assert reverb_utils is importlib.import_module("tf_agents.replay_buffers.reverb_utils")


def test_course_replay_inprocess_selects_the_stand_ins_even_where_reverb_is_installed(clean_env):
    clean_env.setenv("COURSE_REPLAY", "inprocess")
    from course_helpers.replay import reverb, reverb_replay_buffer, reverb_utils

    assert replay.backend() == "inprocess"
    for module in (reverb, reverb_replay_buffer, reverb_utils):
        assert module.__name__.startswith("course_helpers.replay.")
    assert hasattr(reverb.selectors, "Uniform") and hasattr(reverb.rate_limiters, "MinSize")


def test_stand_ins_are_used_where_reverb_cannot_be_found(clean_env):
    find_spec = importlib.util.find_spec
    clean_env.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name == "reverb" else find_spec(name, *args),
    )
    assert replay.reverb_available() is False
    assert replay.backend() == "inprocess"
    assert replay.reverb.__name__ == "course_helpers.replay.reverb"
    clean_env.setenv("COURSE_REPLAY", "reverb")
    with pytest.raises(ModuleNotFoundError, match="COURSE_REPLAY=reverb"):
        replay.backend()


def test_an_unknown_course_replay_value_names_the_variable_and_the_allowed_values(clean_env):
    clean_env.setenv("COURSE_REPLAY", "server")
    with pytest.raises(ValueError, match=r"COURSE_REPLAY='server'.*'reverb' or 'inprocess'"):
        replay.backend()
    with pytest.raises(ValueError, match="COURSE_REPLAY"):
        replay.reverb  # noqa: B018 - resolving the name is what raises


def test_other_attributes_are_not_invented():
    with pytest.raises(AttributeError, match="no attribute 'Reverb'"):
        replay.Reverb  # noqa: B018
