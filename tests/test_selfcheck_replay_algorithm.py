"""Lesson 01's algorithm checks: FIFO eviction, uniform sampling, n-step targets.

Each check's reference comes from TF-Agents at check time; these tests prove that the
reference agrees with what the library really does (sampling, DqnAgent's own target),
that the reference answer passes, and that each typical wrong answer fails with the hint
written for its misunderstanding.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from tf_agents.replay_buffers import tf_uniform_replay_buffer

from course_helpers import i18n, selfcheck
from course_helpers.selfcheck import replay_buffers


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    i18n.set_language("en")


def tiny(batch_size: int = 2, max_length: int = 5, calls: int = 8):
    """The lesson's tiny buffer: call c writes c to segment 0, 10 + c to segment 1, ..."""
    buffer = tf_uniform_replay_buffer.TFUniformReplayBuffer(
        tf.TensorSpec([], tf.int64, "item"), batch_size=batch_size, max_length=max_length
    )
    written = [[10 * segment + c for segment in range(batch_size)] for c in range(calls)]
    for row in written:
        buffer.add_batch(tf.constant(row, tf.int64))
    return buffer, written


SURVIVORS = {3, 4, 5, 6, 7, 13, 14, 15, 16, 17}  # calls 3 to 7 of both segments


@pytest.fixture(scope="module")
def lesson_buffer():
    return tiny()


# --- FIFO eviction: which items can a uniform sample return? -----------------------------


def test_the_survivors_are_what_uniform_sampling_really_returns(lesson_buffer):
    buffer, written = lesson_buffer
    sample, info = next(iter(buffer.as_dataset(sample_batch_size=5_000)))
    assert set(sample.numpy().tolist()) == SURVIVORS
    assert int(buffer.num_frames()) == len(SURVIVORS)
    assert np.allclose(info.probabilities.numpy(), 1 / len(SURVIVORS))
    feedback = selfcheck.fifo_survivors(SURVIVORS, buffer, written)
    assert feedback and str(feedback).startswith("✔ Right")


@pytest.mark.parametrize(
    "answer", [sorted(SURVIVORS), tuple(SURVIVORS), np.array(sorted(SURVIVORS)), [*SURVIVORS, 3]]
)
def test_any_collection_of_the_survivors_passes(lesson_buffer, answer):
    assert selfcheck.fifo_survivors(answer, *lesson_buffer)


def test_the_reference_comes_from_the_buffer_not_from_the_lessons_numbers():
    # Not yet full: nothing evicted, so every item written can be sampled.
    buffer, written = tiny(batch_size=1, max_length=5, calls=4)
    assert selfcheck.fifo_survivors({0, 1, 2, 3}, buffer, written)
    assert not selfcheck.fifo_survivors({1, 2, 3}, buffer, written)
    # One segment, written round twice.
    buffer, written = tiny(batch_size=1, max_length=3, calls=7)
    assert selfcheck.fifo_survivors({4, 5, 6}, buffer, written)


@pytest.mark.parametrize(
    "answer, misunderstanding",
    [
        ({0, 1, 2, 3, 4, 10, 11, 12, 13, 14}, "FIFO evicts the oldest"),
        (set(range(8)) | set(range(10, 18)), "max_length caps each segment"),
        (set(range(2, 8)) | set(range(12, 18)), "off by one"),
        (set(range(4, 8)) | set(range(14, 18)), "off by one"),
        ({3, 4, 5, 6, 7}, "items of one segment only"),
        ({13, 14, 15, 16, 17}, "items of one segment only"),
        (SURVIVORS | {8, 18}, "never written"),
        ({3, 4, 5, 13, 14}, "some stored items are missing"),
        (SURVIVORS | {2}, "already been overwritten"),
        ({1, 5}, "keep its newest max_length items"),
    ],
)
def test_a_wrong_set_gets_a_hint_about_its_misunderstanding(
    lesson_buffer, answer, misunderstanding
):
    feedback = selfcheck.fifo_survivors(answer, *lesson_buffer)
    assert not feedback and misunderstanding in feedback.message
    assert str(sorted(SURVIVORS)) not in feedback.message


@pytest.mark.parametrize("answer", [..., None, "3 to 7", 7, {"a": 1}, {True, 3}])
def test_an_answer_that_is_no_set_of_numbers_is_told_so_without_an_error(lesson_buffer, answer):
    feedback = selfcheck.fifo_survivors(answer, *lesson_buffer)
    assert not feedback and "set of numbers" in feedback.message


def test_the_single_pass_mixes_segments_after_wrap_around_as_the_lesson_says(lesson_buffer):
    """Lesson 01 warns that TF-Agents 0.19's single deterministic pass groups a full
    buffer's items across segments; if a TF-Agents release fixes this, the lesson's cell
    tiny-everything-explain must change."""
    buffer, _written = lesson_buffer
    rows, _info = next(
        iter(buffer.as_dataset(single_deterministic_pass=True, sample_batch_size=2, num_steps=5))
    )
    assert rows.numpy().tolist() == [[3, 4, 15, 16, 17], [13, 14, 5, 6, 7]]
    assert set(rows.numpy().reshape(-1).tolist()) == SURVIVORS


