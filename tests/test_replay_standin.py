"""course_helpers.replay.standin: the in-process stand-in for Reverb.

The stand-in must run the lessons' Reverb code unchanged and store exactly the items
Reverb stores. Where Reverb is installed, one test feeds the same steps to both and
compares what each table holds.
"""

import collections
import types

import numpy as np
import pytest

from course_helpers import replay

needs_reverb = pytest.mark.skipif(
    not replay.reverb_available(), reason="dm-reverb is not installed"
)

FIRST, MID, LAST = 0, 1, 2


@pytest.fixture(scope="module")
def standin():
    """The three names as a lesson imports them under COURSE_REPLAY=inprocess."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COURSE_REPLAY", "inprocess")
        from course_helpers.replay import reverb, reverb_replay_buffer, reverb_utils

        return types.SimpleNamespace(
            reverb=reverb, reverb_replay_buffer=reverb_replay_buffer, reverb_utils=reverb_utils
        )


def trajectory_spec():
    """Spec of the hand-made steps below: observation holds the step's index in the stream."""
    import tensorflow as tf
    from tf_agents.trajectories import trajectory

    scalar = lambda dtype: tf.TensorSpec([], dtype)  # noqa: E731
    return trajectory.Trajectory(
        step_type=scalar(tf.int32),
        observation=tf.TensorSpec([1], tf.float32),
        action=scalar(tf.int64),
        policy_info=(),
        next_step_type=scalar(tf.int32),
        reward=scalar(tf.float32),
        discount=scalar(tf.float32),
    )


def stream(episode_lengths, unfinished=0):
    """Steps as a PyDriver hands them to observers: each episode's transitions, then its
    boundary step (LAST -> FIRST), then `unfinished` steps of an episode still running."""
    from tf_agents.trajectories import trajectory

    steps: list[trajectory.Trajectory] = []

    def add(step_type, next_step_type):
        steps.append(
            trajectory.Trajectory(
                step_type=np.asarray(step_type, np.int32),
                observation=np.asarray([len(steps)], np.float32),
                action=np.asarray(len(steps) % 2, np.int64),
                policy_info=(),
                next_step_type=np.asarray(next_step_type, np.int32),
                reward=np.asarray(1.0, np.float32),
                discount=np.asarray(1.0, np.float32),
            )
        )

    for length in episode_lengths:
        for k in range(length):
            add(FIRST if k == 0 else MID, LAST if k == length - 1 else MID)
        add(LAST, FIRST)
    for k in range(unfinished):
        add(FIRST if k == 0 else MID, MID)
    return steps


def make_table(reverb, spec, name="uniform_table", max_size=1000, min_size=1, **kwargs):
    """A table as the lessons make one."""
    from tf_agents.specs import tensor_spec

    return reverb.Table(
        name,
        max_size=max_size,
        sampler=kwargs.pop("sampler", reverb.selectors.Uniform()),
        remover=reverb.selectors.Fifo(),
        rate_limiter=kwargs.pop("rate_limiter", reverb.rate_limiters.MinSize(min_size)),
        signature=tensor_spec.add_outer_dim(tensor_spec.from_spec(spec)),
        **kwargs,
    )


def standin_pipeline(standin, spec=None, sequence_length=2, stride_length=1, **table):
    """(server, buffer, observer) of the stand-in, wired as lessons 02 and 03 wire them."""
    spec = spec or trajectory_spec()
    server = standin.reverb.Server([make_table(standin.reverb, spec, **table)], port=None)
    buffer = standin.reverb_replay_buffer.ReverbReplayBuffer(
        spec, table_name="uniform_table", sequence_length=sequence_length, local_server=server
    )
    observer = standin.reverb_utils.ReverbAddTrajectoryObserver(
        buffer.py_client,
        "uniform_table",
        sequence_length=sequence_length,
        stride_length=stride_length,
    )
    return server, buffer, observer


