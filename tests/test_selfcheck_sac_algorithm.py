"""Lesson 03's checks of the algorithm agree with SacAgent and name each typical mistake.

Every reference is TF-Agents' own computation (``SacAgent.critic_loss``, ``alpha_loss``,
``_target_entropy``), on small agents built here in a fraction of a second.
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np
import pytest
import tensorflow as tf

from course_helpers import i18n, selfcheck

OBSERVATION = tf.TensorSpec([28], tf.float32)


def bounded(size):
    from tf_agents.specs import tensor_spec

    return tensor_spec.BoundedTensorSpec([size], tf.float32, minimum=-1.0, maximum=1.0)


ACTION = bounded(8)


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    i18n.set_language("en")


def sac_agent(observation_spec=OBSERVATION, action_spec=ACTION, **kwargs):
    """A small SacAgent built as the lesson builds its own (networks, optimizers, squared loss)."""
    from tf_agents.agents.ddpg import critic_network
    from tf_agents.agents.sac import sac_agent as sac
    from tf_agents.agents.sac import tanh_normal_projection_network
    from tf_agents.networks import actor_distribution_network
    from tf_agents.trajectories import time_step as ts

    critic = critic_network.CriticNetwork(
        (observation_spec, action_spec), joint_fc_layer_params=(8,)
    )
    actor = actor_distribution_network.ActorDistributionNetwork(
        observation_spec,
        action_spec,
        fc_layer_params=(8,),
        continuous_projection_net=tanh_normal_projection_network.TanhNormalProjectionNetwork,
    )
    agent = sac.SacAgent(
        ts.time_step_spec(observation_spec),
        action_spec,
        critic_network=critic,
        actor_network=actor,
        actor_optimizer=tf.keras.optimizers.Adam(3e-4),
        critic_optimizer=tf.keras.optimizers.Adam(3e-4),
        alpha_optimizer=tf.keras.optimizers.Adam(3e-4),
        td_errors_loss_fn=tf.math.squared_difference,
        **kwargs,
    )
    agent.initialize()
    return agent


# ---------------------------------------------------------------------------------------
# The target entropy, predicted before it is read.


@pytest.fixture(scope="module")
def minitaur_agent():
    return sac_agent()


def test_the_default_target_entropy_passes_and_is_half_the_papers(minitaur_agent):
    assert minitaur_agent._target_entropy == -8 / 2
    feedback = selfcheck.target_entropy(-4.0, minitaur_agent)
    assert feedback and "half the paper's" in feedback.message
    assert selfcheck.target_entropy(np.float32(-4), minitaur_agent)


def test_the_expected_answer_is_the_agents_own_target_when_it_was_given_one():
    """The question asks for tf_agent._target_entropy; the exercise that passes the paper's
    -8 changes it, and the check follows."""
    agent = sac_agent(target_entropy=-8.0)
    assert agent._target_entropy == -8.0
    feedback = selfcheck.target_entropy(-8.0, agent)
    assert feedback and "given its own target entropy" in feedback.message
    feedback = selfcheck.target_entropy(-4.0, agent)
    assert not feedback and "TF-Agents' default, but this agent" in feedback.message
    for wrong in (-2.0, -28.0):  # no hint about the default, which this agent does not use
        feedback = selfcheck.target_entropy(wrong, agent)
        assert not feedback and "read the cell that builds it" in feedback.message
    assert "check the sign" in selfcheck.target_entropy(8.0, agent).message


@pytest.mark.parametrize(
    "answer, misunderstanding",
    [
        (-8, "paper's target"),
        (4, "check the sign"),
        (8, "check the sign"),
        (-28, "not the observation's"),
        (28, "not the observation's"),
        (-14, "not the observation's"),
        (-1, "count its dimensions"),
        ("-4", "as a number"),
        (..., "as a number"),
    ],
)
def test_a_wrong_target_entropy_gets_a_hint(minitaur_agent, answer, misunderstanding):
    feedback = selfcheck.target_entropy(answer, minitaur_agent)
    assert not feedback and misunderstanding in feedback.message
    assert "-4" not in feedback.message and "−4" not in feedback.message


# ---------------------------------------------------------------------------------------
# The critic's loss by hand, on one batch, against SacAgent.critic_loss.

BATCH = 16


@pytest.fixture(scope="module")
def trained_looking():
    """An agent whose critics have moved away from their targets and whose α is not 1,
    a batch with episode ends in it, and one sample of a′ ~ π(·|s′) with its log π."""
    from tf_agents.trajectories import trajectory
    from tf_agents.utils import common

    agent = sac_agent(
        tf.TensorSpec([5], tf.float32), bounded(3), gamma=0.9, reward_scale_factor=3.0
    )
    rng = np.random.default_rng(7)
    networks = (
        agent._critic_network_1,
        agent._critic_network_2,
        agent._target_critic_network_1,
        agent._target_critic_network_2,
    )
    for variable in [v for network in networks for v in network.variables]:
        variable.assign_add(rng.normal(0.0, 0.3, variable.shape).astype(np.float32))
    agent._log_alpha.assign(-0.7)
    discount = np.ones([BATCH, 2], np.float32)
    discount[::4, 0] = 0.0  # every fourth pair ends its episode (d = 0 at the next step)
    experience = trajectory.Trajectory(
        step_type=tf.constant(np.where(discount == 0.0, 2, 1), tf.int32),
        observation=tf.constant(rng.normal(size=[BATCH, 2, 5]), tf.float32),
        action=tf.constant(rng.uniform(-0.9, 0.9, [BATCH, 2, 3]), tf.float32),
        policy_info=(),
        next_step_type=tf.constant(np.where(discount == 0.0, 0, 1), tf.int32),
        reward=tf.constant(rng.normal(0.0, 1.0, [BATCH, 2]), tf.float32),
        discount=tf.constant(discount),
    )
    transition = trajectory.experience_to_transitions(experience, squeeze_time_dim=True)
    distribution = agent.policy.distribution(transition.next_time_step).action
    next_actions = distribution.sample()
    next_log_pis = common.log_probability(distribution, next_actions, agent.action_spec)
    return agent, transition, next_actions, next_log_pis


def learners_parts(agent, transition, next_actions):
    """What the lesson's cells give the learner: the four critics' values, α, r and d."""
    time_steps, policy_steps, next_time_steps = transition
    ahead = (next_time_steps.observation, next_actions)
    now = (time_steps.observation, policy_steps.action)
    return dict(
        target_q1=agent._target_critic_network_1(ahead, training=False)[0],
        target_q2=agent._target_critic_network_2(ahead, training=False)[0],
        online_ahead=tf.minimum(
            agent._critic_network_1(ahead, training=False)[0],
            agent._critic_network_2(ahead, training=False)[0],
        ),
        q1=agent._critic_network_1(now, training=False)[0],
        q2=agent._critic_network_2(now, training=False)[0],
        alpha=tf.exp(agent._log_alpha),
        reward=next_time_steps.reward,
        discount=next_time_steps.discount,
    )


def learners_loss(
    agent,
    transition,
    next_actions,
    next_log_pis,
    *,
    smaller=None,
    sign=-1.0,
    discount=True,
    scale=True,
    reduce="sum",
):
    """The learner's answer, as the lesson's reference solution writes it, with one mistake."""
    p = learners_parts(agent, transition, next_actions)
    gamma, c = 0.9, 3.0
    next_value = tf.minimum(p["target_q1"], p["target_q2"]) if smaller is None else smaller(p)
    y = (c if scale else 1.0) * p["reward"] + gamma * (p["discount"] if discount else 1.0) * (
        next_value + sign * p["alpha"] * next_log_pis
    )
    if reduce == "sum":
        return tf.reduce_mean((y - p["q1"]) ** 2 + (y - p["q2"]) ** 2)
    if reduce == "one critic":
        return tf.reduce_mean((y - p["q1"]) ** 2)
    if reduce == "mean of two":
        return tf.reduce_mean(((y - p["q1"]) ** 2 + (y - p["q2"]) ** 2) / 2)
    if reduce == "batch sum":
        return tf.reduce_sum((y - p["q1"]) ** 2 + (y - p["q2"]) ** 2)
    return (y - p["q1"]) ** 2 + (y - p["q2"]) ** 2  # one number per pair


def test_the_learners_loss_passes_and_equals_the_librarys_on_the_same_sample(trained_looking):
    agent, transition, next_actions, next_log_pis = trained_looking
    answer = learners_loss(agent, transition, next_actions, next_log_pis)
    feedback = selfcheck.critic_loss(answer, agent, transition, next_actions, next_log_pis)
    assert feedback and "SacAgent.critic_loss" in feedback.message
    # This batch can tell every mistake apart, so the check adds no caveat.
    assert "cannot" not in feedback.message


def test_the_check_restores_the_agents_own_sampling(trained_looking):
    agent, transition, next_actions, next_log_pis = trained_looking
    selfcheck.critic_loss(1.0, agent, transition, next_actions, next_log_pis)
    assert "_actions_and_log_probs" not in vars(agent)
    # Unpatched, critic_loss draws its own a′ each call: two calls differ, which is why
    # the check must hand the learner's sample to the library's code.
    time_steps, policy_steps, next_time_steps = transition
    losses = [
        float(
            agent.critic_loss(
                time_steps,
                policy_steps.action,
                next_time_steps,
                td_errors_loss_fn=tf.math.squared_difference,
                gamma=0.9,
                reward_scale_factor=3.0,
            )
        )
        for _ in range(2)
    ]
    assert losses[0] != losses[1]


def test_the_reference_is_the_library_not_a_copy_of_the_formula(trained_looking, monkeypatch):
    """If SacAgent computed another loss, the check would follow it, not its own formula."""
    from tf_agents.agents.sac import sac_agent as sac

    agent, transition, next_actions, next_log_pis = trained_looking
    answer = learners_loss(agent, transition, next_actions, next_log_pis)
    real = sac.SacAgent.critic_loss
    monkeypatch.setattr(
        sac.SacAgent, "critic_loss", lambda self, *a, **k: 2.0 * real(self, *a, **k)
    )
    assert not selfcheck.critic_loss(answer, agent, transition, next_actions, next_log_pis)


def online_ahead(p):
    return p["online_ahead"]


def online_now(p):
    return tf.minimum(p["q1"], p["q2"])


def larger(p):
    return tf.maximum(p["target_q1"], p["target_q2"])


@pytest.mark.parametrize(
    "mistake, misunderstanding",
    [
        (dict(smaller=online_ahead), "the wrong network"),
        (dict(smaller=online_now), "the wrong network"),
        (dict(smaller=larger), "smaller of the twin target critics, not the larger"),
        (dict(sign=+1.0), "sign of the entropy term"),
        (dict(discount=False), "discount d"),
        (dict(scale=False), "reward_scale_factor"),
        (dict(reduce="one critic"), "add the squared errors of critic 1 and critic 2"),
        (dict(reduce="mean of two"), "critic_loss adds them"),
        (dict(reduce="batch sum"), "returns the mean"),
        (dict(reduce="per pair"), "one number per pair"),
    ],
)
def test_a_typical_wrong_critic_loss_gets_its_hint(trained_looking, mistake, misunderstanding):
    agent, transition, next_actions, next_log_pis = trained_looking
    answer = learners_loss(agent, transition, next_actions, next_log_pis, **mistake)
    feedback = selfcheck.critic_loss(answer, agent, transition, next_actions, next_log_pis)
    assert not feedback and misunderstanding in feedback.message, feedback.message


@pytest.mark.parametrize(
    "answer, misunderstanding",
    [
        (..., "replace each ..."),
        ("12.5", "one number"),
        (None, "one number"),
        (123456.0, "Check each part of y"),
    ],
)
def test_a_blank_or_unrelated_critic_loss_is_told_so_without_an_error(
    trained_looking, answer, misunderstanding
):
    agent, transition, next_actions, next_log_pis = trained_looking
    feedback = selfcheck.critic_loss(answer, agent, transition, next_actions, next_log_pis)
    assert not feedback and misunderstanding in feedback.message


def test_before_training_the_check_says_what_the_batch_cannot_show():
    """Fresh agent: targets equal critics, α = 1; a batch without episode ends."""
    from tf_agents.trajectories import trajectory
    from tf_agents.utils import common

    agent = sac_agent(
        tf.TensorSpec([5], tf.float32), bounded(3), gamma=0.9, reward_scale_factor=3.0
    )
    rng = np.random.default_rng(3)
    experience = trajectory.Trajectory(
        step_type=tf.ones([4, 2], tf.int32),
        observation=tf.constant(rng.normal(size=[4, 2, 5]), tf.float32),
        action=tf.zeros([4, 2, 3]),
        policy_info=(),
        next_step_type=tf.ones([4, 2], tf.int32),
        reward=tf.ones([4, 2]),
        discount=tf.ones([4, 2]),
    )
    transition = trajectory.experience_to_transitions(experience, squeeze_time_dim=True)
    distribution = agent.policy.distribution(transition.next_time_step).action
    next_actions = distribution.sample()
    next_log_pis = common.log_probability(distribution, next_actions, agent.action_spec)
    answer = learners_loss(agent, transition, next_actions, next_log_pis, smaller=online_ahead)
    feedback = selfcheck.critic_loss(answer, agent, transition, next_actions, next_log_pis)
    assert feedback
    for caveat in ("no episode end", "still equal the critics", "α is still 1"):
        assert caveat in feedback.message


def test_an_agent_that_is_no_sac_agent_gets_feedback_not_a_crash(trained_looking):
    _agent, transition, next_actions, next_log_pis = trained_looking
    feedback = selfcheck.critic_loss(1.0, object(), transition, next_actions, next_log_pis)
    assert not feedback and "needs the lesson's SacAgent" in feedback.message


# ---------------------------------------------------------------------------------------
# Exercise: the soft Q target by hand, mid-episode and after a fall.


class SoftTargetNumbers(TypedDict):
    """The numbers the exercise gives, as soft_q_target's keyword arguments."""

    reward: float
    reward_scale_factor: float
    gamma: float
    target_q: tuple[float, float]
    alpha: float
    log_pi: float


