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


# Exercise 2 of lesson 01: a buffer for 84x84 grayscale frames and a reward, 4 environments
# of 1,000 steps each (28 MB; TFUniformReplayBuffer allocates its memory when created).
ITEM = dict(image=((84, 84), tf.uint8), reward=((), tf.float32), environments=4,
            steps_per_environment=1_000)


def image_buffer(image_dtype=tf.uint8, image_shape=(84, 84), reward_shape=(), batch_size=4,
                 max_length=1_000, names=("image", "reward")):
    from tf_agents.replay_buffers import tf_uniform_replay_buffer

    spec = (tf.TensorSpec(image_shape, image_dtype, names[0]),
            tf.TensorSpec(reward_shape, tf.float32, names[1]))
    return tf_uniform_replay_buffer.TFUniformReplayBuffer(spec, batch_size=batch_size,
                                                          max_length=max_length)


def test_a_buffer_built_as_asked_passes_with_or_without_a_channel_axis():
    assert selfcheck.replay_buffer(image_buffer(), **ITEM)
    assert selfcheck.replay_buffer(image_buffer(image_shape=(84, 84, 1)), **ITEM)


@pytest.mark.parametrize("built, misunderstanding", [
    (dict(batch_size=1_000, max_length=4), "batch_size and max_length are swapped"),
    (dict(max_length=4_000), "not for all of them together"),
    (dict(batch_size=64), "not a training batch"),
    (dict(image_dtype=tf.float32), "the image is stored as float32"),
    (dict(image_shape=(4, 84, 84)), "nothing for the batch or for time"),
    (dict(reward_shape=(1,)), "Its spec is a scalar"),
    (dict(names=("obs", "r")), "named 'image' and 'reward'"),
])
def test_a_wrong_buffer_gets_a_hint_about_its_misunderstanding(built, misunderstanding):
    feedback = selfcheck.replay_buffer(image_buffer(**built), **ITEM)
    assert not feedback and misunderstanding in feedback.message


def test_something_that_is_no_buffer_yet_is_told_so_without_an_error():
    assert "not a TFUniformReplayBuffer" in selfcheck.replay_buffer(..., **ITEM).message


# Exercise 3 of lesson 01: the second step of every sampled pair, from [batch, time, 5].
LIDAR = tf.reshape(tf.range(4 * 2 * 5, dtype=tf.float32), [4, 2, 5])


def test_the_second_step_of_every_sequence_passes():
    assert selfcheck.second_steps(LIDAR[:, 1], LIDAR)


@pytest.mark.parametrize("answer, misunderstanding", [
    (LIDAR[1], "the second sequence of the batch"),
    (LIDAR[:, 0], "steps are counted from 0"),
    (LIDAR[-1], "which axis holds time"),
    (LIDAR, "keep only one step per sequence"),
    (LIDAR[:, 1, 0], "one step for each sequence"),
    (..., "cut out of the sampled sequences"),
])
def test_a_wrong_slice_gets_a_hint_about_its_misunderstanding(answer, misunderstanding):
    feedback = selfcheck.second_steps(answer, LIDAR)
    assert not feedback and misunderstanding in feedback.message
