"""Average return: the number the lessons use to say how good a policy is."""

from __future__ import annotations

from typing import Any

import numpy as np

from course_helpers.environments import play


def average_return(
    env: Any, policy: Any, num_episodes: int = 10, max_steps_per_episode: int | None = None
) -> float:
    """Play ``num_episodes`` full episodes with ``policy`` and return the mean total reward.

    It runs the policy as a compiled function on the Python environment, step by step,
    which is several times faster than stepping a ``TFPyEnvironment`` eagerly, so that
    evaluation does not dominate a training loop.

    Args:
        env: a ``PyEnvironment``, a ``TFPyEnvironment`` of one environment, or a gym id.
        policy: a TF-Agents policy (TF or Python) built for this environment.
        num_episodes: how many episodes to average over (at least 1).
        max_steps_per_episode: stop an episode early after this many steps (optional).

    Example:
        >>> average_return(eval_env, agent.policy, num_episodes=10)  # doctest: +SKIP
        200.0
    """
    total = sum(
        float(np.sum(time_step.reward))
        for _, time_step in play(env, policy, num_episodes, max_steps_per_episode)
    )
    return total / num_episodes
