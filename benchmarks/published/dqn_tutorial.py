"""The published TF-Agents DQN tutorial on CartPole, as a plain script: the baseline of lesson 2.

    .venv/bin/python benchmarks/published/dqn_tutorial.py                 # in full, as published
    .venv/bin/python benchmarks/published/dqn_tutorial.py --iterations 2000 --eval-interval 2000

`course bench --only baseline` runs it in full and compares its time with lesson 2's.
It takes the tutorial's steps in the tutorial's order, with its hyperparameters: the
Q-network from two Dense layers, `DqnAgent`, a Reverb table read through
`ReverbReplayBuffer.as_dataset`, one collected step and one gradient step per iteration
(`PyDriver` and `common.function(agent.train)`), and the tutorial's own evaluation, which
plays its episodes one after the other on a `TFPyEnvironment` with `agent.policy` called
eagerly, 10 episodes every 1,000 iterations. Left out: the plot and the video, which the
benchmark also skips in the lesson. Environments and TensorFlow are seeded so that runs
can be repeated; the tutorial itself does not seed.

The last line printed is ``BENCHMARK {json}``: the seconds spent importing, setting up,
in the loop and in its evaluations, the iterations, each evaluation's step and return, and
peak memory (MiB).
"""

from __future__ import annotations

import time

from common import arguments, report


def main() -> None:
    args = arguments(__doc__, iterations=20_000, eval_interval=1_000, eval_episodes=10)

    import numpy as np
    import reverb
    import tensorflow as tf
    from tf_agents.agents.dqn import dqn_agent
    from tf_agents.drivers import py_driver
    from tf_agents.environments import suite_gym, tf_py_environment
    from tf_agents.networks import sequential
    from tf_agents.policies import py_tf_eager_policy, random_tf_policy
    from tf_agents.replay_buffers import reverb_replay_buffer, reverb_utils
    from tf_agents.specs import tensor_spec
    from tf_agents.utils import common

    imported = time.perf_counter()
    tf.random.set_seed(args.seed)
    np.random.seed(args.seed)

    # The tutorial's hyperparameters (those it sets; the rest are DqnAgent's defaults).
    initial_collect_steps = 100
    collect_steps_per_iteration = 1
    replay_buffer_max_length = 100_000
    batch_size = 64
    learning_rate = 1e-3
    log_interval = 200

    train_py_env = suite_gym.load("CartPole-v0")
    eval_py_env = suite_gym.load("CartPole-v0")
    train_py_env.seed(args.seed)
    eval_py_env.seed(args.seed + 1)
    train_env = tf_py_environment.TFPyEnvironment(train_py_env)
    eval_env = tf_py_environment.TFPyEnvironment(eval_py_env)

    def dense_layer(num_units: int) -> tf.keras.layers.Layer:
        return tf.keras.layers.Dense(
            num_units,
            activation=tf.keras.activations.relu,
            kernel_initializer=tf.keras.initializers.VarianceScaling(
                scale=2.0, mode="fan_in", distribution="truncated_normal"
            ),
        )

    action_spec = train_env.action_spec()
    num_actions = action_spec.maximum - action_spec.minimum + 1
    q_values_layer = tf.keras.layers.Dense(
        num_actions,
        activation=None,
        kernel_initializer=tf.keras.initializers.RandomUniform(minval=-0.03, maxval=0.03),
        bias_initializer=tf.keras.initializers.Constant(-0.2),
    )
    q_net = sequential.Sequential([dense_layer(100), dense_layer(50), q_values_layer])

    agent = dqn_agent.DqnAgent(
        train_env.time_step_spec(),
        action_spec,
        q_network=q_net,
        optimizer=tf.keras.optimizers.Adam(learning_rate=learning_rate),
        td_errors_loss_fn=common.element_wise_squared_loss,
        train_step_counter=tf.Variable(0),
    )
    agent.initialize()
    random_policy = random_tf_policy.RandomTFPolicy(train_env.time_step_spec(), action_spec)

    evaluation_seconds = [0.0]

    def compute_avg_return(environment, policy, num_episodes: int) -> float:
        """The tutorial's evaluation: one episode after another, the TF policy called eagerly."""
        started = time.perf_counter()
        total_return = 0.0
        for _ in range(num_episodes):
            time_step = environment.reset()
            episode_return = 0.0
            while not time_step.is_last():
                action_step = policy.action(time_step)
                time_step = environment.step(action_step.action)
                episode_return += time_step.reward
            total_return += episode_return
        evaluation_seconds[0] += time.perf_counter() - started
        return float((total_return / num_episodes).numpy()[0])

    compute_avg_return(eval_env, random_policy, args.eval_episodes)

    table_name = "uniform_table"
    replay_buffer_signature = tensor_spec.add_outer_dim(
        tensor_spec.from_spec(agent.collect_data_spec)
    )
    table = reverb.Table(
        table_name,
        max_size=replay_buffer_max_length,
        sampler=reverb.selectors.Uniform(),
        remover=reverb.selectors.Fifo(),
        rate_limiter=reverb.rate_limiters.MinSize(1),
        signature=replay_buffer_signature,
    )
    reverb_server = reverb.Server([table])
    replay_buffer = reverb_replay_buffer.ReverbReplayBuffer(
        agent.collect_data_spec,
        table_name=table_name,
        sequence_length=2,
        local_server=reverb_server,
    )
    rb_observer = reverb_utils.ReverbAddTrajectoryObserver(
        replay_buffer.py_client, table_name, sequence_length=2
    )

    py_driver.PyDriver(
        train_py_env,
        py_tf_eager_policy.PyTFEagerPolicy(random_policy, use_tf_function=True),
        [rb_observer],
        max_steps=initial_collect_steps,
    ).run(train_py_env.reset())
    dataset = replay_buffer.as_dataset(
        num_parallel_calls=3, sample_batch_size=batch_size, num_steps=2
    ).prefetch(3)
    iterator = iter(dataset)

    # The training loop, as published.
    agent.train = common.function(agent.train)
    agent.train_step_counter.assign(0)
    evaluation_seconds[0] = 0.0
    loop_start = time.perf_counter()
    evaluations = [(0, compute_avg_return(eval_env, agent.policy, args.eval_episodes))]
    time_step = train_py_env.reset()
    collect_driver = py_driver.PyDriver(
        train_py_env,
        py_tf_eager_policy.PyTFEagerPolicy(agent.collect_policy, use_tf_function=True),
        [rb_observer],
        max_steps=collect_steps_per_iteration,
    )
    for _ in range(args.iterations):
        time_step, _ = collect_driver.run(time_step)
        experience, _ = next(iterator)
        train_loss = agent.train(experience).loss
        step = int(agent.train_step_counter.numpy())
        if step % log_interval == 0:
            print(f"step = {step}: loss = {float(train_loss)}")
        if step % args.eval_interval == 0:
            evaluations.append(
                (step, compute_avg_return(eval_env, agent.policy, args.eval_episodes))
            )
            print(f"step = {step}: Average Return = {evaluations[-1][1]}")
    loop_end = time.perf_counter()
    rb_observer.close()
    reverb_server.stop()

    report(
        imported=imported,
        loop_start=loop_start,
        loop_end=loop_end,
        eval_seconds=evaluation_seconds[0],
        iterations=args.iterations,
        evaluations=evaluations,
    )


if __name__ == "__main__":
    main()