def standin_items(standin, steps, sequence_length, stride_length=1, max_size=1000):
    """Feed `steps` to the stand-in observer; return (stored items as tuples of step
    indices, found by sampling until every one has surely shown up, and num_frames())."""
    server, buffer, observer = standin_pipeline(
        standin, sequence_length=sequence_length, stride_length=stride_length, max_size=max_size
    )
    for step in steps:
        observer(step)
    count = buffer.num_frames()
    items = set()
    if count:
        dataset = buffer.as_dataset(sample_batch_size=1024, num_steps=sequence_length)
        for experience, _ in dataset.take(4):
            items |= {tuple(int(i) for i in row) for row in experience.observation[..., 0].numpy()}
    observer.close()
    server.stop()
    return items, count


# --- The stand-in runs the lessons' code ----------------------------------------------------


@pytest.fixture(scope="module")
def dqn_agent(cartpole):
    """A small DQN agent for CartPole (one hidden layer of 16 units)."""
    import tensorflow as tf
    from tf_agents.agents.dqn import dqn_agent
    from tf_agents.networks import q_network
    from tf_agents.specs import tensor_spec

    time_step_spec = tensor_spec.from_spec(cartpole.time_step_spec())
    action_spec = tensor_spec.from_spec(cartpole.action_spec())
    agent = dqn_agent.DqnAgent(
        time_step_spec,
        action_spec,
        q_network=q_network.QNetwork(
            time_step_spec.observation, action_spec, fc_layer_params=(16,)
        ),
        optimizer=tf.compat.v1.train.AdamOptimizer(1e-3),
        train_step_counter=tf.Variable(0, dtype=tf.int64),
    )
    agent.initialize()
    return agent


def lesson_02_pipeline(reverb, reverb_replay_buffer, reverb_utils, agent, max_size=1000):
    """The table, server, buffer and observer, as lesson 02 builds them."""
    from tf_agents.specs import tensor_spec

    table_name = "uniform_table"
    table = reverb.Table(
        table_name,
        max_size=max_size,
        sampler=reverb.selectors.Uniform(),
        remover=reverb.selectors.Fifo(),
        rate_limiter=reverb.rate_limiters.MinSize(1),
        signature=tensor_spec.add_outer_dim(tensor_spec.from_spec(agent.collect_data_spec), 2),
    )
    reverb_server = reverb.Server([table], port=None)
    replay_buffer = reverb_replay_buffer.ReverbReplayBuffer(
        agent.collect_data_spec,
        table_name=table_name,
        sequence_length=2,
        local_server=reverb_server,
    )
    rb_observer = reverb_utils.ReverbAddTrajectoryObserver(
        replay_buffer.py_client, table_name, sequence_length=2
    )
    return reverb_server, replay_buffer, rb_observer


def lesson_02_dataset(reverb, reverb_server, batch_size=64):
    """Lesson 02's dataset: Reverb's TrajectoryDataset, batched and prefetched."""
    import tensorflow as tf

    return (
        reverb.TrajectoryDataset.from_table_signature(
            server_address=f"localhost:{reverb_server.port}",
            table="uniform_table",
            max_in_flight_samples_per_worker=3 * batch_size,
        )
        .batch(batch_size, drop_remainder=True)
        .prefetch(tf.data.AUTOTUNE)
    )