NUMBERS = SoftTargetNumbers(
    reward=0.02, reward_scale_factor=10.0, gamma=0.99, target_q=(3.0, 2.5), alpha=0.1, log_pi=1.5
)


def by_hand(d, *, smaller=min, sign=-1.0, scale=10.0, gamma=0.99, alpha=0.1):
    return scale * 0.02 + gamma * d * (smaller(3.0, 2.5) + sign * alpha * 1.5)


def test_the_soft_target_by_hand_passes_and_is_the_one_sac_agent_computes():
    from course_helpers.selfcheck import sac

    library = sac._library_soft_targets(discounts=(1.0, 0.0), **NUMBERS)
    assert library == pytest.approx([by_hand(1.0), by_hand(0.0)], rel=1e-6)
    assert selfcheck.soft_q_target(by_hand(1.0), by_hand(0.0), **NUMBERS)
    assert selfcheck.soft_q_target(round(by_hand(1.0), 3), 0.2, **NUMBERS)


@pytest.mark.parametrize(
    "step, fall, misunderstanding",
    [
        (by_hand(1.0, smaller=max), 0.2, "not the larger"),
        (by_hand(1.0, sign=+1.0), 0.2, "sign of the entropy term"),
        (by_hand(1.0, alpha=0.0), 0.2, "soft part"),
        (by_hand(1.0, scale=1.0), 0.2, "reward_scale_factor"),
        (by_hand(1.0, gamma=1.0), 0.2, "discounted by γ"),
        (by_hand(1.0), by_hand(1.0), "does not bootstrap"),
        (by_hand(1.0), 0.0, "last step's reward still counts"),
        (by_hand(1.0), 0.02, "reward_scale_factor first, even on the last step"),
        # With these numbers the fall's two slips give different targets (0 and 0.05).
        (by_hand(1.0), 0.2 - 0.1 * 1.5, "the whole bracket goes, the entropy term too"),
        ("2.5265", 0.2, "one number"),
    ],
)
def test_a_wrong_soft_target_gets_a_hint(step, fall, misunderstanding):
    feedback = selfcheck.soft_q_target(step, fall, **NUMBERS)
    assert not feedback and misunderstanding in feedback.message, feedback.message
    assert "2.5265" not in feedback.message


