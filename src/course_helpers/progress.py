"""Progress bars for the lessons' long loops, so a learner sees that work is happening."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from course_helpers.i18n import gettext

if TYPE_CHECKING:  # imported when a bar is made, so that importing the package stays light
    from tqdm.auto import tqdm

T = TypeVar("T")


def progress(iterable: Iterable[T] | int, description: str, **kwargs) -> tqdm:
    """Wrap a loop in a tqdm bar (a widget in JupyterLab, text elsewhere).

    Args:
        iterable: what the loop runs over, or an int ``n`` for ``range(n)``.
        description: a few words shown left of the bar, e.g. "Training"; shown in the
            lesson's language when the helpers' catalog translates it.
        **kwargs: passed to tqdm, e.g. ``total=`` for a generator.

    Example:
        >>> for step in progress(3, "Training", disable=True):
        ...     pass
    """
    from tqdm.auto import tqdm

    steps = range(iterable) if isinstance(iterable, int) else iterable
    kwargs.setdefault("mininterval", 0.5)
    kwargs.setdefault("dynamic_ncols", True)
    return tqdm(steps, desc=gettext(description), **kwargs)


class ProgressObserver:
    """An observer for drivers and actors that shows how far a collection has come.

    Drivers and actors call each observer with every trajectory they produce. This one
    advances a bar for every step, or for every finished episode, and starts a new bar
    once ``total`` is reached, so an evaluation run every few thousand steps gets a
    fresh bar each time.
    """

    def __init__(self, total: int, description: str, count: str = "steps"):
        if not isinstance(total, int) or isinstance(total, bool) or total < 1:
            raise ValueError(f"total must be a positive number of {count}, got {total!r}.")
        if count not in ("steps", "episodes"):
            raise ValueError(f"count must be 'steps' or 'episodes', got {count!r}.")
        self.total, self.description, self.count = total, description, count
        self.bar: tqdm | None = None  # created at the first trajectory, not before
        self.completed = 0  # how many times the bar has filled up

    def __call__(self, trajectory: Any) -> None:
        import numpy as np

        if self.count == "episodes":
            if not bool(np.all(trajectory.is_last())):
                return
            advance = 1
        else:
            # The steps a driver counts towards max_steps: every trajectory but the boundary
            # between two episodes (from a last step to the next first step), as PyDriver does.
            advance = int(np.sum(~np.asarray(trajectory.is_boundary())))
            if not advance:
                return
        if self.bar is None:
            # An episode bar is transient (it reappears at every evaluation); a step bar stays.
            self.bar = progress(
                self.total, self.description, unit=self.count[:-1], leave=self.count == "steps"
            )
        self.bar.update(advance)
        if self.bar.n >= self.total:
            self.bar.close()
            self.bar = None
            self.completed += 1


def progress_observer(total: int, description: str, count: str = "steps") -> ProgressObserver:
    """Return an observer that shows a progress bar over ``total`` steps or episodes.

    In a lesson (the names come from its cells)::

            observer = progress_observer(10_000, "Initial collection")
            actor.Actor(env, policy, train_step, steps_per_run=10_000,
                        observers=[rb_observer, observer])
    """
    return ProgressObserver(total, description, count)
