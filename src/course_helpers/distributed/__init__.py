"""Lesson 4's jobs: SAC on Minitaur spread over processes, as TF-Agents' own example does.

TF-Agents' distributed SAC example (``tf_agents/experimental/distributed/examples/sac``)
runs four kinds of job, each its own process, that meet only at a Reverb server:

- :mod:`~course_helpers.distributed.server`: the Reverb server, with two tables: the
  replay table of experience pairs, and the variable container that holds the policy's
  newest weights (a parameter server with room for one item).
- :mod:`~course_helpers.distributed.collect`: one Minitaur and the collect policy; it
  writes pairs into the replay table and pulls new weights from the container.
- :mod:`~course_helpers.distributed.train`: the Learner; it samples the replay table,
  takes gradient steps and pushes its weights into the container.
- :mod:`~course_helpers.distributed.evaluate`: plays the greedy policy with the newest
  weights every so many train steps.

Each module is short enough to read in the lesson and runs as
``python -m course_helpers.distributed.<job>``, on this machine or another one.
:mod:`~course_helpers.distributed.cluster` starts them all on this machine, shows their
progress, and stops every one of them, whatever happens to the notebook.
"""

from __future__ import annotations

from typing import Any

from course_helpers.distributed.cluster import Cluster, JobFailed
from course_helpers.distributed.sac import DEFAULTS, QUICK
from course_helpers.i18n import gettext

__all__ = ["DEFAULTS", "JOBS", "QUICK", "Cluster", "JobFailed", "show"]

#: The jobs' modules, by the name lesson 4 gives them.
JOBS = ("server", "train", "collect", "evaluate")


def show(job: str) -> Any:
    """The source of one job's module, highlighted, for the lesson to read: what you read
    is what runs when the cluster starts that job, with its comments and docstrings in
    the lesson's language (:mod:`course_helpers.distributed.listing`)."""
    import importlib

    from IPython.display import Code

    if job not in JOBS:
        raise ValueError(
            gettext("There is no job named {name}; the jobs are: {names}.").format(
                name=repr(job), names=", ".join(JOBS)
            )
        )
    from course_helpers.distributed import listing

    module = importlib.import_module(f"course_helpers.distributed.{job}")
    return Code(listing.localized(module), language="python")