# ---------------------------------------------------------------------------------------
# Exercise: the gradient of α's loss, and where α goes.


def test_alpha_goes_up_when_the_entropy_is_below_the_target():
    # log π = 5 on average: an entropy of −5, below TF-Agents' −4 for 8 motors.
    feedback = selfcheck.alpha_update(-1.0, "up", mean_log_pi=5.0, action_spec=ACTION)
    assert feedback and "pushes α up" in feedback.message
    assert selfcheck.alpha_update(-1, " Up", mean_log_pi=5.0, action_spec=ACTION)


def test_alpha_goes_down_when_the_entropy_is_above_the_target():
    feedback = selfcheck.alpha_update(2.0, "down", mean_log_pi=2.0, action_spec=ACTION)
    assert feedback and "pushes α down" in feedback.message


def test_the_gradient_is_the_one_alpha_loss_has_whatever_alpha_is():
    from course_helpers.selfcheck import sac

    target, gradient = sac._library_alpha_gradient(mean_log_pi=5.0, action_spec=ACTION)
    assert (target, gradient) == (pytest.approx(-4.0), pytest.approx(-5.0 - target))


@pytest.mark.parametrize(
    "gradient, direction, misunderstanding",
    [
        (9.0, "down", "−log π, not log π"),
        (1.0, "down", "the other way round"),
        (-9.0, "up", "do not add it"),
        (3.0, "down", "half the paper's"),
        (-1.0, "down", "against the gradient's sign"),
        (13.0, "down", "the sign of the entropy term, and TF-Agents' default target"),
        (-3.0, "up", "not the other way round, and TF-Agents' default target"),
        (-1.0, "rises", 'write "up" or "down"'),
        (-1.0, None, 'write "up" or "down"'),
        (..., "up", "one number"),
    ],
)
def test_a_wrong_alpha_update_gets_a_hint(gradient, direction, misunderstanding):
    feedback = selfcheck.alpha_update(gradient, direction, mean_log_pi=5.0, action_spec=ACTION)
    assert not feedback and misunderstanding in feedback.message, feedback.message
