"""Self-checks answer at once, point at the misunderstanding, and never give the answer."""

from __future__ import annotations

import numpy as np
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
    assert {
        "action": tuple(action.shape),
        "lidar": tuple(lidar.shape),
        "camera": tuple(camera.shape),
    } == RIGHT
    feedback = check()
    assert feedback and str(feedback).startswith("✔ Right")


@pytest.mark.parametrize(
    "wrong, misunderstanding",
    [
        ({"lidar": (3, 8, 5)}, "puts time first"),
        ({"lidar": (8, 5)}, "has no time axis"),
        ({"lidar": (3, 5)}, "has no batch axis"),
        ({"lidar": (32, 3, 5)}, "uses the buffer's batch_size (32)"),
        ({"camera": (8, 3, 6)}, "the first two axes of camera are right"),
        ({"action": (3, 3, 8)}, "does not follow the order batch, time, item"),
    ],
)
def test_a_wrong_shape_gets_a_hint_about_its_misunderstanding(wrong, misunderstanding):
    feedback = check(**wrong)
    assert not feedback and misunderstanding in feedback.message


@pytest.mark.parametrize("wrong", [{"lidar": (3, 8, 5)}, {"camera": (8, 3, 6)}, {"action": (8, 3)}])
def test_a_hint_never_reveals_the_expected_shape(wrong):
    message = check(**wrong).message
    for shape in RIGHT.values():
        assert str(shape) not in message and str(list(shape)) not in message


def test_a_missing_part_or_a_shape_that_is_not_numbers_is_named():
    assert (
        "missing: camera"
        in selfcheck.dataset_shapes(
            {"action": (8, 3, 3), "lidar": (8, 3, 5)}, DATA_SPEC, **CALL
        ).message
    )
    assert "lidar is 'eight'" in check(lidar="eight").message


def test_feedback_speaks_the_lesson_language_and_shows_as_html():
    i18n.set_language("fr")
    feedback = check(lidar=(3, 8, 5))
    assert feedback.message.startswith("Pas encore\u00a0: ")
    assert 'role="status"' in feedback._repr_html_() and "✘" in feedback._repr_html_()


# Exercise 2 of lesson 01: a buffer for 84x84 grayscale frames and a reward, 4 environments
# of 1,000 steps each (28 MB; TFUniformReplayBuffer allocates its memory when created).
ITEM = dict(
    image=((84, 84), tf.uint8), reward=((), tf.float32), environments=4, steps_per_environment=1_000
)


def image_buffer(
    image_dtype=tf.uint8,
    image_shape=(84, 84),
    reward_shape=(),
    reward_dtype=tf.float32,
    batch_size=4,
    max_length=1_000,
    names=("image", "reward"),
):
    from tf_agents.replay_buffers import tf_uniform_replay_buffer

    spec = (
        tf.TensorSpec(image_shape, image_dtype, names[0]),
        tf.TensorSpec(reward_shape, reward_dtype, names[1]),
    )
    return tf_uniform_replay_buffer.TFUniformReplayBuffer(
        spec, batch_size=batch_size, max_length=max_length
    )


def test_a_buffer_built_as_asked_passes_with_or_without_a_channel_axis():
    assert selfcheck.replay_buffer(image_buffer(), **ITEM)
    assert selfcheck.replay_buffer(image_buffer(image_shape=(84, 84, 1)), **ITEM)


@pytest.mark.parametrize("dtype", [tf.float16, tf.float64])
def test_another_floating_point_reward_fails_since_the_buffer_would_refuse_real_rewards(dtype):
    feedback = selfcheck.replay_buffer(image_buffer(reward_dtype=dtype), **ITEM)
    assert not feedback and "a buffer does not convert what it is given" in feedback.message


def test_the_image_hints_ask_for_the_dtype_without_naming_it():
    for dtype in (tf.float32, tf.uint16, tf.int8, tf.bool, tf.int32):
        feedback = selfcheck.replay_buffer(image_buffer(image_dtype=dtype), **ITEM)
        assert not feedback and "uint8" not in feedback.message, feedback.message