def test_a_pair_never_starts_at_the_newest_item(lesson_buffer):
    """What cell tiny-pairs-explain says: min(t, L) - T + 1 starts per segment."""
    buffer, _written = lesson_buffer
    pairs, info = next(iter(buffer.as_dataset(sample_batch_size=5_000, num_steps=2)))
    assert set(pairs[:, 0].numpy().tolist()) == {3, 4, 5, 6, 13, 14, 15, 16}
    assert np.all(pairs[:, 1].numpy() == pairs[:, 0].numpy() + 1)
    assert np.allclose(info.probabilities.numpy(), 1 / 8)


# --- n-step targets by hand ---------------------------------------------------------------

REWARDS = {"A": [1, 0, 2], "B": [1, 2, 0]}
DISCOUNTS = {"A": [1, 1, 1], "B": [1, 0, 1]}
RIGHT = {"A": 1 + 0.9**2 * 2 + 0.9**3 * 10, "B": 1 + 0.9 * 2}  # 9.91 and 2.8


def targets(**changes):
    return selfcheck.n_step_targets(
        {**RIGHT, **changes}, rewards=REWARDS, discounts=DISCOUNTS, gamma=0.9, bootstrap_value=10.0
    )


def dqn_n_step_target(rewards, discounts, gamma=0.9, q_value=10.0):
    """The n-step target DqnAgent itself trains towards, read from its TD error.

    Its Q-network (and so its target network) answers q_value for every action, so the
    TD error of the first step is the target minus q_value.
    """
    from tf_agents.agents.dqn import dqn_agent
    from tf_agents.networks import sequential
    from tf_agents.specs import tensor_spec
    from tf_agents.trajectories import time_step as ts
    from tf_agents.trajectories import trajectory
    from tf_agents.utils import common

    observation_spec = tensor_spec.TensorSpec([4], tf.float32)
    action_spec = tensor_spec.BoundedTensorSpec([], tf.int64, 0, 1)
    q_net = sequential.Sequential(
        [
            tf.keras.layers.Dense(
                2,
                kernel_initializer="zeros",
                bias_initializer=tf.keras.initializers.Constant(q_value),
            )
        ]
    )
    n = len(rewards)
    agent = dqn_agent.DqnAgent(
        ts.time_step_spec(observation_spec),
        action_spec,
        q_network=q_net,
        optimizer=tf.keras.optimizers.SGD(0.0),
        n_step_update=n,
        gamma=gamma,
        td_errors_loss_fn=common.element_wise_squared_loss,
    )
    agent.initialize()
    mid = tf.fill([1, n + 1], ts.StepType.MID)
    experience = trajectory.Trajectory(
        step_type=mid,
        observation=tf.zeros([1, n + 1, 4]),
        action=tf.zeros([1, n + 1], tf.int64),
        policy_info=(),
        next_step_type=mid,
        reward=tf.constant([[*rewards, 0.0]], tf.float32),
        discount=tf.constant([[*discounts, 1.0]], tf.float32),
    )
    # agent.train passes the agent's gamma to _loss; agent.loss needs it spelled out.
    td_error = agent.loss(experience, gamma=gamma).extra.td_error
    return float(td_error[0]) + q_value


@pytest.mark.parametrize("name", ["A", "B"])
def test_the_reference_is_the_target_dqn_agent_trains_towards(name):
    agent_target = dqn_n_step_target(REWARDS[name], DISCOUNTS[name])
    assert agent_target == pytest.approx(RIGHT[name], rel=1e-5)
    assert replay_buffers._n_step_target(
        REWARDS[name], DISCOUNTS[name], 0.9, 10.0
    ) == pytest.approx(agent_target, rel=1e-5)


def test_the_right_targets_pass_and_say_why():
    feedback = targets()
    assert feedback and "γ to the power n" in feedback.message


@pytest.mark.parametrize(
    "wrong, misunderstanding",
    [
        ({"A": 1 + 0 + 2 + 10}, "added without γ"),
        ({"A": 1 + 0.9 * 0 + 0.9 * 2 + 0.9 * 10}, "not by γ alone"),
        ({"A": 0.9 * 1 + 0.9**3 * 2 + 0.9**4 * 10}, "off by one in the powers"),
        ({"A": 1 + 0.9**2 * 2 + 0.9**2 * 10}, "off by one in the powers"),
        ({"A": 1 + 0.9**2 * 2 + 0.9**4 * 10}, "off by one in the powers"),
        ({"A": 1 + 0.9**2 * 2}, "bootstrap value is missing"),
        ({"B": 1 + 0.9 * 2 + 0.9**3 * 10}, "the bootstrap value too"),
        ({"B": 0.9 * 1 + 0.9**2 * 2}, "off by one in the powers"),
        ({"A": 9.9}, "keep more digits"),
        ({"B": 7.0}, "cut off after a discount of 0"),
        ({"B": 1.0}, "the transition whose discount is 0 still counts"),
    ],
)
def test_a_wrong_target_gets_a_hint_about_its_misunderstanding(wrong, misunderstanding):
    feedback = targets(**wrong)
    assert not feedback and misunderstanding in feedback.message
    assert "sequence " + next(iter(wrong)) in feedback.message
    assert "9.91" not in feedback.message and "2.8" not in feedback.message


