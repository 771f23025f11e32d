"""Plots of training progress, labelled the same way in every lesson and language."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from course_helpers.i18n import gettext
from course_helpers.measured_runs import MeasuredRuns
from course_helpers.numbers import number

#: Steps or values as lessons hold them: a list, or a NumPy array.
Numbers = Sequence[float] | np.ndarray


def _tick(value: float, _position: object = None) -> str:
    """A tick label in the lesson's language: 20,000 / 20.000 / 20 000, 0.5 / 0,5."""
    return number(float(f"{value:.10g}"))  # 0.30000000000000004 is drawn as 0.3


def _localize_axes(ax: Axes, x_ticks: int | None = None) -> None:
    """Tick labels written as the lesson's language writes numbers (a log axis keeps its
    powers of ten); ``x_ticks`` caps the x axis's ticks where long numbers would collide."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
        if scale == "linear":
            axis.set_major_formatter(FuncFormatter(_tick))
    if x_ticks is not None:
        ax.xaxis.set_major_locator(MaxNLocator(nbins=x_ticks))


def plot_returns(
    steps: Numbers,
    returns: Numbers,
    *,
    title: str = "Average return during training",
    target: float | None = None,
    measured: MeasuredRuns | None = None,
    xlabel: str = "Training step",
    ax: Axes | None = None,
) -> Axes:
    """Plot average return against training step.

    Args:
        steps: the training step of each evaluation.
        returns: the average return measured at each of those steps.
        title: the plot's title.
        target: draw a dashed line at this return (e.g. the score that counts as solved).
        measured: runs measured in advance (:func:`course_helpers.measured_runs`), drawn
            behind this run: the range from the lowest to the highest, their interquartile
            mean, and its 95% bootstrap interval.
        xlabel: what the steps count (lesson 2 counts environment steps).
        ax: draw into these axes instead of a new figure.

    Example:
        >>> ax = plot_returns([0, 1000, 2000], [9.4, 57.0, 200.0], target=195)
    """
    if len(steps) != len(returns):
        raise ValueError(
            gettext(
                "steps and returns must have the same length, got {steps} steps and "
                "{returns} returns. Record the step each time you record a return."
            ).format(steps=len(steps), returns=len(returns))
        )
    if len(steps) == 0:
        raise ValueError(gettext("There is nothing to plot: no evaluation has been recorded yet."))
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    if measured is not None:
        runs = np.asarray(measured.returns, dtype=float)
        ax.fill_between(
            measured.steps,
            runs.min(axis=0),
            runs.max(axis=0),
            color="grey",
            alpha=0.25,
            linewidth=0,
            label=gettext("{runs} measured runs: lowest to highest").format(runs=len(runs)),
        )
        low, high = measured.interquartile_mean_interval()
        ax.fill_between(
            measured.steps,
            low,
            high,
            color="grey",
            alpha=0.45,
            linewidth=0,
            label=gettext("95% bootstrap interval of the interquartile mean"),
        )
        ax.plot(
            measured.steps,
            measured.interquartile_mean(),
            color="dimgrey",
            label=gettext("{runs} measured runs: interquartile mean").format(runs=len(runs)),
        )
    ax.plot(list(steps), list(returns), marker="o", label=gettext("average return"))
    if target is not None:
        ax.axhline(
            target,
            linestyle="--",
            color="grey",
            label=gettext("target ({target})").format(target=number(target)),
        )
    ax.set_title(gettext(title))
    ax.set_xlabel(gettext(xlabel))
    ax.set_ylabel(gettext("Average return"))
    _localize_axes(ax)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    return ax


def plot_q_values(
    steps: Numbers,
    q_values: Numbers,
    *,
    title: str = "Q-value estimates during training",
    bound: float | None = None,
    xlabel: str = "Training step",
    ax: Axes | None = None,
) -> Axes:
    """Plot the average, over a fixed set of observations, of max_a Q(s, a) at each step.

    Args:
        steps: the training step of each measurement.
        q_values: the average greedy Q-value measured at each of those steps.
        title: the plot's title.
        bound: draw a dashed line at the largest value a true Q-value can take, if any
            (on CartPole-v0 with gamma = 1, the 200 rewards of a full episode).
        xlabel: what the steps count (lesson 2 counts environment steps).
        ax: draw into these axes instead of a new figure.
    """
    _same_length(steps, q_values, "q_values")
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    ax.plot(
        list(steps),
        list(q_values),
        marker="o",
        color="tab:purple",
        label=gettext("average of max Q(s, a)"),
    )
    if bound is not None:
        ax.axhline(
            bound,
            linestyle="--",
            color="grey",
            label=gettext("largest true value ({bound})").format(bound=number(round(bound, 1))),
        )
    ax.set_title(gettext(title))
    ax.set_xlabel(gettext(xlabel))
    ax.set_ylabel(gettext("Estimated Q-value"))
    _localize_axes(ax)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    return ax


def plot_q_against_returns(
    predicted: Numbers,
    observed: Numbers,
    *,
    title: str = "Predicted Q-values and the returns that followed",
    ax: Axes | None = None,
) -> Axes:
    """Plot, step by step through one episode, the Q-value the network predicted for the
    action taken and the discounted return actually observed from that step on.

    Args:
        predicted: Q(s_t, a_t) at each step t of the episode.
        observed: the discounted return G_t that followed step t.
        title: the plot's title.
        ax: draw into these axes instead of a new figure.

    Example:
        >>> ax = plot_q_against_returns([9.8, 9.9, 9.7], [2.97, 1.99, 1.0])
    """
    if len(predicted) != len(observed):
        raise ValueError(
            gettext(
                "predicted and observed must have the same length, got {predicted} predicted "
                "values and {observed} observed returns: one of each per step of the episode."
            ).format(predicted=len(predicted), observed=len(observed))
        )
    if len(predicted) == 0:
        raise ValueError(gettext("There is nothing to plot: the episode has no step."))
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    steps = range(len(predicted))
    ax.plot(steps, list(predicted), color="tab:purple", label=gettext("predicted Q(s, a)"))
    ax.plot(
        steps,
        list(observed),
        color="tab:green",
        linestyle="--",
        label=gettext("discounted return observed"),
    )
    ax.set_title(gettext(title))
    ax.set_xlabel(gettext("Step of the episode"))
    ax.set_ylabel(gettext("Value"))
    _localize_axes(ax)
    ax.set_ylim(bottom=min(0.0, float(np.min(predicted)), float(np.min(observed))))
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left")
    return ax


def plot_policy_fit(
    actions: Numbers,
    target: Numbers,
    fitted: Numbers,
    *,
    alpha: float,
    ax: Axes | None = None,
) -> Axes:
    """Plot, over a grid of one-dimensional actions, the density SAC's actor aims at,
    exp(Q/α)/Z, and the density of the actor fitted to it.

    Args:
        actions: the grid of actions.
        target: exp(Q(s, a)/α)/Z at each action of the grid.
        fitted: the fitted actor's density π(a | s) at each action of the grid.
        alpha: the temperature, shown in the title.
        ax: draw into these axes instead of a new figure.

    Example:
        >>> ax = plot_policy_fit([-0.5, 0.0, 0.5], [0.2, 1.5, 0.3], [0.4, 1.0, 0.4], alpha=0.3)
    """
    if not len(actions) == len(target) == len(fitted):
        raise ValueError(
            gettext(
                "actions, target and fitted must have the same length, got {actions}, "
                "{target} and {fitted}: one density value of each per action of the grid."
            ).format(actions=len(actions), target=len(target), fitted=len(fitted))
        )
    if len(actions) == 0:
        raise ValueError(gettext("There is nothing to plot: the grid of actions is empty."))
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(list(actions), list(target), color="tab:blue", label=gettext("target exp(Q/α)/Z"))
    ax.plot(
        list(actions),
        list(fitted),
        color="tab:orange",
        linestyle="--",
        label=gettext("fitted actor π"),
    )
    ax.set_title(gettext("α = {alpha}").format(alpha=number(alpha)))
    ax.set_xlabel(gettext("Action a"))
    ax.set_ylabel(gettext("Density"))
    _localize_axes(ax)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right")
    return ax


def plot_sac_training(
    steps: Numbers,
    *,
    alpha: Numbers,
    entropy: Numbers,
    critic_loss: Numbers,
    actor_loss: Numbers,
    target_entropy: float | None = None,
) -> Figure:
    """Four panels over the training steps: α, the policy's entropy and SAC's two losses.

    Args:
        steps: the training step of each record.
        alpha: the entropy temperature α at each step.
        entropy: an estimate of the policy's entropy, -mean log π(a|s) over a batch.
        critic_loss: the critic loss the learner reported.
        actor_loss: the actor loss the learner reported.
        target_entropy: draw the entropy SAC steers towards as a dashed line.
    """
    series = {
        "alpha": alpha,
        "entropy": entropy,
        "critic_loss": critic_loss,
        "actor_loss": actor_loss,
    }
    if len(steps) == 0:
        raise ValueError(
            gettext(
                "There is nothing to plot yet: the training loop records these "
                "values every log_interval steps."
            )
        )
    for name, values in series.items():
        _same_length(steps, values, name)
    figure, axes = plt.subplots(2, 2, figsize=(10, 6), sharex=True)
    panels = [
        (axes[0, 0], alpha, gettext("Temperature α"), "tab:red"),
        (axes[0, 1], entropy, gettext("Policy entropy"), "tab:green"),
        (axes[1, 0], critic_loss, gettext("Critic loss"), "tab:blue"),
        (axes[1, 1], actor_loss, gettext("Actor loss"), "tab:orange"),
    ]
    for ax, values, label, colour in panels:
        ax.plot(list(steps), list(values), color=colour)
        ax.set_title(label)
        ax.grid(alpha=0.3)
    if target_entropy is not None:
        axes[0, 1].axhline(
            target_entropy,
            linestyle="--",
            color="grey",
            label=gettext("target entropy ({target})").format(target=number(target_entropy)),
        )
        axes[0, 1].legend(loc="upper right")
    axes[0, 0].set_yscale("log")
    for ax in axes.flat:
        _localize_axes(ax, x_ticks=5)  # 8 ticks of "120,000" collide in a panel this wide
    for ax in axes[1]:
        ax.set_xlabel(gettext("Training step"))
    figure.tight_layout()
    return figure


def _same_length(steps: Numbers, values: Numbers, name: str) -> None:
    if len(steps) != len(values):
        raise ValueError(
            gettext(
                "steps and {name} must have the same length, got {steps} steps and {values} "
                "values. Record the step each time you record a value."
            ).format(name=name, steps=len(steps), values=len(values))
        )
    if len(steps) == 0:
        raise ValueError(gettext("There is nothing to plot: no evaluation has been recorded yet."))