@pytest.mark.parametrize(
    "built, misunderstanding",
    [
        (dict(batch_size=1_000, max_length=4), "batch_size and max_length are swapped"),
        (dict(max_length=4_000), "not for all of them together"),
        (dict(batch_size=64), "not a training batch"),
        (dict(image_dtype=tf.float32), "the image is stored as float32"),
        (dict(image_dtype=tf.uint16), "uint16, 2 bytes per pixel"),
        (dict(image_dtype=tf.int8), "int8, which holds -128 to 127"),
        (dict(image_dtype=tf.bool), "which dtype holds exactly those, in one byte?"),
        (dict(image_shape=(4, 84, 84)), "nothing for the batch or for time"),
        (dict(reward_shape=(1,)), "its spec has an empty shape"),
        (dict(reward_dtype=tf.int32), "the reward's dtype is int32"),
        (dict(reward_dtype=tf.int8), "use float32, as the question asks"),
        (dict(names=("obs", "r")), "named 'image' and 'reward'"),
    ],
)
def test_a_wrong_buffer_gets_a_hint_about_its_misunderstanding(built, misunderstanding):
    feedback = selfcheck.replay_buffer(image_buffer(**built), **ITEM)
    assert not feedback and misunderstanding in feedback.message


def test_a_dictionary_of_specs_is_named_by_its_keys():
    from tf_agents.replay_buffers import tf_uniform_replay_buffer

    spec = {"image": tf.TensorSpec((84, 84), tf.uint8), "reward": tf.TensorSpec((), tf.float32)}
    buffer = tf_uniform_replay_buffer.TFUniformReplayBuffer(spec, batch_size=4, max_length=1_000)
    assert selfcheck.replay_buffer(buffer, **ITEM)


def test_something_that_is_no_buffer_yet_is_told_so_without_an_error():
    assert "not a TFUniformReplayBuffer" in selfcheck.replay_buffer(..., **ITEM).message


# Exercise 3 of lesson 01: the second step of every sampled pair, from [batch, time, 5].
LIDAR = tf.reshape(tf.range(4 * 2 * 5, dtype=tf.float32), [4, 2, 5])


def test_the_second_step_of_every_sequence_passes():
    assert selfcheck.second_steps(LIDAR[:, 1], LIDAR)


@pytest.mark.parametrize(
    "answer, misunderstanding",
    [
        (LIDAR[1], "the second sequence of the batch"),
        (LIDAR[:, 0], "steps are counted from 0"),
        (LIDAR[-1], "which axis holds time"),
        (LIDAR, "keep only one step per sequence"),
        (LIDAR[:, 1, 0], "one step for each sequence"),
        (LIDAR[:, 1:], "keeps a time axis of length 1"),
        (..., "cut out of the sampled sequences"),
    ],
)
def test_a_wrong_slice_gets_a_hint_about_its_misunderstanding(answer, misunderstanding):
    feedback = selfcheck.second_steps(answer, LIDAR)
    assert not feedback and misunderstanding in feedback.message


# Lesson 02, exercise 1: the average-return loop, checked against course.average_return.
def always_left(env):
    """A deterministic Python policy for CartPole: always push the cart left."""
    from tf_agents.policies import py_policy
    from tf_agents.trajectories import policy_step

    class AlwaysLeft(py_policy.PyPolicy):
        def _action(self, time_step, policy_state):
            return policy_step.PolicyStep(np.array(0, np.int64), policy_state, ())

    return AlwaysLeft(env.time_step_spec(), env.action_spec())


def episodes_loop(env, policy, num_episodes, *, last_reward=True, divide=True, episodes=None):
    """The learner's loop, right, or with one of the usual mistakes."""
    totals = []
    for _ in range(episodes or num_episodes):
        time_step, total = env.reset(), 0.0
        while not time_step.is_last():
            time_step = env.step(policy.action(time_step).action)
            if last_reward or not time_step.is_last():
                total += float(time_step.reward)
        totals.append(total)
    return sum(totals) / (len(totals) if divide else 1)


def test_a_right_average_return_loop_passes(cartpole):
    feedback = selfcheck.average_return_function(episodes_loop, cartpole, always_left(cartpole), 3)
    assert feedback, feedback.message


@pytest.mark.parametrize(
    "mistake, misunderstanding",
    [
        (dict(divide=False), "total over all episodes"),
        (dict(last_reward=False), "misses its last reward"),
        (dict(episodes=1), "first episode's return only"),
    ],
)
def test_a_wrong_loop_gets_a_hint_about_its_misunderstanding(cartpole, mistake, misunderstanding):
    def loop(env, policy, num_episodes):
        return episodes_loop(env, policy, num_episodes, **mistake)

    feedback = selfcheck.average_return_function(loop, cartpole, always_left(cartpole), 3)
    assert not feedback and misunderstanding in feedback.message


