"""The Reverb server: the replay table and the variable container, for every other job.

Run: ``python -m course_helpers.distributed.server --root-dir RUN --port 8008``.
It waits for the train job to save the collect policy, because both tables are typed by
it: the replay table holds pairs of the policy's trajectory steps, the variable container
one copy of its weights and the train step they belong to.
"""

from __future__ import annotations

import os
import time

from course_helpers.distributed import job
from course_helpers.distributed.sac import read_settings
from course_helpers.i18n import gettext_noop


def error_buffer(settings) -> float:
    """How far, in samples, the limiter lets samples run ahead of or behind the ratio."""
    spi = settings["samples_per_insert"]
    return max(0.1 * settings["initial_collect_steps"] * spi, max(1.0, spi))


def replay_table(settings, collect_data_spec):
    """The replay table: uniform sampling, oldest out first, and a rate limiter that keeps
    ``samples_per_insert`` pairs sampled per pair written, whatever the number of actors."""
    import reverb
    from tf_agents.replay_buffers import reverb_replay_buffer
    from tf_agents.specs import tensor_spec

    spi = settings["samples_per_insert"]
    min_size = settings["initial_collect_steps"]
    return reverb.Table(
        name=reverb_replay_buffer.DEFAULT_TABLE,
        sampler=reverb.selectors.Uniform(),
        remover=reverb.selectors.Fifo(),
        # Sampling waits for min_size pairs; then samples stay within the error buffer of
        # spi × (inserts − min_size), the first min_size pairs owing no samples. The error
        # buffer is 10% of min_size × spi, as TF-Agents' example sets it when given
        # --samples_per_insert, and at least the max(1, spi) Reverb asks for. The side that
        # gets ahead waits.
        rate_limiter=reverb.rate_limiters.SampleToInsertRatio(
            samples_per_insert=spi,
            min_size_to_sample=min_size,
            error_buffer=error_buffer(settings),
        ),
        max_size=settings["replay_buffer_capacity"],
        max_times_sampled=0,
        signature=tensor_spec.add_outer_dim(tensor_spec.from_spec(collect_data_spec), 2),
    )


def variable_table(policy_variables, train_step):
    """The variable container: one item, the newest weights and their train step."""
    import reverb
    import tensorflow as tf
    from tf_agents.experimental.distributed import reverb_variable_container as container

    variables = {container.POLICY_KEY: policy_variables, container.TRAIN_STEP_KEY: train_step}
    return reverb.Table(
        name=container.DEFAULT_TABLE,
        sampler=reverb.selectors.Uniform(),
        remover=reverb.selectors.Fifo(),
        rate_limiter=reverb.rate_limiters.MinSize(1),
        max_size=1,
        max_times_sampled=0,
        signature=tf.nest.map_structure(lambda v: tf.TensorSpec(v.shape, v.dtype), variables),
    )


def main() -> None:
    job.quiet_tensorflow()
    parser_args = job.arguments(
        gettext_noop("The Reverb server of a distributed SAC run."), address=False
    )
    import reverb
    from tf_agents.replay_buffers import reverb_replay_buffer
    from tf_agents.train import learner
    from tf_agents.train.utils import train_utils

    settings = read_settings(parser_args.root_dir)
    job.stop_on_sigterm()
    collect_policy = train_utils.wait_for_policy(
        os.path.join(
            parser_args.root_dir,
            learner.POLICY_SAVED_MODEL_DIR,
            learner.COLLECT_POLICY_SAVED_MODEL_DIR,
        ),
        load_specs_from_pbtxt=True,
    )
    tables = [
        replay_table(settings, collect_policy.collect_data_spec),
        variable_table(collect_policy.variables(), train_utils.create_train_step()),
    ]
    server = reverb.Server(tables, port=parser_args.port)
    client = server.localhost_client()
    job.report(job="server", port=server.port)
    try:
        while True:  # until stopped: what the replay table has seen, every second
            info = client.server_info()[reverb_replay_buffer.DEFAULT_TABLE]
            stats = info.rate_limiter_info
            job.report(
                job="server",
                size=info.current_size,
                inserts=stats.insert_stats.completed,
                samples=stats.sample_stats.completed,
            )
            time.sleep(1)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