def test_dqn_trains_on_cartpole_from_the_stand_in_as_lesson_02_writes_it(
    standin, cartpole, random_policy, dqn_agent
):
    import tensorflow as tf
    from tf_agents.drivers import py_driver
    from tf_agents.trajectories import trajectory

    agent = dqn_agent
    reverb_server, replay_buffer, rb_observer = lesson_02_pipeline(
        standin.reverb, standin.reverb_replay_buffer, standin.reverb_utils, agent
    )
    assert isinstance(reverb_server.port, int)
    seen: list[trajectory.Trajectory] = []
    py_driver.PyDriver(cartpole, random_policy, [rb_observer, seen.append], max_steps=200).run(
        cartpole.reset()
    )

    # One pair per observed step, less the first step of each episode begun.
    episodes_begun = sum(int(step.step_type) == FIRST for step in seen)
    assert replay_buffer.num_frames() == len(seen) - episodes_begun
    assert isinstance(replay_buffer.num_frames(), int)

    sample = next(iter(lesson_02_dataset(standin.reverb, reverb_server)))
    experience, info = sample.data, sample.info
    assert experience.observation.shape == (64, 2, 4)
    assert experience.action.shape == experience.reward.shape == (64, 2)
    assert info._fields == ("key", "probability", "table_size", "priority", "times_sampled")
    assert [t.dtype for t in info] == [tf.uint64, tf.float64, tf.int64, tf.float64, tf.int32]
    assert all(t.shape == (64,) for t in info)  # one per item, as Reverb's TrajectoryDataset
    assert np.all(info.table_size.numpy() == replay_buffer.num_frames())
    # A step and its successor, never across an episode boundary.
    assert np.array_equal(experience.next_step_type[:, 0], experience.step_type[:, 1])

    # Lesson 02's training function: several gradient steps per call, batches read in the graph.
    iterator = iter(lesson_02_dataset(standin.reverb, reverb_server))

    @tf.function
    def train_steps(num_steps):
        loss = tf.constant(0.0)
        for _ in tf.range(num_steps):
            loss = agent.train(next(iterator).data).loss
        return loss

    before = int(agent.train_step_counter.numpy())
    assert np.isfinite(train_steps(3).numpy())
    assert int(agent.train_step_counter.numpy()) == before + 3
    rb_observer.close()
    reverb_server.stop()


@needs_reverb
def test_stand_in_trajectory_dataset_has_reverbs_element_structure(
    standin, cartpole, random_policy, dqn_agent
):
    import reverb
    from tf_agents.drivers import py_driver
    from tf_agents.replay_buffers import reverb_replay_buffer, reverb_utils

    specs = {}
    for name, modules in (
        ("reverb", (reverb, reverb_replay_buffer, reverb_utils)),
        ("stand-in", (standin.reverb, standin.reverb_replay_buffer, standin.reverb_utils)),
    ):
        server, buffer, observer = lesson_02_pipeline(*modules, dqn_agent)
        py_driver.PyDriver(cartpole, random_policy, [observer], max_steps=100).run(cartpole.reset())
        observer.flush()
        element = lesson_02_dataset(modules[0], server).element_spec
        specs[name] = (
            type(element).__name__,
            element.info._fields,
            [(s.shape.as_list(), s.dtype) for s in tf_flatten(element)],
        )
        observer.close()
        server.stop()
    assert specs["stand-in"] == specs["reverb"]


def tf_flatten(structure):
    import tensorflow as tf

    return tf.nest.flatten(structure)


def test_trajectory_dataset_names_the_address_it_cannot_find(standin):
    with pytest.raises(ValueError, match="localhost:999999"):
        standin.reverb.TrajectoryDataset.from_table_signature(
            server_address="localhost:999999",
            table="uniform_table",
            max_in_flight_samples_per_worker=8,
        )


def test_actor_and_learner_of_lesson_03_run_on_the_stand_in(
    standin, cartpole, random_policy, dqn_agent, tmp_path
):
    from tf_agents.specs import tensor_spec
    from tf_agents.train import actor, learner
    from tf_agents.train.utils import strategy_utils, train_utils

    reverb = standin.reverb
    table = reverb.Table(
        "uniform_table",
        max_size=1000,
        sampler=reverb.selectors.Uniform(),
        remover=reverb.selectors.Fifo(),
        rate_limiter=reverb.rate_limiters.SampleToInsertRatio(
            samples_per_insert=3.0, min_size_to_sample=10, error_buffer=3.0
        ),
        signature=tensor_spec.add_outer_dim(tensor_spec.from_spec(dqn_agent.collect_data_spec), 2),
    )
    reverb_server = reverb.Server([table], port=None)
    replay_buffer = standin.reverb_replay_buffer.ReverbReplayBuffer(
        dqn_agent.collect_data_spec,
        table_name="uniform_table",
        sequence_length=2,
        local_server=reverb_server,
    )
    rb_observer = standin.reverb_utils.ReverbAddTrajectoryObserver(
        replay_buffer.py_client, "uniform_table", sequence_length=2, stride_length=1
    )
    dataset = (
        reverb.TrajectoryDataset.from_table_signature(
            server_address=f"localhost:{reverb_server.port}",
            table="uniform_table",
            max_in_flight_samples_per_worker=32,
        )
        .batch(16, drop_remainder=True)
        .prefetch(50)
    )
    train_step = train_utils.create_train_step()
    collector = actor.Actor(
        cartpole, random_policy, train_step, steps_per_run=50, observers=[rb_observer]
    )
    collector.run()
    assert replay_buffer.num_frames() >= 10
    agent_learner = learner.Learner(
        str(tmp_path),
        train_step,
        dqn_agent,
        experience_dataset_fn=lambda: dataset,
        strategy=strategy_utils.get_strategy(tpu=False, use_gpu=False),
        use_reverb_v2=True,
    )
    loss_info = agent_learner.run(iterations=2)
    assert np.isfinite(loss_info.loss.numpy())
    rb_observer.close()
    reverb_server.stop()


