"""Average return: how the lessons score a policy."""

import numpy as np
import pytest
from tf_agents.environments import batched_py_environment, suite_gym, tf_py_environment
from tf_agents.policies import py_policy, random_py_policy, random_tf_policy
from tf_agents.trajectories import policy_step

from course_helpers import average_return


def test_a_random_python_policy_scores_between_1_and_200_on_cartpole(cartpole, random_policy):
    score = average_return(cartpole, random_policy, num_episodes=5)
    assert isinstance(score, float)
    assert 1 <= score <= 200


def test_a_random_tf_policy_scores_between_1_and_200_on_a_tf_cartpole():
    env = tf_py_environment.TFPyEnvironment(suite_gym.load("CartPole-v0"))
    policy = random_tf_policy.RandomTFPolicy(env.time_step_spec(), env.action_spec())
    assert 1 <= average_return(env, policy, num_episodes=5) <= 200


def test_average_return_loads_an_environment_given_by_name(random_policy):
    assert 1 <= average_return("CartPole-v0", random_policy, num_episodes=2) <= 200


def test_average_return_sums_rewards_after_reset_and_divides_by_episodes(cartpole, random_policy):
    # CartPole pays 1 per step and the reset step pays nothing; an upright pole cannot
    # fall within 4 steps, so each cut episode returns exactly 4.
    assert average_return(cartpole, random_policy, num_episodes=3, max_steps_per_episode=4) == 4.0


def test_average_return_refuses_a_policy_built_for_another_environment(cartpole):
    acrobot = suite_gym.load("Acrobot-v1")
    policy = random_py_policy.RandomPyPolicy(acrobot.time_step_spec(), acrobot.action_spec())
    with pytest.raises(ValueError, match="does not fit this environment"):
        average_return(cartpole, policy, num_episodes=1)
    acrobot.close()


def cartpoles(count):
    batch = batched_py_environment.BatchedPyEnvironment(
        [suite_gym.load("CartPole-v0") for _ in range(count)], multithreading=False
    )
    for i, env in enumerate(batch.envs):
        env.seed(100 + i)
    return batch


class Pattern(py_policy.PyPolicy):
    """Pushes right at every step in the environments listed in ``right`` (``True`` or
    ``False`` for a single environment), and left and right in turn in the others: the pole falls within about 10 steps in the first kind
    and stays up longer in the second. Deterministic, so a seeded episode always has the
    same return, whether played alone or in a batch."""

    def __init__(self, env, right):
        super().__init__(env.time_step_spec(), env.action_spec())
        self.right, self.step = right, 0

    def _action(self, time_step, policy_state):
        if np.all(time_step.is_first()):
            self.step = 0
        self.step += 1
        action = np.full(np.shape(time_step.step_type), self.step % 2, dtype=np.int64)
        if action.ndim:
            action[self.right] = 1
        elif self.right:
            action = np.ones_like(action)
        return policy_step.PolicyStep(action, policy_state, ())


def test_a_batch_plays_one_episode_in_each_environment_and_counts_each_once():
    batch, alone = cartpoles(2), cartpoles(2)
    short = average_return(alone.envs[0], Pattern(alone.envs[0], right=True), num_episodes=1)
    long = average_return(alone.envs[1], Pattern(alone.envs[1], right=False), num_episodes=1)
    assert short < long
    # In the batch, environment 0 ends first and restarts while environment 1 plays on;
    # its second episode must not count, or short episodes would pull the mean down.
    assert (
        average_return(batch, Pattern(batch.envs[0], right=[0]), num_episodes=2)
        == (short + long) / 2
    )
    batch.close()
    alone.close()


class AlwaysRight(py_policy.PyPolicy):
    def __init__(self, env):
        super().__init__(env.time_step_spec(), env.action_spec())

    def _action(self, time_step, policy_state):
        shape = np.shape(time_step.step_type)
        return policy_step.PolicyStep(np.ones(shape, dtype=np.int64), policy_state, ())


def test_a_batch_plays_more_rounds_when_asked_for_more_episodes_than_it_holds():
    batch = cartpoles(2)
    policy = CountingRounds(batch.envs[0])
    average_return(batch, policy, num_episodes=5)
    assert policy.resets_seen == 3  # rounds of 2, 2 and 2 episodes; the 6th is not counted
    batch.close()


class CountingRounds(AlwaysRight):
    def __init__(self, env):
        super().__init__(env)
        self.resets_seen = 0

    def _action(self, time_step, policy_state):
        self.resets_seen += int(np.all(time_step.is_first()))
        return super()._action(time_step, policy_state)


def test_a_tf_policy_evaluates_on_a_batch_and_on_a_tf_environment_holding_it():
    from tf_agents.policies import random_tf_policy

    batch = cartpoles(3)
    tf_env = tf_py_environment.TFPyEnvironment(batch)
    policy = random_tf_policy.RandomTFPolicy(tf_env.time_step_spec(), tf_env.action_spec())
    assert 1 <= average_return(batch, policy, num_episodes=3) <= 200
    assert 1 <= average_return(tf_env, policy, num_episodes=3) <= 200
    # The same policy still evaluates on one environment afterwards (its own trace).
    assert 1 <= average_return(batch.envs[0], policy, num_episodes=1) <= 200


def test_a_batch_cuts_episodes_at_max_steps_per_episode():
    batch = cartpoles(3)
    assert (
        average_return(batch, AlwaysRight(batch.envs[0]), num_episodes=3, max_steps_per_episode=4)
        == 4.0
    )


def test_a_batch_refuses_a_policy_built_for_another_environment():
    acrobot = suite_gym.load("Acrobot-v1")
    policy = random_py_policy.RandomPyPolicy(acrobot.time_step_spec(), acrobot.action_spec())
    with pytest.raises(ValueError, match="does not fit this environment"):
        average_return(cartpoles(2), policy, num_episodes=2)


@pytest.mark.parametrize("num_episodes", [0, -2])
def test_average_return_refuses_fewer_than_one_episode(cartpole, random_policy, num_episodes):
    with pytest.raises(ValueError, match="num_episodes must be a positive integer"):
        average_return(cartpole, random_policy, num_episodes=num_episodes)
