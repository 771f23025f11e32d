"""Average return: how the lessons score a policy."""

import pytest
from tf_agents.environments import batched_py_environment, suite_gym, tf_py_environment
from tf_agents.policies import random_py_policy, random_tf_policy

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


def test_average_return_refuses_a_batch_of_two_environments(random_policy):
    batch = batched_py_environment.BatchedPyEnvironment(
        [suite_gym.load("CartPole-v0"), suite_gym.load("CartPole-v0")]
    )
    with pytest.raises(ValueError, match="batch of 2"):
        average_return(batch, random_policy, num_episodes=1)
    batch.close()


def test_average_return_refuses_a_tf_environment_holding_two(random_policy):
    env = tf_py_environment.TFPyEnvironment(
        batched_py_environment.BatchedPyEnvironment(
            [suite_gym.load("CartPole-v0"), suite_gym.load("CartPole-v0")]
        )
    )
    with pytest.raises(ValueError, match="one episode at a time"):
        average_return(env, random_policy, num_episodes=1)


@pytest.mark.parametrize("num_episodes", [0, -2])
def test_average_return_refuses_fewer_than_one_episode(cartpole, random_policy, num_episodes):
    with pytest.raises(ValueError, match="num_episodes must be a positive integer"):
        average_return(cartpole, random_policy, num_episodes=num_episodes)
