"""The published TF-Agents SAC tutorial on Minitaur, as a plain script: the baseline of lesson 3.

    .venv/bin/python benchmarks/published/sac_tutorial.py --iterations 10000
    .venv/bin/python benchmarks/published/sac_tutorial.py      # in full: 100,000 iterations

`course bench --only baseline` runs it for the milliseconds per iteration to compare with
lesson 3's. It takes the tutorial's steps with its hyperparameters: a Reverb table of
10,000 pairs read through `ReverbReplayBuffer.as_dataset`, 10,000 random steps first, then
per iteration one step of the collect actor and one gradient step of the learner, one after
the other (`steps_per_run=1`, `iterations=1`), and 20 evaluation episodes every 10,000
iterations. Left out: the plot and the video. TensorFlow and the environments are seeded
so that runs can be repeated; the tutorial itself does not seed.

The last line printed is ``BENCHMARK {json}``: the seconds spent importing, setting up, in
the loop and in its evaluations, the iterations, each evaluation's step and return, and
peak memory (MiB).
"""

from __future__ import annotations

import os
import tempfile
import time

from common import arguments, report


def main() -> None:
    args = arguments(
        __doc__,
        iterations=100_000,
        eval_interval=10_000,
        eval_episodes=20,
        extra={"initial-collect-steps": 10_000},
    )

    import numpy as np
    import reverb
    import tensorflow as tf
    from tf_agents.agents.ddpg import critic_network
    from tf_agents.agents.sac import sac_agent, tanh_normal_projection_network
    from tf_agents.environments import suite_pybullet
    from tf_agents.networks import actor_distribution_network
    from tf_agents.policies import greedy_policy, py_tf_eager_policy, random_py_policy
    from tf_agents.replay_buffers import reverb_replay_buffer, reverb_utils
    from tf_agents.train import actor, learner, triggers
    from tf_agents.train.utils import spec_utils, strategy_utils, train_utils

    imported = time.perf_counter()
    tf.random.set_seed(args.seed)
    np.random.seed(args.seed)

    # The tutorial's hyperparameters.
    replay_buffer_capacity = 10_000
    batch_size = 256
    learning_rate = 3e-4  # the critic's, the actor's and alpha's
    policy_save_interval = 5_000

    collect_env = suite_pybullet.load("MinitaurBulletEnv-v0")
    eval_env = suite_pybullet.load("MinitaurBulletEnv-v0")
    collect_env.seed(args.seed)
    eval_env.seed(args.seed + 1)
    use_gpu = bool(tf.config.list_physical_devices("GPU"))
    strategy = strategy_utils.get_strategy(tpu=False, use_gpu=use_gpu)
    observation_spec, action_spec, time_step_spec = spec_utils.get_tensor_specs(collect_env)

    with strategy.scope():
        critic_net = critic_network.CriticNetwork(
            (observation_spec, action_spec),
            observation_fc_layer_params=None,
            action_fc_layer_params=None,
            joint_fc_layer_params=(256, 256),
            kernel_initializer="glorot_uniform",
            last_kernel_initializer="glorot_uniform",
        )
        actor_net = actor_distribution_network.ActorDistributionNetwork(
            observation_spec,
            action_spec,
            fc_layer_params=(256, 256),
            continuous_projection_net=tanh_normal_projection_network.TanhNormalProjectionNetwork,
        )
        train_step = train_utils.create_train_step()
        tf_agent = sac_agent.SacAgent(
            time_step_spec,
            action_spec,
            actor_network=actor_net,
            critic_network=critic_net,
            actor_optimizer=tf.keras.optimizers.Adam(learning_rate=learning_rate),
            critic_optimizer=tf.keras.optimizers.Adam(learning_rate=learning_rate),
            alpha_optimizer=tf.keras.optimizers.Adam(learning_rate=learning_rate),
            target_update_tau=0.005,
            target_update_period=1,
            td_errors_loss_fn=tf.math.squared_difference,
            gamma=0.99,
            reward_scale_factor=1.0,
            train_step_counter=train_step,
        )
        tf_agent.initialize()

    table_name = "uniform_table"
    table = reverb.Table(
        table_name,
        max_size=replay_buffer_capacity,
        sampler=reverb.selectors.Uniform(),
        remover=reverb.selectors.Fifo(),
        rate_limiter=reverb.rate_limiters.MinSize(1),
    )
    reverb_server = reverb.Server([table])
    reverb_replay = reverb_replay_buffer.ReverbReplayBuffer(
        tf_agent.collect_data_spec,
        sequence_length=2,
        table_name=table_name,
        local_server=reverb_server,
    )
    dataset = reverb_replay.as_dataset(sample_batch_size=batch_size, num_steps=2).prefetch(50)

    eval_policy = py_tf_eager_policy.PyTFEagerPolicy(
        greedy_policy.GreedyPolicy(tf_agent.policy), use_tf_function=True
    )
    collect_policy = py_tf_eager_policy.PyTFEagerPolicy(
        tf_agent.collect_policy, use_tf_function=True
    )
    random_policy = random_py_policy.RandomPyPolicy(
        collect_env.time_step_spec(), collect_env.action_spec()
    )
    rb_observer = reverb_utils.ReverbAddTrajectoryObserver(
        reverb_replay.py_client, table_name, sequence_length=2, stride_length=1
    )

    actor.Actor(
        collect_env,
        random_policy,
        train_step,
        steps_per_run=args.initial_collect_steps,
        observers=[rb_observer],
    ).run()
    tempdir = tempfile.mkdtemp(prefix="sac_tutorial_")
    collect_actor = actor.Actor(
        collect_env,
        collect_policy,
        train_step,
        steps_per_run=1,
        metrics=actor.collect_metrics(10),
        summary_dir=os.path.join(tempdir, learner.TRAIN_DIR),
        observers=[rb_observer],
    )
    eval_actor = actor.Actor(
        eval_env,
        eval_policy,
        train_step,
        episodes_per_run=args.eval_episodes,
        metrics=actor.eval_metrics(args.eval_episodes),
        summary_dir=os.path.join(tempdir, "eval"),
    )
    saved_model_dir = os.path.join(tempdir, learner.POLICY_SAVED_MODEL_DIR)
    learning_triggers = [
        triggers.PolicySavedModelTrigger(
            saved_model_dir, tf_agent, train_step, interval=policy_save_interval
        ),
        triggers.StepPerSecondLogTrigger(train_step, interval=1_000),
    ]
    agent_learner = learner.Learner(
        tempdir,
        train_step,
        tf_agent,
        lambda: dataset,
        triggers=learning_triggers,
        strategy=strategy,
    )

    evaluation_seconds = [0.0]

    def average_return() -> float:
        started = time.perf_counter()
        eval_actor.run()
        evaluation_seconds[0] += time.perf_counter() - started
        return float(next(m for m in eval_actor.metrics if m.name == "AverageReturn").result())

    # The training loop, as published.
    tf_agent.train_step_counter.assign(0)
    loop_start = time.perf_counter()
    evaluations = [(0, average_return())]
    for _ in range(args.iterations):
        collect_actor.run()
        agent_learner.run(iterations=1)
        step = agent_learner.train_step_numpy
        if args.eval_interval and step % args.eval_interval == 0:
            evaluations.append((int(step), average_return()))
            print(f"step = {step}: AverageReturn = {evaluations[-1][1]:.6f}", flush=True)
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