# --- Items: what the observer writes, and what the table keeps -------------------------------


def test_sampled_pairs_never_span_two_episodes(standin, cartpole, random_policy):
    """The real observer restarts its count after each boundary step (LAST -> FIRST): a
    boundary step can end an item but never starts one, and every item's steps follow on."""
    from tf_agents.drivers import py_driver

    spec = trajectory_spec()._replace(
        observation=cartpole.observation_spec(), action=cartpole.action_spec()
    )
    server, buffer, observer = standin_pipeline(standin, spec)
    py_driver.PyDriver(cartpole, random_policy, [observer], max_steps=300).run(cartpole.reset())
    experience, _ = next(iter(buffer.as_dataset(sample_batch_size=2048, num_steps=2)))
    step_type, next_step_type = experience.step_type.numpy(), experience.next_step_type.numpy()
    assert np.any(step_type[:, 1] == LAST), "the sample should hold some episode ends"
    assert not np.any(step_type[:, 0] == LAST)
    assert not np.any(step_type[:, 1] == FIRST)
    assert np.array_equal(next_step_type[:, 0], step_type[:, 1])
    server.stop()


def test_stride_and_sequence_length_3_write_the_items_reverb_writes(standin):
    # Episodes of 4, 2 and 1 transitions: steps 0-4, 5-7 and 8-9 (each ends with its boundary).
    steps = stream([4, 2, 1])
    assert standin_items(standin, steps, 3, stride_length=1) == (
        {(0, 1, 2), (1, 2, 3), (2, 3, 4), (5, 6, 7)},
        4,
    )
    assert standin_items(standin, steps, 3, stride_length=2) == (
        {(0, 1, 2), (2, 3, 4), (5, 6, 7)},
        3,
    )
    assert standin_items(standin, steps, 2, stride_length=2) == (
        {(0, 1), (2, 3), (5, 6), (8, 9)},
        4,
    )


def test_a_full_table_evicts_the_oldest_items_first(standin):
    items, count = standin_items(standin, stream([], unfinished=6), 2, max_size=3)
    assert count == 3
    assert items == {(2, 3), (3, 4), (4, 5)}


def test_sample_info_keys_are_insertion_numbers_of_items_still_stored(standin):
    server, buffer, observer = standin_pipeline(standin, max_size=3)
    for step in stream([], unfinished=6):
        observer(step)
    experience, info = next(iter(buffer.as_dataset(sample_batch_size=256)))
    assert set(info.key.numpy()[:, 0]) == {2, 3, 4}
    assert np.array_equal(info.key.numpy()[:, 0], experience.observation.numpy()[:, 0, 0])
    assert np.allclose(info.probability.numpy(), 1 / 3)


def test_items_stay_whole_when_sampled_in_the_background_while_the_observer_writes(standin):
    """prefetch samples in tf.data threads while new items overwrite the oldest ones."""
    server, buffer, observer = standin_pipeline(standin, max_size=20)
    steps = stream([], unfinished=1500)
    observer(steps[0]), observer(steps[1])
    iterator = iter(
        buffer.as_dataset(num_parallel_calls=3, sample_batch_size=64, num_steps=2).prefetch(3)
    )
    batches = []
    for i, step in enumerate(steps[2:]):
        observer(step)
        if i % 10 == 0:
            batches.append(next(iterator)[0])
    for experience in batches:
        index = experience.observation.numpy()[..., 0].astype(np.int64)
        assert np.all(index[:, 1] == index[:, 0] + 1)
        assert np.all(experience.action.numpy() == index % 2)
    server.stop()


