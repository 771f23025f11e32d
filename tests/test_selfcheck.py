"""Self-checks answer at once, point at the misunderstanding, and never give the answer."""

from __future__ import annotations

import pytest
import tensorflow as tf

from course_helpers import i18n, selfcheck

# The nested item of lesson 01, and the call its first exercise asks about.
DATA_SPEC = (
    tf.TensorSpec([3], tf.float32, "action"),
    (tf.TensorSpec([5], tf.float32, "lidar"), tf.TensorSpec([3, 2], tf.float32, "camera")),
)
CALL = dict(sample_batch_size=8, num_steps=3, buffer_batch_size=32)
RIGHT = {"action": (8, 3, 3), "lidar": (8, 3, 5), "camera": (8, 3, 3, 2)}


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    i18n.set_language("en")


def check(**changes):
    return selfcheck.dataset_shapes({**RIGHT, **changes}, DATA_SPEC, **CALL)


def test_the_reference_answer_passes_and_matches_what_the_buffer_really_returns():
    from tf_agents.replay_buffers import tf_uniform_replay_buffer

    buffer = tf_uniform_replay_buffer.TFUniformReplayBuffer(DATA_SPEC, batch_size=32, max_length=10)
    for _ in range(4):
        buffer.add_batch(tf.nest.map_structure(lambda s: tf.zeros([32, *s.shape]), DATA_SPEC))
    (action, (lidar, camera)), _ = next(iter(buffer.as_dataset(sample_batch_size=8, num_steps=3)))
    assert {"action": tuple(action.shape), "lidar": tuple(lidar.shape),
            "camera": tuple(camera.shape)} == RIGHT
    feedback = check()
    assert feedback and str(feedback).startswith("✔ Right")


@pytest.mark.parametrize("wrong, misunderstanding", [
    ({"lidar": (3, 8, 5)}, "puts time first"),
    ({"lidar": (8, 5)}, "has no time axis"),
    ({"lidar": (3, 5)}, "has no batch axis"),
    ({"lidar": (32, 3, 5)}, "uses the buffer's batch_size (32)"),
    ({"camera": (8, 3, 6)}, "the first two axes of camera are right"),
    ({"action": (3, 3, 8)}, "does not follow the order batch, time, item"),
])
def test_a_wrong_shape_gets_a_hint_about_its_misunderstanding(wrong, misunderstanding):
    feedback = check(**wrong)
    assert not feedback and misunderstanding in feedback.message


@pytest.mark.parametrize("wrong", [{"lidar": (3, 8, 5)}, {"camera": (8, 3, 6)}, {"action": (8, 3)}])
def test_a_hint_never_reveals_the_expected_shape(wrong):
    message = check(**wrong).message
    for shape in RIGHT.values():
        assert str(shape) not in message and str(list(shape)) not in message


def test_a_missing_part_or_a_shape_that_is_not_numbers_is_named():
    assert "missing: camera" in selfcheck.dataset_shapes(
        {"action": (8, 3, 3), "lidar": (8, 3, 5)}, DATA_SPEC, **CALL).message
    assert "lidar is 'eight'" in check(lidar="eight").message


def test_feedback_speaks_the_lesson_language_and_shows_as_html():
    i18n.set_language("fr")
    feedback = check(lidar=(3, 8, 5))
    assert feedback.message.startswith("Pas encore : ")
    assert 'role="status"' in feedback._repr_html_() and "✘" in feedback._repr_html_()
