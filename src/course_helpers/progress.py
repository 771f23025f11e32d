"""Progress bars for the lessons' long loops, so a learner sees that work is happening."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")


def progress(iterable: Iterable[T] | int, description: str, **kwargs) -> tqdm:
    """Wrap a loop in a tqdm bar (a widget in JupyterLab, text elsewhere).

    Args:
        iterable: what the loop runs over, or an int ``n`` for ``range(n)``.
        description: a few words shown left of the bar, e.g. "Training".
        **kwargs: passed to tqdm, e.g. ``total=`` for a generator.

    Example:
        >>> for step in progress(3, "Training", disable=True):
        ...     pass
    """
    if isinstance(iterable, int):
        iterable = range(iterable)
    kwargs.setdefault("mininterval", 0.5)
    kwargs.setdefault("dynamic_ncols", True)
    return tqdm(iterable, desc=description, **kwargs)


class ProgressObserver:
    """An observer for drivers and actors that advances a progress bar at every step.

    Drivers and actors call each observer with every trajectory they produce, so adding
    one of these to ``observers=[...]`` shows how far a long collection has come.
    """

    def __init__(self, total: int, description: str):
        if not isinstance(total, int) or total < 1:
            raise ValueError(f"total must be a positive number of steps, got {total!r}.")
        self.bar = progress(total, description)

    def __call__(self, trajectory: object) -> None:
        self.bar.update(1)
        if self.bar.n >= self.bar.total:
            self.bar.close()


def progress_observer(total: int, description: str) -> ProgressObserver:
    """Return an observer that shows a progress bar over ``total`` collected steps.

    Example:
        >>> observer = progress_observer(3, "Collecting")  # doctest: +SKIP
        >>> actor.Actor(env, policy, train_step, steps_per_run=3,
        ...             observers=[rb_observer, observer])  # doctest: +SKIP
    """
    return ProgressObserver(total, description)
