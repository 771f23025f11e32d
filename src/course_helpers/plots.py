"""Plots of training progress, labelled the same way in every lesson."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.axes import Axes

from course_helpers.i18n import gettext


def plot_returns(
    steps: Sequence[int],
    returns: Sequence[float],
    *,
    title: str = "Average return during training",
    target: float | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Plot average return against training step.

    Args:
        steps: the training step of each evaluation.
        returns: the average return measured at each of those steps.
        title: the plot's title.
        target: draw a dashed line at this return (e.g. the score that counts as solved).
        ax: draw into these axes instead of a new figure.

    Example:
        >>> ax = plot_returns([0, 1000, 2000], [9.4, 57.0, 200.0], target=195)
    """
    if len(steps) != len(returns):
        raise ValueError(gettext(
            "steps and returns must have the same length, got {steps} steps and "
            "{returns} returns. Record the step each time you record a return."
        ).format(steps=len(steps), returns=len(returns)))
    if len(steps) == 0:
        raise ValueError(gettext("There is nothing to plot: no evaluation has been recorded yet."))
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    ax.plot(list(steps), list(returns), marker="o", label=gettext("average return"))
    if target is not None:
        ax.axhline(target, linestyle="--", color="grey",
                   label=gettext("target ({target})").format(target=f"{target:g}"))
    ax.set_title(gettext(title))
    ax.set_xlabel(gettext("Training step"))
    ax.set_ylabel(gettext("Average return"))
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    return ax
