"""What ``course bench`` runs inside a lesson's kernel: the timings and the report.

``course bench`` executes a lesson with a few cells wrapped (:data:`course_tools.bench`'s
``DQN_CELLS`` and ``SAC_CELLS``): the lesson's evaluation function becomes
:func:`timed`, its training loop is framed by :func:`loop_started` and
:func:`loop_ended`, and one last cell prints :func:`report`. Each benchmark run is a
fresh kernel, so the module's state belongs to that one run.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

#: (start, end, value) of every call of the wrapped evaluation, in seconds.
evaluations: list[tuple[float, float, float]] = []
_loop: dict[str, float] = {}

#: The lesson's figures that the report reads, where the lesson has them: SAC's training
#: curves, which a tuning run plots; DQN's average max Q at each evaluation, and the
#: predicted Q-values and observed discounted returns of its last, greedy episode.
CURVES = (
    "log_steps",
    "alphas",
    "entropies",
    "critic_losses",
    "eval_q_values",
    "predicted_q",
    "observed_returns",
)
#: What :func:`report`'s line starts with, so that the benchmark finds it in the output.
PREFIX = "BENCHMARK "


def timed(
    evaluate: Callable[..., Any], read: Callable[[Any], Any] = lambda value: value
) -> Callable[..., Any]:
    """``evaluate``, recording each call's start, end and result (``read`` finds the number)."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        value = evaluate(*args, **kwargs)
        evaluations.append((start, time.perf_counter(), float(read(value))))
        return value

    return wrapper


def loop_started() -> None:
    _loop["start"] = time.perf_counter()


def loop_ended() -> None:
    _loop["end"] = time.perf_counter()


def figures(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The run's figures, from the lesson's own variables (``hp``, ``eval_steps``)."""
    hp = dict(namespace["hp"])
    start, end = _loop["start"], _loop["end"]
    in_loop = [e for e in evaluations if start <= e[0] < end]
    return {
        "peak_memory_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "hyperparameters": hp,
        "iterations": int(hp["num_env_steps"] if "num_env_steps" in hp else hp["num_iterations"]),
        # Lesson 3 counts iterations of one gradient step and collect_steps_per_iteration
        # environment steps each.
        "env_steps": int(
            hp.get("num_env_steps")
            or hp["num_iterations"] * hp.get("collect_steps_per_iteration", 1)
        ),
        "loop_seconds": end - start,
        "eval_seconds": sum(stop - begin for begin, stop, _ in in_loop),
        # The first evaluation (step 0) runs before the loop.
        "evaluations": [
            [int(step), stop - start, value]
            for step, (_, stop, value) in zip(namespace["eval_steps"][1:], in_loop)
        ],
        # Lessons 2 and 3 keep the policy of their best evaluation and test it on new
        # episodes (lesson 3's result is its kept_metrics).
        "kept": {
            name: float(namespace[name])
            for name in ("best_step", "best_return", "kept_return")
            if name in namespace
        }
        | (
            {"kept_return": float(namespace["kept_metrics"]["AverageReturn"])}
            if "kept_metrics" in namespace
            else {}
        ),
        "curves": {
            name: [float(v) for v in namespace[name]] for name in CURVES if name in namespace
        },
    }


def report(namespace: Mapping[str, Any]) -> str:
    """The figures as one line: :data:`PREFIX` and JSON. Where :data:`KEEP_ACTOR` names a
    folder, lesson 3's kept actor is saved there too (see :func:`save_actor`)."""
    result = figures(namespace)
    folder = os.environ.get(KEEP_ACTOR)
    if folder and "actor_net" in namespace:
        result["actor_weights"] = save_actor(namespace, Path(folder))
    return PREFIX + json.dumps(result)


#: The variable that asks :func:`report` to save lesson 3's kept actor, in this folder.
KEEP_ACTOR = "COURSE_BENCH_KEEP_ACTOR"


def save_actor(namespace: Mapping[str, Any], folder: Path) -> str:
    """Save the weights of lesson 3's actor network (by then the kept, best one) as a NumPy
    ``.npz`` file named after the seed and the time; return its path. ``course`` builds the
    shipped policy from such a file."""
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = folder / f"actor-seed-{namespace.get('SEED', 'unknown')}-{stamp}.npz"
    weights = namespace["actor_net"].get_weights()
    np.savez(path, *weights)
    return str(path)