@needs_reverb
@pytest.mark.parametrize("sequence_length, stride_length", [(2, 1), (3, 1), (3, 2), (2, 2)])
def test_stand_in_stores_the_same_items_as_real_reverb(standin, sequence_length, stride_length):
    import reverb
    import tensorflow as tf
    from tf_agents.replay_buffers import reverb_utils

    steps = stream([5, 1, 2, 7, 3], unfinished=4)
    spec = trajectory_spec()
    # A FIFO table read once over gives back every item it holds, in order.
    server = reverb.Server(
        [make_table(reverb, spec, "fifo", sampler=reverb.selectors.Fifo(), max_times_sampled=1)],
        port=None,
    )
    client = reverb.Client(f"localhost:{server.port}")
    observer = reverb_utils.ReverbAddTrajectoryObserver(
        client, "fifo", sequence_length=sequence_length, stride_length=stride_length
    )
    for step in steps:
        observer(step)
    observer.flush()
    count = client.server_info()["fifo"].current_size
    real = collections.Counter(
        tuple(int(i) for i in tf.nest.pack_sequence_as(spec, list(sample.data)).observation[:, 0])
        for sample in client.sample("fifo", num_samples=count, emit_timesteps=False)
    )
    observer.close()
    server.stop()

    items, standin_count = standin_items(standin, steps, sequence_length, stride_length)
    assert standin_count == count == sum(real.values())
    assert max(real.values()) == 1  # no duplicates, so a set of items is the whole multiset
    assert items == set(real)


# --- Errors a learner may meet ---------------------------------------------------------------


