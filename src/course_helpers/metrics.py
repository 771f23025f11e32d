"""Average return: the number the lessons use to say how good a policy is."""

from __future__ import annotations

from typing import Any

import numpy as np

from course_helpers.environments import as_py_policy, check_policy_matches, play
from course_helpers.i18n import gettext


def average_return(
    env: Any, policy: Any, num_episodes: int = 10, max_steps_per_episode: int | None = None
) -> float:
    """Play ``num_episodes`` full episodes with ``policy`` and return the mean total reward.

    It runs the policy as a compiled function on the Python environment. Given a batch of
    environments (a ``BatchedPyEnvironment``), it plays one episode in each at the same
    time, so the policy is called once per step for the whole batch: in CartPole that
    call, not the physics, is what costs time, and a batch of 10 evaluates several times
    faster than 10 episodes one after another (the batch's episodes end at different steps,
    and each step still costs every CartPole's physics).

    Args:
        env: a ``PyEnvironment``, a ``BatchedPyEnvironment``, a ``TFPyEnvironment``
            wrapping either, or a gym id.
        policy: a TF-Agents policy (TF or Python) built for this environment.
        num_episodes: how many episodes to average over (at least 1). With a batch of
            ``n`` environments, they are played ``n`` at a time.
        max_steps_per_episode: stop an episode early after this many steps (optional).

    In a lesson (the names come from its cells)::

            average_return(eval_envs, agent.policy, num_episodes=10)  # 200.0 once CartPole is solved
    """
    batch = _batch(env)
    if batch is None:
        total = sum(
            float(np.sum(time_step.reward))
            for _, time_step in play(env, policy, num_episodes, max_steps_per_episode)
        )
        return total / num_episodes
    if not isinstance(num_episodes, int) or isinstance(num_episodes, bool) or num_episodes < 1:
        raise ValueError(
            gettext("num_episodes must be a positive integer, got {value}.").format(
                value=repr(num_episodes)
            )
        )
    policy = as_py_policy(policy, batched=True)
    check_policy_matches(batch.envs[0], policy)
    returns: list[float] = []
    while len(returns) < num_episodes:
        returns.extend(_one_episode_each(batch, policy, max_steps_per_episode))
    return float(np.mean(returns[:num_episodes]))


def _batch(env: Any) -> Any:
    """The ``BatchedPyEnvironment`` of two or more environments behind ``env``, else None."""
    from tf_agents.environments import tf_py_environment

    if isinstance(env, tf_py_environment.TFPyEnvironment):
        env = env.pyenv
    envs = getattr(env, "envs", None)
    return env if envs is not None and len(envs) > 1 else None


def _one_episode_each(batch: Any, policy: Any, max_steps: int | None) -> list[float]:
    """The return of one episode in each environment of the batch, played side by side.

    An environment whose episode is over keeps stepping (TF-Agents resets it), but its
    rewards no longer count, so every episode is counted once and long episodes are not
    outnumbered by short ones.
    """
    import tensorflow as tf

    time_step = batch.reset()
    state = policy.get_initial_state(batch_size=batch.batch_size)
    totals = np.zeros(batch.batch_size)
    done = np.zeros(batch.batch_size, dtype=bool)
    steps = 0
    while not done.all() and (max_steps is None or steps < max_steps):
        action_step = policy.action(time_step, state)
        state = action_step.state
        # Without its own batch dimension to remove, the wrapper hands back tensors.
        time_step = batch.step(tf.nest.map_structure(np.asarray, action_step.action))
        totals += np.where(done, 0.0, time_step.reward)
        done |= time_step.is_last()
        steps += 1
    return totals.tolist()
