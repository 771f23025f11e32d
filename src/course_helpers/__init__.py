"""Helpers behind the TF-Agents lessons: the plumbing, so the notebooks can show the ideas.

Call :func:`setup` in a lesson's first code cell, before TensorFlow is imported.
Importing this package imports neither TensorFlow nor pygame, and nothing heavy at all:
each helper's module is imported the first time a lesson uses it (PEP 562), so that a
lesson's first cell, and the course's tooling (:mod:`course_tools`, which imports this
package and never the reverse), start in a fraction of a second.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Bound now: the function shares its module's name, and once anything imports the module
# course_helpers.progress, Python would make that name the module, not the function.
from course_helpers.progress import progress, progress_observer

# Each public name and the module that defines it.
_EXPORTS = {
    "average_return": "metrics",
    "batched_py_policy": "environments",
    "describe_run": "runs",
    "describe_trained": "trained",
    "embed_mp4": "video",
    "hyperparameters": "quick",
    "is_quick_mode": "quick",
    "measured_runs": "measured_runs",
    "new_run_folder": "runs",
    "number": "numbers",
    "number_list": "numbers",
    "percent": "numbers",
    "plot_policy_fit": "plots",
    "plot_q_values": "plots",
    "plot_q_against_returns": "plots",
    "plot_returns": "plots",
    "plot_sac_training": "plots",
    "record_episodes": "video",
    "record_video": "video",
    "run_folder": "runs",
    "save_progress": "runs",
    "saved_progress": "runs",
    "seed_everything": "runtime",
    "setup": "runtime",
    "trained_policy_dir": "trained",
    "write_mp4": "video",
}
_SUBMODULES = ("diagrams", "distributed", "selfcheck")

__all__ = [
    "average_return",
    "batched_py_policy",
    "describe_run",
    "describe_trained",
    "diagrams",
    "distributed",
    "embed_mp4",
    "hyperparameters",
    "is_quick_mode",
    "measured_runs",
    "new_run_folder",
    "number",
    "number_list",
    "percent",
    "plot_policy_fit",
    "plot_q_values",
    "plot_q_against_returns",
    "plot_returns",
    "plot_sac_training",
    "progress",
    "progress_observer",
    "record_episodes",
    "record_video",
    "run_folder",
    "save_progress",
    "saved_progress",
    "seed_everything",
    "selfcheck",
    "setup",
    "trained_policy_dir",
    "write_mp4",
]

if TYPE_CHECKING:
    from course_helpers import diagrams, selfcheck
    from course_helpers.environments import batched_py_policy
    from course_helpers.measured_runs import measured_runs
    from course_helpers.metrics import average_return
    from course_helpers.numbers import number, number_list, percent
    from course_helpers.plots import (
        plot_policy_fit,
        plot_q_against_returns,
        plot_q_values,
        plot_returns,
        plot_sac_training,
    )
    from course_helpers.quick import hyperparameters, is_quick_mode
    from course_helpers.runs import describe_run, run_folder, save_progress, saved_progress
    from course_helpers.runtime import seed_everything, setup
    from course_helpers.trained import describe_trained, trained_policy_dir
    from course_helpers.video import embed_mp4, record_episodes, record_video, write_mp4


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        value: Any = importlib.import_module(f"course_helpers.{name}")
    elif name in _EXPORTS:
        value = getattr(importlib.import_module(f"course_helpers.{_EXPORTS[name]}"), name)
    else:
        raise AttributeError(f"module 'course_helpers' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