def test_answers_that_let_the_environment_reset_itself_pass(cartpole):
    # TF-Agents environments reset on the step after a LAST one: a driver relies on it,
    # and so may a loop that resets once; both play num_episodes episodes.
    from tf_agents.drivers import py_driver
    from tf_agents.metrics import py_metrics

    def with_a_driver(env, policy, num_episodes):
        metric = py_metrics.AverageReturnMetric(buffer_size=num_episodes)
        py_driver.PyDriver(env, policy, [metric], max_episodes=num_episodes).run(env.reset())
        return metric.result()

    def one_reset(env, policy, num_episodes):
        time_step, total = env.reset(), 0.0
        totals: list[float] = []
        while len(totals) < num_episodes:
            time_step = env.step(policy.action(time_step).action)
            total += float(time_step.reward)
            if time_step.is_last():
                totals.append(total)
                total = 0.0
        return sum(totals) / num_episodes

    for answer in (with_a_driver, one_reset):
        feedback = selfcheck.average_return_function(answer, cartpole, always_left(cartpole), 3)
        assert feedback, f"{answer.__name__}: {feedback.message}"


def test_a_loop_that_plays_one_episode_fails_even_if_its_number_is_the_average(cartpole):
    # A trained policy scores 200 in every episode: one episode then gives the average.
    cartpole.seed(1)
    average = episodes_loop(cartpole, always_left(cartpole), 3)

    def one_episode(env, policy, num_episodes):
        env.reset()
        return average

    feedback = selfcheck.average_return_function(one_episode, cartpole, always_left(cartpole), 3)
    assert not feedback and "did not play any episode to its end" in feedback.message


def balancing(env):
    """A deterministic policy that keeps CartPole's pole up for all 200 steps of every
    episode, as a trained agent often does: then every episode has the same return."""
    from tf_agents.policies import py_policy
    from tf_agents.trajectories import policy_step

    class Balancing(py_policy.PyPolicy):
        def _action(self, time_step, policy_state):
            angle, angular_velocity = time_step.observation[2], time_step.observation[3]
            return policy_step.PolicyStep(np.array(int(angle + angular_velocity > 0), np.int64))

    return Balancing(env.time_step_spec(), env.action_spec())


def last_episode_only(env, policy, num_episodes):
    for _ in range(num_episodes):
        time_step, total = env.reset(), 0.0
        while not time_step.is_last():
            time_step = env.step(policy.action(time_step).action)
            total += float(time_step.reward)
    return total


@pytest.mark.parametrize("num_episodes", [2, 10])
def test_a_wrong_loop_fails_even_when_every_episode_of_the_policy_scores_the_same(
    cartpole, num_episodes
):
    # With a policy that scores 200 every time, the last episode's return is the average;
    # the check also plays a policy whose episodes differ in length, and catches it.
    cartpole.seed(1)
    assert {
        total for total, _ in selfcheck.dqn._episode_returns(cartpole, balancing(cartpole), 3)
    } == {200.0}
    right = selfcheck.average_return_function(
        episodes_loop, cartpole, balancing(cartpole), num_episodes
    )
    assert right, right.message
    wrong = selfcheck.average_return_function(
        last_episode_only, cartpole, balancing(cartpole), num_episodes
    )
    assert not wrong and "last episode's return only" in wrong.message


def test_a_loop_that_never_reaches_an_episodes_end_is_told_so(cartpole):
    def never_ends(env, policy, num_episodes):
        time_step = env.reset()
        while time_step.is_last():  # the condition inverted: no step is taken
            time_step = env.step(policy.action(time_step).action)
        return 0.0

    feedback = selfcheck.average_return_function(never_ends, cartpole, always_left(cartpole), 3)
    assert not feedback and "did not play any episode to its end" in feedback.message


def test_a_loop_that_fails_or_returns_nothing_gets_feedback_not_a_crash(cartpole):
    def broken(env, policy, num_episodes):
        raise KeyError("oops")

    assert (
        "raised KeyError"
        in selfcheck.average_return_function(broken, cartpole, always_left(cartpole), 2).message
    )
    for not_a_number in (None, [9.0, 10.0]):
        assert (
            "return the average as a number"
            in selfcheck.average_return_function(
                lambda env, policy, n: not_a_number, cartpole, always_left(cartpole), 2
            ).message
        )


