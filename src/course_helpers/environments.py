"""Loading environments by name, and checking that a policy fits an environment.

The lessons create their environments with TF-Agents' suites, where a learner sees
them. The helpers that take an environment (video, metrics) go through this module so
that a typo in a name, or a policy trained for another environment, fails with a
sentence that says what to fix instead of a stack trace from deep inside TensorFlow.
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
from collections.abc import Iterator
from typing import Any

from course_helpers.i18n import gettext

# Ids that pybullet_envs registers; they load through suite_pybullet.
_PYBULLET_PREFIXES = (
    "Minitaur",
    "AntBullet",
    "HalfCheetahBullet",
    "HopperBullet",
    "HumanoidBullet",
    "InvertedPendulumBullet",
    "InvertedDoublePendulumBullet",
    "KukaBullet",
    "RacecarBullet",
    "ReacherBullet",
    "Walker2DBullet",
)


def registered_names() -> list[str]:
    """Every environment id gym knows, including pybullet's once it can be imported."""
    import gym

    try:  # pybullet registers its environments on import.
        import pybullet_envs  # noqa: F401
    except ImportError:
        pass
    # gym 0.23 (the pinned version) keeps an EnvRegistry with .all(); gym >= 0.26 a dict.
    registry = gym.envs.registry
    specs = registry.values() if isinstance(registry, dict) else registry.all()
    return sorted(spec.id for spec in specs)


