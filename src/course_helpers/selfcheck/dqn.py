"""Self-checks of lesson 02, DQN on CartPole."""

from __future__ import annotations

from typing import Any

from course_helpers.i18n import gettext as _
from course_helpers.selfcheck.feedback import Feedback, graded

__all__ = ["average_return_function", "n_step_num_steps", "q_network_parameters"]


def _episode_returns(environment: Any, policy: Any, num_episodes: int) -> list[tuple[float, float]]:
    """(return, reward of the last step) of each episode, as course.average_return plays them."""
    from course_helpers.environments import play

    episodes: list[tuple[float, float]] = []
    for _step, time_step in play(environment, policy, num_episodes):
        reward = float(time_step.reward)
        if time_step.is_first():
            episodes.append((0.0, 0.0))
        total, _last = episodes[-1]
        episodes[-1] = (total + reward, reward)
    return episodes


@graded
def average_return_function(function: Any, environment: Any, policy: Any, num_episodes: int,
                            seed: int = 1) -> Feedback:
    """Lesson 02: ``function(environment, policy, num_episodes)`` must average the returns.

    Both the learner's function and the reference play from the same seed, so they see
    the same episodes with a deterministic policy.
    """
    import numpy as np

    environment.seed(seed)
    try:
        answer = function(environment, policy, num_episodes)
    except Exception as error:  # the learner's code: any error is feedback, not a crash
        return Feedback(False, _("Not yet: your function raised {error}.").format(
            error=f"{type(error).__name__}: {error}"))
    try:  # one number: a float, a NumPy scalar or a scalar tensor
        answer = None if answer is None else float(np.asarray(answer, dtype=float).reshape(()))
    except (TypeError, ValueError):
        answer = None
    if answer is None:
        return Feedback(False, _("Not yet: your function should return the average as a number."))
    environment.seed(seed)
    episodes = _episode_returns(environment, policy, num_episodes)
    returns = [total for total, _ in episodes]

    def close(value: float) -> bool:
        return abs(answer - value) <= 1e-4 * max(1.0, abs(value))

    if close(float(np.mean(returns))):
        return Feedback(True, _("Right: your loop gives the same average return as "
                                "course.average_return, over the same episodes."))
    if close(float(np.sum(returns))) and num_episodes > 1:
        hint = _("this is the total over all episodes; divide by the number of episodes.")
    elif close(float(np.mean([total - last for total, last in episodes]))):
        hint = _("every episode misses its last reward: add the reward of each step, the "
                 "last one included, then stop when the time step is the last.")
    elif close(returns[0]) and num_episodes > 1:
        hint = _("this is the first episode's return only; play num_episodes episodes, each "
                 "starting with reset().")
    else:
        hint = _("this is not the average, over num_episodes episodes, of each episode's "
                 "summed rewards. Check that each episode starts with reset() and ends when "
                 "is_last() is true.")
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


@graded
def n_step_num_steps(answer: Any, n_step_update: int) -> Feedback:
    """Lesson 02: how many consecutive steps an ``n_step_update`` DQN trains on."""
    if isinstance(answer, bool) or not isinstance(answer, int):
        return Feedback(False, _("Not yet: write a whole number of steps."))
    needed = n_step_update + 1  # DqnAgent.train_sequence_length; tested against TF-Agents
    if answer == needed:
        return Feedback(True, _("Right: the first step, and every step up to the one whose "
                                "observation the update looks at."))
    if answer == 2:
        hint = _("2 is what a one-step update needs; this update looks further ahead.")
    elif answer == n_step_update:
        hint = _("with that many steps, the last one is one step short of the observation the "
                 "update needs.")
    elif answer > needed:
        hint = _("that is more than the update reads. Count the first step, then the steps up "
                 "to the observation it looks at.")
    else:
        hint = _("the update reads the rewards of the next steps and one observation after "
                 "them; count the steps from the first to that observation.")
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


@graded
def q_network_parameters(answer: Any, observation_size: int, fc_layer_params: tuple[int, ...],
                         num_actions: int) -> Feedback:
    """Lesson 02: the number of weights and biases of a dense Q-network."""
    if isinstance(answer, bool) or not isinstance(answer, int):
        return Feedback(False, _("Not yet: write a whole number of parameters."))
    sizes = [observation_size, *fc_layer_params, num_actions]
    layers = list(zip(sizes, sizes[1:]))
    total = sum(inputs * units + units for inputs, units in layers)
    if answer == total:
        return Feedback(True, _("Right: every dense layer has inputs × units weights and one "
                                "bias per unit."))
    if answer == sum(inputs * units for inputs, units in layers):
        hint = _("you counted the weights; every unit also has a bias.")
    elif answer == sum(inputs * units + units for inputs, units in layers[:-1]):
        hint = _("add the output layer: it computes one Q-value per action.")
    else:
        hint = _("count layer by layer, from the observation to the Q-values: each layer has "
                 "inputs × units weights and one bias per unit.")
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))