def sample_too_early(standin, message):
    """Sample a table that needs 5 items before it has any; expect ``message``."""
    import tensorflow as tf

    server, buffer, observer = standin_pipeline(standin, min_size=5)
    dataset = buffer.as_dataset(sample_batch_size=8, num_steps=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        next(iter(dataset))
    return server, dataset, observer


def test_sampling_below_the_rate_limiters_min_size_says_to_collect_more(standin):
    import tensorflow as tf

    message = r"'uniform_table' holds 0 items.*at least 5.*Collect more steps"
    server, dataset, observer = sample_too_early(standin, message)
    for step in stream([], unfinished=4):
        observer(step)
    with pytest.raises(tf.errors.InvalidArgumentError, match="holds 3 items"):
        next(iter(dataset))
    for step in stream([], unfinished=6):
        observer(step)
    experience, _ = next(iter(dataset))  # 3 + 5 items: enough now, and nothing stayed locked
    assert experience.observation.shape == (8, 2, 1)


def test_the_stand_ins_errors_speak_the_lessons_language(standin, monkeypatch):
    from course_helpers import i18n

    monkeypatch.setattr(i18n, "_language", "fr")
    message = r"La table 'uniform_table' contient 0 entrées.*au moins 5.*Collectez"
    server, _, _ = sample_too_early(standin, message)
    server.stop()
    with pytest.raises(RuntimeError, match="Ce serveur Reverb, qui tournait dans ce processus"):
        standin.reverb.TrajectoryDataset.from_table_signature(
            f"localhost:{server.port}", "uniform_table", max_in_flight_samples_per_worker=8
        )


def test_unknown_and_duplicate_table_names_list_the_known_tables(standin):
    spec = trajectory_spec()
    table = make_table(standin.reverb, spec)
    server = standin.reverb.Server([table], port=None)
    with pytest.raises(KeyError, match=r"No table named 'replay'.*Known tables: 'uniform_table'"):
        standin.reverb_replay_buffer.ReverbReplayBuffer(
            spec, table_name="replay", sequence_length=2, local_server=server
        )
    with pytest.raises(ValueError, match="same name: uniform_table"):
        standin.reverb.Server([table, make_table(standin.reverb, spec)], port=None)


@pytest.mark.parametrize("selector", ["Prioritized", "Lifo", "MaxHeap"])
def test_unsupported_samplers_say_what_is_supported(standin, selector):
    spec = trajectory_spec()
    sampler = getattr(standin.reverb.selectors, selector)()
    with pytest.raises(NotImplementedError, match=r"Uniform\(\).*Fifo\(\).*Python 3.11"):
        make_table(standin.reverb, spec, sampler=sampler)


def test_as_dataset_rejects_what_the_stand_in_cannot_do(standin):
    spec = trajectory_spec()
    server = standin.reverb.Server([make_table(standin.reverb, spec)], port=None)
    buffer = standin.reverb_replay_buffer.ReverbReplayBuffer(
        spec, table_name="uniform_table", sequence_length=2, local_server=server
    )
    with pytest.raises(ValueError, match=r"num_steps must be None or .*\(2\), not 1"):
        buffer.as_dataset(sample_batch_size=8, num_steps=1)
    with pytest.raises(ValueError, match="needs sample_batch_size"):
        buffer.as_dataset(num_steps=2)
    with pytest.raises(ValueError, match="single deterministic pass"):
        buffer.as_dataset(sample_batch_size=8, single_deterministic_pass=True)


# --- Checkpoints, as lesson 3 uses them to resume a run --------------------------------------


def checkpointed_pipeline(standin, path, max_size=3):
    """A server with a checkpointer, wired as lesson 3 wires it."""
    spec = trajectory_spec()
    checkpointer = standin.reverb.checkpointers.DefaultCheckpointer(str(path))
    table = make_table(standin.reverb, spec, max_size=max_size)
    server = standin.reverb.Server([table], port=None, checkpointer=checkpointer)
    buffer = standin.reverb_replay_buffer.ReverbReplayBuffer(
        spec, table_name="uniform_table", sequence_length=2, local_server=server
    )
    observer = standin.reverb_utils.ReverbAddTrajectoryObserver(
        buffer.py_client, "uniform_table", sequence_length=2
    )
    return server, buffer, observer


def test_a_new_server_with_a_checkpointer_gets_the_saved_table_back(standin, tmp_path):
    """As Reverb's: the client's checkpoint() saves, a server that starts loads the newest
    checkpoint, and only the newest is kept. The ring's order survives too: the next item
    evicts the oldest."""
    server, buffer, observer = checkpointed_pipeline(standin, tmp_path)
    for step in stream([], unfinished=6):
        observer(step)
    buffer.py_client.checkpoint()
    saved = buffer.py_client.checkpoint()
    assert [p.name for p in tmp_path.iterdir()] == [saved.rsplit("/", 1)[1]]
    server.stop()

    server, buffer, observer = checkpointed_pipeline(standin, tmp_path)
    assert buffer.num_frames() == 3
    experience, info = next(iter(buffer.as_dataset(sample_batch_size=256)))
    assert set(info.key.numpy()[:, 0]) == {2, 3, 4}
    steps = stream([], unfinished=8)
    for step in steps[6:]:
        observer(step)
    experience, info = next(iter(buffer.as_dataset(sample_batch_size=256)))
    # The new item (6, 7) took the place of the oldest, (2, 3).
    assert set(experience.observation.numpy()[:, 0, 0]) == {3.0, 4.0, 6.0}


def test_a_server_without_a_checkpointer_says_how_to_give_it_one(standin):
    server, buffer, observer = standin_pipeline(standin)
    with pytest.raises(RuntimeError, match="DefaultCheckpointer"):
        buffer.py_client.checkpoint()


def test_a_checkpoint_of_other_items_is_refused_with_a_way_out(standin, tmp_path):
    server, buffer, observer = checkpointed_pipeline(standin, tmp_path)
    for step in stream([], unfinished=4):
        observer(step)
    buffer.py_client.checkpoint()
    server.stop()
    import tensorflow as tf

    other = trajectory_spec()._replace(observation=tf.TensorSpec([2], tf.float32))
    checkpointer = standin.reverb.checkpointers.DefaultCheckpointer(str(tmp_path))
    table = make_table(standin.reverb, other, max_size=3)
    server = standin.reverb.Server([table], port=None, checkpointer=checkpointer)
    with pytest.raises(ValueError, match="new folder"):
        standin.reverb_replay_buffer.ReverbReplayBuffer(
            other, table_name="uniform_table", sequence_length=2, local_server=server
        )