def load(name: str, **kwargs: Any):
    """Load a Python environment by gym id, with TF-Agents' gym or pybullet suite.

    Raises:
        ValueError: the name is not registered; the message suggests close names.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(
            gettext("An environment name must be a non-empty string, got {value}.").format(
                value=repr(name)
            )
        )
    names = registered_names()
    if name not in names:
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
        hint = (
            " "
            + gettext("Did you mean {names}?").format(names=gettext(" or ").join(map(repr, close)))
            if close
            else ""
        )
        if (
            name.startswith(_PYBULLET_PREFIXES)
            and importlib.util.find_spec("pybullet_envs") is None
        ):
            hint += " " + gettext(
                "pybullet environments need the pybullet package: pip install pybullet."
            )
        raise ValueError(gettext("Unknown environment {name}.").format(name=repr(name)) + hint)
    if name.startswith(_PYBULLET_PREFIXES):
        from tf_agents.environments import suite_pybullet

        return suite_pybullet.load(name, **kwargs)
    from tf_agents.environments import suite_gym

    return suite_gym.load(name, **kwargs)


def as_py_environment(env: Any):
    """Return a single, unbatched Python environment for ``env``.

    Accepts a gym id, a ``PyEnvironment``, or a ``TFPyEnvironment`` wrapping exactly
    one Python environment (the lessons' ``eval_env``), so a learner can pass
    whichever one they have at hand.
    """
    if isinstance(env, str):
        return load(env)
    from tf_agents.environments import py_environment, tf_py_environment

    if isinstance(env, tf_py_environment.TFPyEnvironment):
        env = env.pyenv
    envs = getattr(env, "envs", None)  # a BatchedPyEnvironment
    if envs is not None:
        if len(envs) != 1:
            raise ValueError(
                gettext(
                    "This helper plays one episode at a time, but the environment holds a "
                    "batch of {count}. Pass one of its environments instead."
                ).format(count=len(envs))
            )
        env = envs[0]
    if not isinstance(env, py_environment.PyEnvironment):
        raise TypeError(
            gettext(
                "Expected an environment (a gym id, a PyEnvironment or a TFPyEnvironment), "
                "got {kind}."
            ).format(kind=type(env).__name__)
        )
    return env


def as_py_policy(policy: Any, batched: bool = False):
    """Return a Python policy for ``policy``, wrapping a TF policy in a compiled eager policy.

    ``batched=True`` is for time steps that already carry a batch dimension (from a
    ``BatchedPyEnvironment``); the wrapper then adds none, and keeps a trace of its own.
    """
    from tf_agents.policies import py_policy, tf_policy

    if isinstance(policy, py_policy.PyPolicy):
        return policy
    if isinstance(policy, tf_policy.TFPolicy):
        return _compiled(policy, batched)
    raise TypeError(
        gettext("Expected a TF-Agents policy, got {kind}.").format(kind=type(policy).__name__)
    )


# A TF policy is wrapped once and reused, so that evaluating it every 1,000 steps does not
# trace a new tf.function each time (tracing costs about a second). Policies hash by
# identity; the cache holds the few most recently used (a lesson evaluates one or two).
@functools.lru_cache(maxsize=4)
def _compiled(policy: Any, batched: bool) -> Any:
    from tf_agents.policies import py_tf_eager_policy

    if batched:
        return _batched_policy_class()(policy)
    return py_tf_eager_policy.PyTFEagerPolicy(policy, use_tf_function=True)


def batched_py_policy(policy: Any):
    """A compiled Python policy for a ``BatchedPyEnvironment``: batched time steps in, NumPy actions out.

    ``PyTFEagerPolicy(policy, batch_time_steps=False)`` is the TF-Agents way to call a TF
    policy on time steps that already carry a batch dimension, but it then hands back
    tensors, and gym's environments refuse a tensor as an action. This wrapper converts
    the action (and the policy info) to NumPy arrays, as any other Python policy returns.

    In a lesson (the names come from its cells)::

            collect_driver = py_driver.PyDriver(
                collect_envs, batched_py_policy(agent.collect_policy), [observer], max_steps=40)
    """
    return as_py_policy(policy, batched=True)


@functools.cache
def _batched_policy_class() -> type:
    """``PyTFEagerPolicy`` for batched time steps, returning NumPy arrays (defined on first use:
    TensorFlow is imported only then)."""
    import numpy as np
    import tensorflow as tf
    from tf_agents.policies import py_tf_eager_policy

    class BatchedPyTFEagerPolicy(py_tf_eager_policy.PyTFEagerPolicy):
        def __init__(self, policy: Any) -> None:
            super().__init__(policy, use_tf_function=True, batch_time_steps=False)
            # One concrete function per batch size (4 collect CartPoles, 10 evaluation
            # ones...). Calling it directly skips the tf.function's matching of the
            # arguments to a trace, which in TensorFlow 2.15 took about 0.4 ms of a 1 ms
            # call on CartPole: the same graph, with less Python around it.
            self._concrete: dict[Any, Any] = {}

        def _action(self, time_step: Any, policy_state: Any, seed: Any = None) -> Any:
            if seed is not None:
                step = super()._action(time_step, policy_state, seed=seed)
            else:
                time_step = tf.nest.map_structure(tf.convert_to_tensor, time_step)
                key = tuple(time_step.step_type.shape)
                action_fn = self._concrete.get(key)
                if action_fn is None:
                    action_fn = self._policy_action_fn.get_concrete_function(
                        time_step, policy_state, None
                    )
                    self._concrete[key] = action_fn
                step = action_fn(time_step, policy_state, None)
            return step._replace(
                action=tf.nest.map_structure(np.asarray, step.action),
                info=tf.nest.map_structure(np.asarray, step.info),
            )

    return BatchedPyTFEagerPolicy


def check_policy_matches(env: Any, policy: Any) -> None:
    """Raise a clear ValueError if ``policy`` was built for a different environment."""
    import tensorflow as tf

    for what, ours, theirs in (
        ("observation", env.observation_spec(), policy.time_step_spec.observation),
        ("action", env.action_spec(), policy.action_spec),
    ):
        try:
            tf.nest.assert_same_structure(ours, theirs)
            same = all(
                tuple(a.shape) == tuple(b.shape)
                and _dtype(a) == _dtype(b)
                # An action outside the environment's range (a policy for a game with
                # more actions) fails deep inside gym, so action bounds must match too.
                and (what != "action" or _bounds(a) == _bounds(b))
                for a, b in zip(tf.nest.flatten(ours), tf.nest.flatten(theirs))
            )
        except (ValueError, TypeError):
            same = False
        if not same:
            raise ValueError(
                gettext(
                    "The policy does not fit this environment: its {what} spec is "
                    "{theirs} but the environment's is {ours}. "
                    "Use a policy built from this environment's specs "
                    "(time_step_spec() and action_spec())."
                ).format(
                    what=gettext(what), theirs=_describe(theirs, what), ours=_describe(ours, what)
                )
            )


def _dtype(spec: Any) -> str:
    import numpy as np

    return np.dtype(getattr(spec.dtype, "as_numpy_dtype", spec.dtype)).name


def _bounds(spec: Any) -> str:
    """A bounded spec's range as text ("from 0 to 1"); "" for an unbounded spec."""
    import numpy as np

    if getattr(spec, "minimum", None) is None or getattr(spec, "maximum", None) is None:
        return ""
    low, high = (np.broadcast_to(v, tuple(spec.shape)) for v in (spec.minimum, spec.maximum))

    def show(v: Any) -> str:
        from course_helpers.numbers import number

        if v.size and (v == v.flat[0]).all():
            return number(v.flat[0].item())
        return "[" + ", ".join(number(x) for x in v.flatten().tolist()) + "]"

    return gettext("from {low} to {high}").format(low=show(low), high=show(high))


def _describe(spec: Any, what: str = "observation") -> str:
    import tensorflow as tf

    parts = [
        " ".join(
            filter(
                None,
                (
                    gettext("shape {shape} {dtype}").format(shape=tuple(s.shape), dtype=_dtype(s)),
                    _bounds(s) if what == "action" else "",
                ),
            )
        )
        for s in tf.nest.flatten(spec)
    ]
    return ", ".join(parts)


def play(
    env: Any, policy: Any, num_episodes: int, max_steps_per_episode: int | None = None
) -> Iterator[tuple[Any, Any]]:
    """Play whole episodes with ``policy`` and yield ``(env, time_step)`` at every step.

    Each episode starts with the time step from ``reset()`` (reward 0) and ends with
    its last step, or after ``max_steps_per_episode`` steps. Metrics sum the rewards;
    video renders a frame from ``env`` at each step.
    """
    if not isinstance(num_episodes, int) or num_episodes < 1:
        raise ValueError(
            gettext("num_episodes must be a positive integer, got {value}.").format(
                value=repr(num_episodes)
            )
        )
    env = as_py_environment(env)
    policy = as_py_policy(policy)
    check_policy_matches(env, policy)
    for _ in range(num_episodes):
        time_step = env.reset()
        state = policy.get_initial_state(batch_size=None)
        yield env, time_step
        steps = 0
        while not time_step.is_last():
            action_step = policy.action(time_step, state)
            state = action_step.state
            time_step = env.step(action_step.action)
            yield env, time_step
            steps += 1
            if max_steps_per_episode is not None and steps >= max_steps_per_episode:
                break
