"""Loading environments by name, and checking that a policy fits an environment."""

import numpy as np
import pytest
from tf_agents.environments import (
    batched_py_environment,
    py_environment,
    suite_gym,
    tf_py_environment,
)
from tf_agents.policies import random_py_policy, random_tf_policy
from tf_agents.specs import array_spec

from course_helpers import environments


@pytest.fixture(scope="module")
def tf_cartpole():
    return tf_py_environment.TFPyEnvironment(suite_gym.load("CartPole-v0"))


def test_registered_names_include_gym_and_pybullet_environments():
    names = environments.registered_names()
    assert "CartPole-v0" in names
    assert "InvertedPendulumBulletEnv-v0" in names
    assert names == sorted(names)


def test_load_returns_a_python_environment_that_renders_rgb_frames():
    env = environments.load("CartPole-v0")
    try:
        assert isinstance(env, py_environment.PyEnvironment)
        env.reset()
        frame = env.render()
        assert frame.shape == (400, 600, 3)
        assert frame.dtype == np.uint8
    finally:
        env.close()


def test_load_uses_the_pybullet_suite_for_pybullet_environments():
    env = environments.load("InvertedPendulumBulletEnv-v0")
    try:
        assert isinstance(env, py_environment.PyEnvironment)
        assert env.observation_spec().shape == (5,)
        assert env.reset().observation.shape == (5,)
    finally:
        env.close()


def test_load_passes_options_to_the_suite():
    env = environments.load("CartPole-v0", max_episode_steps=3)
    try:
        time_step = env.reset()
        steps = 0
        while not time_step.is_last():
            time_step = env.step(np.array(0, dtype=np.int64))
            steps += 1
        assert steps == 3
    finally:
        env.close()


def test_load_of_a_misspelt_name_suggests_the_right_one():
    with pytest.raises(ValueError, match="Unknown environment 'CartPol-v0'") as error:
        environments.load("CartPol-v0")
    assert "Did you mean 'CartPole-v0'" in str(error.value)


def test_load_of_a_name_like_nothing_known_gives_no_suggestion():
    with pytest.raises(ValueError, match="Unknown environment") as error:
        environments.load("Zzzzzzzz-v9")
    assert "Did you mean" not in str(error.value)


@pytest.mark.parametrize("name", ["", None, 3])
def test_load_rejects_a_name_that_is_not_a_non_empty_string(name):
    with pytest.raises(ValueError, match="non-empty string"):
        environments.load(name)


def test_as_py_environment_returns_a_python_environment_unchanged(cartpole):
    assert environments.as_py_environment(cartpole) is cartpole


def test_as_py_environment_unwraps_a_tf_environment_of_one(tf_cartpole):
    env = environments.as_py_environment(tf_cartpole)
    assert isinstance(env, py_environment.PyEnvironment)
    assert not env.batched
    assert env is tf_cartpole.pyenv.envs[0]


def test_as_py_environment_loads_a_gym_id():
    env = environments.as_py_environment("CartPole-v0")
    assert env.action_spec().maximum == 1
    env.close()


def test_as_py_environment_rejects_a_batch_of_two_saying_how_many():
    batch = batched_py_environment.BatchedPyEnvironment(
        [suite_gym.load("CartPole-v0"), suite_gym.load("CartPole-v0")]
    )
    with pytest.raises(ValueError, match="batch of 2") as error:
        environments.as_py_environment(batch)
    assert "Pass one of its environments" in str(error.value)
    batch.close()


def test_as_py_environment_rejects_something_that_is_not_an_environment():
    with pytest.raises(TypeError, match="got list"):
        environments.as_py_environment([1, 2])


def test_as_py_policy_returns_a_python_policy_unchanged(random_policy):
    assert environments.as_py_policy(random_policy) is random_policy


def test_as_py_policy_wraps_a_tf_policy_once_and_reuses_the_wrapper(tf_cartpole):
    policy = random_tf_policy.RandomTFPolicy(
        tf_cartpole.time_step_spec(), tf_cartpole.action_spec()
    )
    wrapped = environments.as_py_policy(policy)
    assert wrapped is environments.as_py_policy(policy)
    action = wrapped.action(tf_cartpole.pyenv.envs[0].reset()).action
    assert action in (0, 1)