# Lesson 02, exercise 2: num_steps for an n-step update, as DqnAgent itself counts them.
def test_n_step_num_steps_agrees_with_dqn_agents_train_sequence_length(cartpole):
    from tf_agents.agents.dqn import dqn_agent
    from tf_agents.networks import q_network
    from tf_agents.specs import tensor_spec

    time_step_spec = tensor_spec.from_spec(cartpole.time_step_spec())
    action_spec = tensor_spec.from_spec(cartpole.action_spec())
    agent = dqn_agent.DqnAgent(
        time_step_spec,
        action_spec,
        q_network=q_network.QNetwork(time_step_spec.observation, action_spec),
        optimizer=tf.keras.optimizers.Adam(),
        n_step_update=3,
    )
    assert selfcheck.n_step_num_steps(agent.train_sequence_length, n_step_update=3)


@pytest.mark.parametrize(
    "answer, misunderstanding",
    [
        (2, "what a one-step update needs"),
        (3, "one step short"),
        (7, "more than the update reads"),
        ("4", "whole number"),
    ],
)
def test_a_wrong_num_steps_gets_a_hint(answer, misunderstanding):
    feedback = selfcheck.n_step_num_steps(answer, n_step_update=3)
    assert not feedback and misunderstanding in feedback.message


# Lesson 02, exercise 3: the size of a Q-network, as Keras counts it.
def test_q_network_parameters_agree_with_keras(cartpole):
    from tf_agents.networks import sequential
    from tf_agents.specs import tensor_spec

    net = sequential.Sequential(
        [tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(2)]
    )
    net.create_variables(tensor_spec.from_spec(cartpole.observation_spec()))
    count = int(sum(tf.size(v) for v in net.trainable_variables))
    assert selfcheck.q_network_parameters(
        count, observation_size=4, fc_layer_params=(32,), num_actions=2
    )


@pytest.mark.parametrize(
    "answer, misunderstanding",
    [
        (4 * 32 + 32 * 2, "every unit also has a bias"),
        (4 * 32 + 32, "add the output layer"),
        (5, "count layer by layer"),
    ],
)
def test_a_wrong_parameter_count_gets_a_hint(answer, misunderstanding):
    feedback = selfcheck.q_network_parameters(
        answer, observation_size=4, fc_layer_params=(32,), num_actions=2
    )
    assert not feedback and misunderstanding in feedback.message


# Lesson 03, exercise 1: four actors insert 4 × 250 pairs/s, the learner samples 250 × 256/s.
RATES = dict(
    actors=4, inserts_per_actor_per_second=250, gradient_steps_per_second=250, batch_size=256
)


@pytest.fixture(params=["reverb", "stand-in"])
def rate_limiters(request):
    """Reverb's limiters, and the in-process stand-in's that Colab learners build."""
    if request.param == "reverb":
        return pytest.importorskip("reverb").rate_limiters
    from course_helpers.replay.standin import STAND_INS

    return STAND_INS["reverb"].rate_limiters


def test_a_ratio_of_samples_to_inserts_passes(rate_limiters):
    limiter = rate_limiters.SampleToInsertRatio(
        samples_per_insert=250 * 256 / (4 * 250), min_size_to_sample=1_000, error_buffer=1_000
    )
    assert selfcheck.rate_limiter(limiter, **RATES)


@pytest.mark.parametrize(
    "ratio, misunderstanding",
    [
        (250 / 1_000, "Reverb counts sampled items"),
        (1_000 / 64_000, "upside down"),
        (64_000 / 250, "count the inserts of all of them"),
        (256 / 2, "this lesson's ratio"),
        (2.0, "then divide"),
    ],
)
def test_a_wrong_ratio_gets_a_hint_and_never_the_ratio(rate_limiters, ratio, misunderstanding):
    limiter = rate_limiters.SampleToInsertRatio(
        samples_per_insert=ratio, min_size_to_sample=1_000, error_buffer=1_000
    )
    feedback = selfcheck.rate_limiter(limiter, **RATES)
    assert not feedback and misunderstanding in feedback.message
    assert "64" not in feedback.message and "64000" not in feedback.message


