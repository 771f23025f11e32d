"""Lesson 02's algorithm checks: the TD loss of one batch, TD targets, true Q-values.

Each check passes the right answer, computed here as a learner would write it, and names
the misunderstanding behind each typical wrong answer. The TD-loss check is compared
with a tiny DqnAgent built here, on hand-made batches of CartPole-shaped pairs.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from course_helpers import i18n, selfcheck

BATCH = 16
GAMMA = 0.9  # not DqnAgent's default 1.0: agent.loss alone would use 1.0, the check must not


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    i18n.set_language("en")


def make_agent(cartpole, *, separate_target=True, gamma=GAMMA, huber=False):
    """A small DqnAgent on CartPole's specs, with the plain squared loss (the published
    tutorial's) or, with ``huber``, the lesson's Huber loss.

    With ``separate_target`` its target network is moved away from the Q-network, as it
    would be between two copies with ``target_update_period`` > 1, so that the check can
    tell the two apart; without it, both are equal, as in the lesson.
    """
    from tf_agents.agents.dqn import dqn_agent
    from tf_agents.networks import sequential
    from tf_agents.specs import tensor_spec
    from tf_agents.utils import common

    tf.random.set_seed(0)
    time_step_spec = tensor_spec.from_spec(cartpole.time_step_spec())
    action_spec = tensor_spec.from_spec(cartpole.action_spec())
    q_net = sequential.Sequential(
        [
            tf.keras.layers.Dense(8, activation="relu"),
            tf.keras.layers.Dense(2, bias_initializer="ones"),
        ]
    )
    agent = dqn_agent.DqnAgent(
        time_step_spec,
        action_spec,
        q_network=q_net,
        optimizer=tf.keras.optimizers.Adam(1e-3),
        gamma=gamma,
        td_errors_loss_fn=(
            common.element_wise_huber_loss if huber else common.element_wise_squared_loss
        ),
        target_update_period=100,
    )
    agent.initialize()
    if separate_target:  # the same shift whatever TensorFlow's random state
        rng = np.random.default_rng(3)
        for variable in agent._target_q_network.variables:
            shift = rng.normal(scale=0.3, size=variable.shape).astype(np.float32)
            variable.assign(variable + shift)
    return agent


def make_batch(agent, *, terminal=(3, 11)):
    """``BATCH`` pairs shaped like the lesson's ``experience``: [BATCH, 2, ...].

    The pairs listed in ``terminal`` end an episode: their first step's discount is 0 and
    the second step is the episode's last, as the Reverb observer writes them.
    """
    from tf_agents.trajectories import time_step as ts
    from tf_agents.trajectories import trajectory

    rng = np.random.default_rng(1)
    ends = np.isin(np.arange(BATCH), terminal)
    mid, last = int(ts.StepType.MID), int(ts.StepType.LAST)
    step_type = np.stack([np.full(BATCH, mid), np.where(ends, last, mid)], axis=1)
    next_step_type = np.stack([np.where(ends, last, mid), np.full(BATCH, mid)], axis=1)
    discount = np.stack([np.where(ends, 0.0, 1.0), np.ones(BATCH)], axis=1)
    spec = agent.collect_data_spec
    return trajectory.Trajectory(
        step_type=tf.constant(step_type, spec.step_type.dtype),
        observation=tf.constant(rng.normal(size=(BATCH, 2, 4)) * 0.5, tf.float32),
        action=tf.constant(rng.integers(0, 2, size=(BATCH, 2)), spec.action.dtype),
        policy_info=(),
        next_step_type=tf.constant(next_step_type, spec.next_step_type.dtype),
        # TD errors of both signs, some above 1, where the Huber loss and the square differ
        reward=tf.constant(rng.uniform(-1.5, 3.5, size=(BATCH, 2)), tf.float32),
        discount=tf.constant(discount, tf.float32),
    )


def learners_loss(agent, experience, *, gamma=GAMMA, mistake=None, huber=False):
    """The lesson's answer cell, right or with one typical mistake, for an agent with the
    squared loss or (``huber``) with the Huber loss, written out as the lesson asks."""
    from tf_agents.trajectories import trajectory

    time_steps, policy_steps, next_time_steps = trajectory.experience_to_transitions(
        experience, squeeze_time_dim=True
    )
    s, a = time_steps.observation, policy_steps.action
    r, d, s_next = next_time_steps.reward, next_time_steps.discount, next_time_steps.observation
    q_values, _ = agent._q_network(s)
    q_taken = tf.gather(q_values, a, batch_dims=1)
    if mistake == "max over Q(s, ·)":
        q_taken = tf.reduce_max(q_values, axis=-1)
    network = agent._q_network if mistake == "Q-network for the target" else agent._target_q_network
    next_q_values, _ = network(s if mistake == "target from s" else s_next)
    if mistake == "no discount":
        d = tf.ones_like(d)
    sign = -1.0 if mistake == "minus" else 1.0
    y = (0.0 if mistake == "no reward" else r) + sign * gamma * d * tf.reduce_max(next_q_values, -1)
    error = y - q_taken
    by_hand_huber = tf.where(tf.abs(error) <= 1.0, 0.5 * tf.square(error), tf.abs(error) - 0.5)
    per_pair = {
        "absolute": tf.abs(error),
        "no square": error,
        "square": tf.square(error),
        "half square everywhere": 0.5 * tf.square(error),
        "huber": by_hand_huber,
    }.get(mistake, by_hand_huber if huber else tf.square(error))
    if mistake == "per pair":
        return per_pair
    loss = (tf.reduce_sum if mistake == "sum" else tf.reduce_mean)(per_pair)
    return {"half": 0.5 * loss, "root": tf.sqrt(loss)}.get(mistake, loss)


@pytest.fixture(scope="module")
def agent(cartpole):
    return make_agent(cartpole)


@pytest.fixture(scope="module")
def experience(agent):
    return make_batch(agent)


def test_the_learners_loss_is_what_the_agent_computes(agent, experience):
    answer = learners_loss(agent, experience)
    reference = agent.loss(experience, gamma=GAMMA).loss
    np.testing.assert_allclose(float(answer), float(reference), rtol=1e-6)
    feedback = selfcheck.td_loss(answer, agent, experience)
    assert feedback and feedback.message.startswith("Right"), feedback.message
    # Both mistakes that this batch can show are shown, so the note about them stays away.
    assert "no episode end" not in feedback.message and "cannot tell" not in feedback.message


@pytest.mark.parametrize("as_what", [float, np.float32, lambda t: t])
def test_the_answer_may_be_a_float_a_numpy_scalar_or_a_tensor(agent, experience, as_what):
    assert selfcheck.td_loss(as_what(learners_loss(agent, experience).numpy()), agent, experience)


def test_the_reference_uses_the_agents_gamma_not_agent_loss_default(agent, experience):
    """agent.loss(experience) alone computes with gamma=1.0; a right answer for 0.9 passes."""
    with_gamma_one = learners_loss(agent, experience, gamma=1.0)
    assert not np.isclose(float(with_gamma_one), float(learners_loss(agent, experience)))
    assert np.isclose(float(with_gamma_one), float(agent.loss(experience).loss))
    assert not selfcheck.td_loss(with_gamma_one, agent, experience)


@pytest.mark.parametrize(
    "mistake, misunderstanding",
    [
        ("no discount", "bootstraps through the ends of episodes"),
        ("max over Q(s, ·)", "the action the agent really took"),
        ("target from s", "your target looks at s"),
        ("Q-network for the target", "with the target network"),
        ("minus", "check the sign"),
        ("no reward", "leaves out the reward"),
        ("sum", "sum over the batch"),
        ("absolute", "mean of their sizes"),
        ("no square", "positive and negative errors cancel"),
        ("half", "no factor 1/2"),
        ("huber", "Huber loss"),
        ("root", "square root"),
        ("per pair", "one loss per pair"),
    ],
)
def test_a_typical_mistake_gets_its_hint(agent, experience, mistake, misunderstanding):
    feedback = selfcheck.td_loss(
        learners_loss(agent, experience, mistake=mistake), agent, experience
    )
    assert not feedback and misunderstanding in feedback.message, feedback.message
    assert str(round(float(learners_loss(agent, experience)), 3)) not in feedback.message


@pytest.fixture(scope="module")
def huber_agent(cartpole):
    return make_agent(cartpole, huber=True)


def test_with_the_lessons_huber_loss_the_huber_loss_written_by_hand_is_right(huber_agent):
    experience = make_batch(huber_agent)
    answer = learners_loss(huber_agent, experience, huber=True)
    reference = huber_agent.loss(experience, gamma=GAMMA).loss
    np.testing.assert_allclose(float(answer), float(reference), rtol=1e-6)
    feedback = selfcheck.td_loss(answer, huber_agent, experience)
    assert feedback and feedback.message.startswith("Right"), feedback.message
    squared = learners_loss(huber_agent, experience, mistake="square")
    assert not selfcheck.td_loss(squared, huber_agent, experience)


@pytest.mark.parametrize(
    "mistake, misunderstanding",
    [
        ("square", "this is the mean squared TD error"),
        ("half square everywhere", "half the square of every TD error"),
        ("absolute", "the mean of the errors' sizes"),
        ("no discount", "bootstraps through the ends of episodes"),
        ("Q-network for the target", "with the target network"),
        ("no square", "positive and negative errors cancel"),
        ("per pair", "one loss per pair"),
    ],
)
def test_with_the_huber_loss_a_typical_mistake_gets_its_hint(
    huber_agent, mistake, misunderstanding
):
    experience = make_batch(huber_agent)
    answer = learners_loss(huber_agent, experience, mistake=mistake, huber=True)
    feedback = selfcheck.td_loss(answer, huber_agent, experience)
    assert not feedback and misunderstanding in feedback.message, feedback.message


def test_a_batch_without_an_episode_end_says_what_it_cannot_see(agent):
    experience = make_batch(agent, terminal=())
    no_discount = learners_loss(agent, experience, mistake="no discount")
    feedback = selfcheck.td_loss(no_discount, agent, experience)
    assert feedback and "holds no episode end" in feedback.message


def test_with_the_lessons_target_network_the_check_says_it_cannot_tell_the_networks_apart(cartpole):
    agent = make_agent(cartpole, separate_target=False)
    experience = make_batch(agent)
    feedback = selfcheck.td_loss(
        learners_loss(agent, experience, mistake="Q-network for the target"), agent, experience
    )
    assert feedback and "cannot tell which one you used" in feedback.message
    assert not selfcheck.td_loss(
        learners_loss(agent, experience, mistake="no discount"), agent, experience
    )


def test_an_answer_computed_before_a_training_step_is_no_longer_right(cartpole):
    agent = make_agent(cartpole)
    experience = make_batch(agent)
    answer = learners_loss(agent, experience)
    agent.train(experience)
    feedback = selfcheck.td_loss(answer, agent, experience)
    assert not feedback and "run it again" in feedback.message


@pytest.mark.parametrize(
    "answer, misunderstanding",
    [
        (..., "replace each ..."),
        ("1.2", "one number"),
        (None, "one number"),
        ([1.0, 2.0], "one number"),
    ],
)
def test_a_blank_or_an_answer_that_is_no_number_gets_feedback_not_an_error(
    agent, experience, answer, misunderstanding
):
    feedback = selfcheck.td_loss(answer, agent, experience)
    assert not feedback and misunderstanding in feedback.message


def test_something_that_is_no_agent_gets_feedback_not_an_error(experience):
    feedback = selfcheck.td_loss(1.0, "agent", experience)
    assert not feedback and "the lesson's DqnAgent" in feedback.message


# Exercise 4: one reward, gamma 0.99, the target network's Q-values of s' are (12, 15).
TARGETS = dict(reward=1.0, gamma=0.99, next_q_values=[12.0, 15.0])
TERMINAL, TRUNCATED = 1.0, 1.0 + 0.99 * 15.0


def test_the_terminal_and_truncated_targets_pass():
    assert selfcheck.td_targets(TERMINAL, TRUNCATED, **TARGETS)
    assert selfcheck.td_targets(np.float32(TERMINAL), tf.constant(TRUNCATED), **TARGETS)


def test_the_discounts_come_from_tf_agents_own_time_steps():
    from tf_agents.trajectories import time_step as ts

    observation = np.zeros([1], np.float32)
    assert float(ts.termination(observation, 1.0).discount) == 0.0
    assert float(ts.truncation(observation, 1.0).discount) == 1.0


@pytest.mark.parametrize(
    "terminal, truncated, misunderstanding",
    [
        (TRUNCATED, TRUNCATED, "bootstrapped through a termination"),
        (TERMINAL, TERMINAL, "cut a truncated episode short"),
        (TRUNCATED, TERMINAL, "swapped the two"),
        (TERMINAL, 1.0 + 0.99 * 13.5, "max of the next Q-values"),
        (TERMINAL, 1.0 + 0.99 * 27.0, "max of the next Q-values"),
        (TERMINAL, 1.0 + 0.99 * 12.0, "max of the next Q-values"),
        (TERMINAL, 1.0 + 15.0, "multiply the value of s′ by γ"),
        (TERMINAL, 0.99 * 15.0, "starts with the reward"),
        (TERMINAL, 3.0, "work out d"),
        (0.0, TRUNCATED, "switches off the future, not the reward"),
        (..., TRUNCATED, "one number"),
    ],
)
def test_a_wrong_target_gets_its_hint(terminal, truncated, misunderstanding):
    feedback = selfcheck.td_targets(terminal, truncated, **TARGETS)
    assert not feedback and misunderstanding in feedback.message, feedback.message
    assert "15.85" not in feedback.message


# Exercise 5: 50 rewards of 1 before a termination, with gamma 1 and 0.99.
def test_true_q_values_before_a_termination_pass_and_agree_with_value_ops():
    from tf_agents.utils import value_ops

    discounts = tf.constant([[0.99] * 49 + [0.0]])  # gamma times each step's discount
    returns = value_ops.discounted_return(
        tf.ones([1, 50]), discounts, time_major=False, provide_all_returns=False
    )
    right = sum(0.99**k for k in range(50))
    np.testing.assert_allclose(float(returns[0]), right, rtol=1e-5)
    assert selfcheck.q_values_before_termination(50, right, steps_left=50, gamma=0.99)
    assert selfcheck.q_values_before_termination(
        np.float32(50), tf.constant(right), steps_left=50, gamma=0.99
    )


DISCOUNTED = sum(0.99**k for k in range(50))


@pytest.mark.parametrize(
    "gamma_1, gamma_099, misunderstanding",
    [
        (DISCOUNTED, 50, "swapped the two"),
        (49, DISCOUNTED, "with γ = 1: off by one"),
        (51, DISCOUNTED, "with γ = 1: off by one"),
        (50, sum(0.99**k for k in range(49)), "with γ < 1: off by one"),
        (50, sum(0.99**k for k in range(1, 51)), "is not discounted"),
        (50, 100.0, "never ends"),
        (50, 50 * 0.99**50, "its own discount"),
        (50, 50 * 0.99, "its own discount"),
        (50, 50, "without discounting"),
        (200, DISCOUNTED, "from the last step back"),
        (..., DISCOUNTED, "one number"),
    ],
)
def test_a_wrong_true_q_value_gets_its_hint(gamma_1, gamma_099, misunderstanding):
    feedback = selfcheck.q_values_before_termination(gamma_1, gamma_099, steps_left=50, gamma=0.99)
    assert not feedback and misunderstanding in feedback.message, feedback.message
    assert "39.5" not in feedback.message