def test_as_py_policy_lets_go_of_policies_no_longer_used(tf_cartpole):
    """The wrapper cache is bounded: an old agent's policy is not kept alive forever."""
    import gc
    import weakref

    first = random_tf_policy.RandomTFPolicy(tf_cartpole.time_step_spec(), tf_cartpole.action_spec())
    environments.as_py_policy(first)
    first_alive = weakref.ref(first)
    del first
    maxsize = environments._compiled.cache_info().maxsize
    assert maxsize is not None  # an unbounded cache would keep every policy
    for _ in range(maxsize):
        environments.as_py_policy(
            random_tf_policy.RandomTFPolicy(tf_cartpole.time_step_spec(), tf_cartpole.action_spec())
        )
    gc.collect()
    assert first_alive() is None


def test_batched_py_policy_acts_as_the_tf_policy_for_each_batch_size_and_follows_new_weights(
    tf_cartpole,
):
    """The batched wrapper calls one concrete function per batch size: the actions must be the
    greedy policy's own, for 4 and 10 CartPoles side by side, and a change to the network's
    weights must reach them (the function reads the variables, it does not copy them)."""
    import tensorflow as tf
    from tf_agents.networks import q_network
    from tf_agents.policies import greedy_policy, q_policy

    q_net = q_network.QNetwork(
        tf_cartpole.observation_spec(), tf_cartpole.action_spec(), fc_layer_params=(8,)
    )
    policy = greedy_policy.GreedyPolicy(
        q_policy.QPolicy(tf_cartpole.time_step_spec(), tf_cartpole.action_spec(), q_net)
    )
    wrapped = environments.batched_py_policy(policy)
    for size in (4, 10, 4):
        envs = batched_py_environment.BatchedPyEnvironment(
            [suite_gym.load("CartPole-v0") for _ in range(size)], multithreading=False
        )
        time_step = envs.reset()
        action = wrapped.action(time_step).action
        assert isinstance(action, np.ndarray) and action.shape == (size,)
        expected = np.argmax(q_net(tf.convert_to_tensor(time_step.observation))[0], axis=-1)
        np.testing.assert_array_equal(action, expected)
    # Make action 1 always the larger: the wrapper must see the new weights.
    last = q_net.layers[-1]
    kernel, bias = last.get_weights()
    last.set_weights([np.zeros_like(kernel), np.array([0.0, 1.0], dtype=bias.dtype)])
    np.testing.assert_array_equal(wrapped.action(time_step).action, np.ones(4, dtype=np.int64))


def test_as_py_policy_rejects_something_that_is_not_a_policy():
    with pytest.raises(TypeError, match="Expected a TF-Agents policy, got function"):
        environments.as_py_policy(lambda time_step: 0)


def test_a_policy_built_from_the_environments_specs_fits(cartpole, random_policy):
    environments.check_policy_matches(cartpole, random_policy)


def test_a_tf_policy_built_from_the_tf_environments_specs_fits(tf_cartpole):
    policy = random_tf_policy.RandomTFPolicy(
        tf_cartpole.time_step_spec(), tf_cartpole.action_spec()
    )
    py_env = environments.as_py_environment(tf_cartpole)
    environments.check_policy_matches(py_env, environments.as_py_policy(policy))


def test_a_policy_for_another_observation_shape_does_not_fit(cartpole):
    acrobot = suite_gym.load("Acrobot-v1")  # observations of shape (6,), CartPole's are (4,)
    policy = random_py_policy.RandomPyPolicy(acrobot.time_step_spec(), cartpole.action_spec())
    with pytest.raises(ValueError, match="does not fit") as error:
        environments.check_policy_matches(cartpole, policy)
    message = str(error.value)
    assert "observation spec is shape (6,) float32" in message
    assert "the environment's is shape (4,) float32" in message
    assert "time_step_spec() and action_spec()" in message
    acrobot.close()


