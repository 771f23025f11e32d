"""A collect job: one Minitaur, the collect policy, and a writer into the replay table.

Run: ``python -m course_helpers.distributed.collect --root-dir RUN --address HOST:PORT
--task K``. Any number of collect jobs may run, each with its own task number (which
seeds its random policy) and on any machine that reaches the server and reads the run folder.
Each acts with weights it pulled from the variable container, and pulls again every
``collect_steps_per_pull`` environment steps, once the server has taken the stretch's
pairs: between two pulls it acts with weights that grow older while the learner trains.
"""

from __future__ import annotations

import os
import time

from course_helpers.distributed import job
from course_helpers.distributed.sac import load_env, read_settings
from course_helpers.i18n import gettext_noop


def main() -> None:
    job.quiet_tensorflow()
    args = job.arguments(gettext_noop("A collect job of a distributed SAC run."), task=True)
    import reverb
    from tf_agents.experimental.distributed import reverb_variable_container as container
    from tf_agents.metrics import py_metrics
    from tf_agents.policies import random_py_policy
    from tf_agents.replay_buffers import reverb_replay_buffer, reverb_utils
    from tf_agents.train import actor, learner
    from tf_agents.train.utils import train_utils

    settings = read_settings(args.root_dir)
    job.stop_on_sigterm()
    name = f"collect-{args.task}"
    # seed + 1 is the evaluator's; the jobs take seed + 2 + task. The seed reaches the
    # random policy; the robot's bodies come from this process's own random generator.
    seed = settings["seed"] + 2 + args.task
    env = load_env(settings, seed)
    policy = train_utils.wait_for_policy(
        os.path.join(
            args.root_dir, learner.POLICY_SAVED_MODEL_DIR, learner.COLLECT_POLICY_SAVED_MODEL_DIR
        ),
        load_specs_from_pbtxt=True,
    )
    train_step = train_utils.create_train_step()
    variables = {container.POLICY_KEY: policy.variables(), container.TRAIN_STEP_KEY: train_step}
    variable_container = container.ReverbVariableContainer(
        args.address, table_names=[container.DEFAULT_TABLE]
    )
    variable_container.update(variables)  # waits for the learner's first push
    job.report(job=name, env_steps=0, weights_step=int(train_step.numpy()), started=True)

    observer = reverb_utils.ReverbAddTrajectoryObserver(
        reverb.Client(args.address),
        reverb_replay_buffer.DEFAULT_TABLE,
        sequence_length=2,
        stride_length=1,
    )
    steps = py_metrics.EnvironmentSteps()
    try:
        if int(train_step.numpy()) == 0:  # a new run: this job's share of random steps
            share = -(-settings["initial_collect_steps"] // max(1, settings["collect_jobs"]))
            random_policy = random_py_policy.RandomPyPolicy(
                env.time_step_spec(), env.action_spec(), seed=seed
            )
            actor.Actor(
                env, random_policy, train_step, steps_per_run=share, observers=[observer, steps]
            ).run()
            observer.reset(write_cached_steps=False)
            # Other jobs' pairs may have let the learner start meanwhile: pull its weights
            # now, or the first stretch would be played with those of step 0.
            variable_container.update(variables)
            job.report(
                job=name,
                env_steps=int(steps.result()),
                weights_step=int(train_step.numpy()),
                random=True,
            )
        collect_actor = actor.Actor(
            env,
            policy,
            train_step,
            steps_per_run=settings["collect_steps_per_pull"],
            observers=[observer, steps],
        )
        while int(train_step.numpy()) < settings["num_iterations"]:
            collect_actor.run()
            # The writer sends pairs without waiting; flush waits until the server has taken
            # them all, so this is where the rate limiter holds a job that runs ahead (and
            # at each episode's end, where the observer ends the writer's episode).
            waiting = time.perf_counter()
            observer.flush()
            waited = time.perf_counter() - waiting
            variable_container.update(variables)  # the newest weights, and their step
            job.report(
                job=name,
                env_steps=int(steps.result()),
                weights_step=int(train_step.numpy()),
                waited=waited,
            )
    finally:
        # Training is over, or the job is being stopped: send what the limiter still lets
        # in, for two seconds at most, and drop the rest (observer.close() would wait
        # without a deadline for pairs that no learner will sample).
        try:
            observer._writer.end_episode(timeout_ms=2_000)
        except (reverb.errors.ReverbError, RuntimeError):  # the deadline, or no server left
            pass
        observer._writer.close()


if __name__ == "__main__":
    main()
