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
