"""The train job: the Learner, sampling the replay table and pushing its weights.

Run: ``python -m course_helpers.distributed.train --root-dir RUN --address HOST:PORT``.
It saves the policies first (the server and the collect jobs wait for them), then takes
``learner_steps_per_push`` gradient steps at a time, pushing the new weights and train
step into the variable container after each, until ``num_iterations``. Its batches come
over the network, from the same ``TrajectoryDataset`` lesson 3 reads locally.
"""

from __future__ import annotations

import os

from course_helpers.distributed import job
from course_helpers.distributed.sac import create_agent, load_env, read_settings
from course_helpers.i18n import gettext_noop


def main() -> None:
    job.quiet_tensorflow()
    args = job.arguments(gettext_noop("The train job (Learner) of a distributed SAC run."))
    import reverb
    import tensorflow as tf
    from tf_agents.experimental.distributed import reverb_variable_container as container
    from tf_agents.replay_buffers import reverb_replay_buffer
    from tf_agents.train import learner, triggers
    from tf_agents.train.utils import strategy_utils, train_utils

    settings = read_settings(args.root_dir)
    job.stop_on_sigterm()
    tf.random.set_seed(settings["seed"])
    env = load_env(settings, settings["seed"])  # for its specs only
    # The default strategy: TensorFlow places the learner on its first GPU if it sees one
    # (use_gpu=True would mirror it over every GPU, as lesson 3 explains).
    strategy = strategy_utils.get_strategy(tpu=False, use_gpu=False)
    with strategy.scope():
        train_step = train_utils.create_train_step()
        agent = create_agent(settings, env, train_step)

    # Saves the collect, greedy and raw policies now (the other jobs wait for them), and
    # the weights every policy_save_interval steps.
    save_trigger = triggers.PolicySavedModelTrigger(
        os.path.join(args.root_dir, learner.POLICY_SAVED_MODEL_DIR),
        agent,
        train_step,
        interval=settings["policy_save_interval"],
    )
    variables = {
        container.POLICY_KEY: agent.collect_policy.variables(),
        container.TRAIN_STEP_KEY: train_step,
    }
    variable_container = container.ReverbVariableContainer(
        args.address, table_names=[container.DEFAULT_TABLE]
    )

    # Lesson 3's dataset, from the server's address: pairs as the table holds them ([2, ...]
    # each, in batches). Its elements are Reverb's ReplaySample(info, data), hence
    # use_reverb_v2=True: the Learner trains on sample.data.
    dataset = (
        reverb.TrajectoryDataset.from_table_signature(
            server_address=args.address,
            table=reverb_replay_buffer.DEFAULT_TABLE,
            max_in_flight_samples_per_worker=2 * settings["batch_size"],
        )
        .batch(settings["batch_size"], drop_remainder=True)
        .prefetch(tf.data.AUTOTUNE)
    )
    agent_learner = learner.Learner(
        args.root_dir,
        train_step,
        agent,
        lambda: dataset,
        triggers=[save_trigger],
        strategy=strategy,
        use_reverb_v2=True,
    )
    # The Learner has restored its checkpoint, if the folder holds one: only now are the
    # weights the ones the collect jobs should start with.
    variable_container.push(variables)
    job.report(job="train", train_step=agent_learner.train_step_numpy)
    while agent_learner.train_step_numpy < settings["num_iterations"]:
        loss_info = agent_learner.run(iterations=settings["learner_steps_per_push"])
        variable_container.push(variables)
        job.report(
            job="train",
            train_step=agent_learner.train_step_numpy,
            critic_loss=float(loss_info.extra.critic_loss),
            alpha=float(tf.exp(agent._log_alpha)),
        )
    save_trigger(agent_learner.train_step_numpy, force_trigger=True)  # the last weights
    job.report(job="train", train_step=agent_learner.train_step_numpy, done=True)


if __name__ == "__main__":
    main()
