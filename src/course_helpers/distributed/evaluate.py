"""The evaluator: the greedy policy, with the newest weights, every ``eval_interval`` steps.

Run: ``python -m course_helpers.distributed.evaluate --root-dir RUN --address HOST:PORT``.
Like a collect job it pulls weights from the variable container, but it writes nothing
into the replay table: its episodes measure the policy, they do not train it.
"""

from __future__ import annotations

import os
import time

from course_helpers.distributed import job
from course_helpers.distributed.sac import load_env, read_settings
from course_helpers.i18n import gettext_noop


def main() -> None:
    job.quiet_tensorflow()
    args = job.arguments(gettext_noop("The evaluator of a distributed SAC run."))
    from tf_agents.experimental.distributed import reverb_variable_container as container
    from tf_agents.train import actor, learner
    from tf_agents.train.utils import train_utils

    settings = read_settings(args.root_dir)
    job.stop_on_sigterm()
    env = load_env(settings, settings["seed"] + 1)  # lesson 3's evaluation Minitaur, seed + 1
    policy = train_utils.wait_for_policy(
        os.path.join(
            args.root_dir, learner.POLICY_SAVED_MODEL_DIR, learner.GREEDY_POLICY_SAVED_MODEL_DIR
        ),
        load_specs_from_pbtxt=True,
    )
    train_step = train_utils.create_train_step()
    variables = {container.POLICY_KEY: policy.variables(), container.TRAIN_STEP_KEY: train_step}
    variable_container = container.ReverbVariableContainer(
        args.address, table_names=[container.DEFAULT_TABLE]
    )
    eval_actor = actor.Actor(
        env,
        policy,
        train_step,
        episodes_per_run=settings["num_eval_episodes"],
        metrics=actor.eval_metrics(settings["num_eval_episodes"]),
        summary_dir=os.path.join(args.root_dir, "eval"),
    )
    last = None
    while last is None or last < settings["num_iterations"]:
        variable_container.update(variables)
        step = int(train_step.numpy())
        due = last is None or step >= last + settings["eval_interval"]
        if due or step >= settings["num_iterations"] > last:
            eval_actor.run()
            last = step
            average_return = float(eval_actor.metrics[0].result())
            job.report(job="eval", train_step=step, average_return=average_return)
        else:
            time.sleep(1)


if __name__ == "__main__":
    main()