def test_a_policy_with_another_environments_action_range_does_not_fit(cartpole):
    mountain_car = suite_gym.load("MountainCar-v0")  # actions 0..2, CartPole's are 0..1
    policy = random_py_policy.RandomPyPolicy(cartpole.time_step_spec(), mountain_car.action_spec())
    with pytest.raises(ValueError, match="does not fit") as error:
        environments.check_policy_matches(cartpole, policy)
    assert "action spec is shape () int64 from 0 to 2" in str(error.value)
    assert "the environment's is shape () int64 from 0 to 1" in str(error.value)
    mountain_car.close()


def test_a_policy_with_continuous_actions_does_not_fit_a_discrete_environment(cartpole):
    continuous = array_spec.BoundedArraySpec((1,), np.float32, minimum=-1.0, maximum=1.0)
    policy = random_py_policy.RandomPyPolicy(cartpole.time_step_spec(), continuous)
    with pytest.raises(
        ValueError, match="does not fit this environment: its action spec is shape \\(1,\\) float32"
    ):
        environments.check_policy_matches(cartpole, policy)


def test_play_yields_each_episode_from_its_reset_step_to_its_last_step(cartpole, random_policy):
    steps = [time_step for _, time_step in environments.play(cartpole, random_policy, 2)]
    firsts = [i for i, step in enumerate(steps) if step.is_first()]
    lasts = [i for i, step in enumerate(steps) if step.is_last()]
    assert firsts[0] == 0 and len(firsts) == 2
    assert lasts == [firsts[1] - 1, len(steps) - 1]
    assert all(steps[i].reward == 0 for i in firsts)


def test_play_yields_the_unbatched_python_environment(tf_cartpole):
    policy = random_tf_policy.RandomTFPolicy(
        tf_cartpole.time_step_spec(), tf_cartpole.action_spec()
    )
    env, _ = next(environments.play(tf_cartpole, policy, 1))
    assert env is tf_cartpole.pyenv.envs[0]


def test_play_stops_an_episode_after_max_steps_per_episode(cartpole, random_policy):
    # A pole that starts upright cannot fall within three steps, so each episode is cut.
    steps = list(environments.play(cartpole, random_policy, 2, max_steps_per_episode=3))
    assert len(steps) == 2 * (1 + 3)


@pytest.mark.parametrize("num_episodes", [0, -1, 1.5, "3"])
def test_play_rejects_a_number_of_episodes_that_is_not_a_positive_integer(
    cartpole, random_policy, num_episodes
):
    with pytest.raises(ValueError, match="num_episodes must be a positive integer"):
        next(environments.play(cartpole, random_policy, num_episodes))


def test_batched_py_policy_drives_a_batch_of_cartpoles_with_numpy_actions(tf_cartpole):
    """Lesson 2's collect driver: four CartPoles, one policy call per step, NumPy actions."""
    from tf_agents.drivers import py_driver
    from tf_agents.trajectories import trajectory

    policy = random_tf_policy.RandomTFPolicy(
        tf_cartpole.time_step_spec(), tf_cartpole.action_spec()
    )
    batch = batched_py_environment.BatchedPyEnvironment(
        [suite_gym.load("CartPole-v0") for _ in range(4)], multithreading=False
    )
    seen: list[trajectory.Trajectory] = []
    driver = py_driver.PyDriver(
        batch, environments.batched_py_policy(policy), [seen.append], max_steps=40
    )
    driver.run(batch.reset())
    assert seen and all(type(t.action) is np.ndarray and t.action.shape == (4,) for t in seen)
    assert sum(int(np.sum(~t.is_boundary())) for t in seen) >= 40
    batch.close()


def test_a_spec_in_the_mismatch_message_is_described_in_the_lessons_language(monkeypatch):
    from course_helpers import i18n
    from course_helpers.environments import _describe

    monkeypatch.setattr(i18n, "_language", "fr")
    action = array_spec.BoundedArraySpec((8,), np.float32, minimum=-0.5, maximum=0.5)
    assert _describe(action, "action") == "forme (8,) float32 de -0,5 à 0,5"