def test_the_right_ratio_with_an_error_buffer_under_one_batch_is_not_yet_right(rate_limiters):
    # The exercise asks for a few batches' worth: with less, both sides stall at every jitter.
    limiter = rate_limiters.SampleToInsertRatio(
        samples_per_insert=64.0, min_size_to_sample=1_000, error_buffer=100
    )
    feedback = selfcheck.rate_limiter(limiter, **RATES)
    assert not feedback and "less than one batch of 256" in feedback.message


def test_the_right_answer_is_told_what_the_follow_up_questions_ask(rate_limiters):
    limiter = rate_limiters.SampleToInsertRatio(
        samples_per_insert=64.0, min_size_to_sample=1_000, error_buffer=1_000
    )
    message = selfcheck.rate_limiter(limiter, **RATES).message
    assert "the actors would wait" in message and "500 inserts per second" in message


def test_min_size_is_told_why_it_does_not_keep_the_pace(rate_limiters):
    feedback = selfcheck.rate_limiter(rate_limiters.MinSize(1), **RATES)
    assert not feedback and "MinSize stops nothing" in feedback.message
    assert not selfcheck.rate_limiter(..., **RATES)


# Lesson 03, exercises 2 and 3, compared with the networks TF-Agents builds for Minitaur's specs.
OBSERVATION = tf.TensorSpec([28], tf.float32)
ACTION = tf.TensorSpec([8], tf.float32)


def bounded(spec):
    from tf_agents.specs import tensor_spec

    return tensor_spec.BoundedTensorSpec(spec.shape, spec.dtype, minimum=-1.0, maximum=1.0)


def test_actor_outputs_agree_with_the_tanh_normal_projection():
    from tf_agents.agents.sac import tanh_normal_projection_network
    from tf_agents.networks import actor_distribution_network

    net = actor_distribution_network.ActorDistributionNetwork(
        OBSERVATION,
        bounded(ACTION),
        fc_layer_params=(16,),
        continuous_projection_net=tanh_normal_projection_network.TanhNormalProjectionNetwork,
    )
    net.create_variables()
    last_kernel = [v for v in net.trainable_variables if "kernel" in v.name][-1]
    assert selfcheck.actor_outputs(int(last_kernel.shape[-1]), ACTION)
    # A count computed with NumPy or written as 16.0 is still the right count.
    assert selfcheck.actor_outputs(np.int64(last_kernel.shape[-1]), ACTION)
    assert selfcheck.actor_outputs(float(last_kernel.shape[-1]), ACTION)


@pytest.mark.parametrize(
    "answer, misunderstanding",
    [
        (8, "would be a fixed action"),
        (1, "not of a single number"),
        (28, "for each action dimension"),
        (16.5, "whole number"),
        (True, "whole number"),
    ],
)
def test_a_wrong_actor_output_count_gets_a_hint(answer, misunderstanding):
    feedback = selfcheck.actor_outputs(answer, ACTION)
    assert not feedback and misunderstanding in feedback.message and "16" not in feedback.message


def test_critic_input_size_agrees_with_the_critic_network():
    from tf_agents.agents.ddpg import critic_network

    net = critic_network.CriticNetwork((OBSERVATION, ACTION), joint_fc_layer_params=(16,))
    net.create_variables()
    first_kernel = [v for v in net.trainable_variables if "kernel" in v.name][0]
    assert selfcheck.critic_input_size(int(first_kernel.shape[0]), OBSERVATION, ACTION)


@pytest.mark.parametrize(
    "answer, misunderstanding",
    [
        (28, "the observation alone"),
        (8, "the action alone"),
        (224, "not multiplied"),
        (256, "add up the numbers"),
    ],
)
def test_a_wrong_critic_input_size_gets_a_hint(answer, misunderstanding):
    feedback = selfcheck.critic_input_size(answer, OBSERVATION, ACTION)
    assert not feedback and misunderstanding in feedback.message and "36" not in feedback.message


@pytest.mark.parametrize("execution", ["validate", "autograde"])
def test_while_nbgrader_runs_the_notebook_a_failed_check_fails_its_cell(monkeypatch, execution):
    monkeypatch.setenv("NBGRADER_EXECUTION", execution)
    with pytest.raises(AssertionError, match="✘ Not yet: you counted the weights"):
        selfcheck.q_network_parameters(
            4 * 32 + 32 * 2, observation_size=4, fc_layer_params=(32,), num_actions=2
        )
    assert selfcheck.q_network_parameters(
        (4 * 32 + 32) + (32 * 2 + 2), observation_size=4, fc_layer_params=(32,), num_actions=2
    )