def test_rewards_after_a_terminal_step_are_recognised():
    feedback = selfcheck.n_step_targets(
        {"C": 1 + 0.9 * 2 + 0.81 * 3},
        rewards={"C": [1, 2, 3]},
        discounts={"C": [1, 0, 1]},
        gamma=0.9,
        bootstrap_value=10.0,
    )
    assert not feedback and "belong to another episode" in feedback.message


@pytest.mark.parametrize(
    "answers, message",
    [
        ({"A": ..., "B": ...}, "should be a number"),
        ({"A": "9.91", "B": 2.8}, "should be a number"),
        ({"A": 9.91}, "give a number for sequence B"),
        (9.91, "keep the dictionary"),
    ],
)
def test_answers_of_the_wrong_type_are_told_so_without_an_error(answers, message):
    feedback = selfcheck.n_step_targets(
        answers, rewards=REWARDS, discounts=DISCOUNTS, gamma=0.9, bootstrap_value=10.0
    )
    assert not feedback and message in feedback.message


# --- eviction arithmetic ------------------------------------------------------------------

EXERCISE = dict(batch_size=4, max_length=25, add_batch_calls=40, sample_batch_size=64)
STORED = 100
IN_SAMPLE = 1 - (1 - 1 / STORED) ** 64


def eviction(items, probability):
    return selfcheck.eviction_arithmetic(items, probability, **EXERCISE)


def test_the_reference_agrees_with_a_buffer_and_with_sampling_it():
    buffer = tf_uniform_replay_buffer.TFUniformReplayBuffer(
        tf.TensorSpec([], tf.int64), batch_size=4, max_length=25
    )
    for call in range(40):
        buffer.add_batch(tf.constant([call * 10 + segment for segment in range(4)], tf.int64))
    assert int(buffer.num_frames()) == STORED
    # How often does one stored item (segment 0's newest) appear in a batch of 64?
    dataset = buffer.as_dataset(sample_batch_size=64).take(2_000)
    hits = np.mean([bool(np.any(batch.numpy() == 390)) for batch, _info in dataset])
    assert hits == pytest.approx(IN_SAMPLE, abs=0.04)
    assert abs(hits - 64 / STORED) > 0.1  # and not without replacement
    feedback = eviction(STORED, IN_SAMPLE)
    assert feedback and str(feedback).startswith("✔ Right")
    assert eviction(100.0, np.float32(IN_SAMPLE))


@pytest.mark.parametrize(
    "items, probability, misunderstanding",
    [
        (160, IN_SAMPLE, "max_length caps each segment"),
        (25, IN_SAMPLE, "one segment's count"),
        (40, IN_SAMPLE, "this counts add_batch calls"),
        (60, IN_SAMPLE, "evicted, not those still stored"),
        (99, IN_SAMPLE, "add up the segments"),
        (STORED, 64 / STORED, "without replacement"),
        (STORED, 1 - (1 - 1 / 160) ** 64, "counts every item ever written"),
        (STORED, 64 / 160, "counts every item ever written"),
        (STORED, 1 / STORED, "the chance of one draw"),
        (STORED, (1 - 1 / STORED) ** 64, "chance that the item never comes"),
        (STORED, 0.47, "keep more digits"),
        (STORED, 47.44, "between 0 and 1"),
        (STORED, 0.2, "no draw picks this item"),
    ],
)
def test_a_wrong_count_or_probability_gets_a_hint(items, probability, misunderstanding):
    feedback = eviction(items, probability)
    assert not feedback and misunderstanding in feedback.message
    assert "100" not in feedback.message and "0.474" not in feedback.message


@pytest.mark.parametrize(
    "items, probability, message",
    [
        (..., ..., "whole number"),
        (100.5, IN_SAMPLE, "whole number"),
        (True, IN_SAMPLE, "whole number"),
        (STORED, ..., "between 0 and 1"),
        (STORED, "0.47", "between 0 and 1"),
    ],
)
def test_answers_of_the_wrong_type_are_told_so(items, probability, message):
    feedback = eviction(items, probability)
    assert not feedback and message in feedback.message


def test_the_new_checks_speak_the_lesson_language(lesson_buffer):
    i18n.set_language("fr")
    feedback = selfcheck.fifo_survivors({3, 4, 5, 6, 7}, *lesson_buffer)
    assert not feedback and feedback.message.startswith("Pas encore")
