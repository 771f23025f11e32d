"""What every self-check returns, and how a check fails its cell under nbgrader."""

from __future__ import annotations

import functools
import html
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

Key = TypeVar("Key")


@dataclass(frozen=True)
class Feedback:
    """The outcome of one self-check; shows as a short coloured note in a notebook."""

    passed: bool
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return f"{'✔' if self.passed else '✘'} {self.message}"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # text/plain in a notebook
        printer.text(str(self))

    def _repr_html_(self) -> str:
        colour = "#1b7f3b" if self.passed else "#b3261e"
        return (
            f'<div role="status" style="border-left: 4px solid {colour}; '
            f'padding: 0.3em 0.8em">{html.escape(str(self))}</div>'
        )


def graded(check: Callable[..., Feedback]) -> Callable[..., Feedback]:
    """Make ``check`` fail its cell, with the hint, while nbgrader runs the notebook."""

    @functools.wraps(check)
    def run(*args: Any, **kwargs: Any) -> Feedback:
        feedback = check(*args, **kwargs)
        if not feedback and os.environ.get("NBGRADER_EXECUTION") in ("validate", "autograde"):
            raise AssertionError(str(feedback))
        return feedback

    return run


def shape_of(value: Any) -> tuple[int, ...] | None:
    try:
        return tuple(int(n) for n in value)
    except (TypeError, ValueError):
        return None


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-3 * max(abs(a), abs(b))


def size_of(spec: Any) -> int:
    import numpy as np

    return int(np.prod(spec.shape, dtype=np.int64))


def one_number(answer: Any) -> float | None:
    """``answer`` as a float if it is one number (an int, a float, a NumPy scalar, a tensor
    holding one value); None for anything else, the blank ``...`` of an answer cell included."""
    import numpy as np

    if answer is None or answer is Ellipsis or isinstance(answer, (bool, str, bytes)):
        return None
    try:
        array = np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        return None
    return float(array.reshape(())) if array.size == 1 else None


def whole_number(answer: Any) -> int | None:
    """``answer`` as an int if it is one number with a whole value (``16``, ``np.int64(16)``,
    ``16.0``); None for anything else: ``16.5``, ``True``, ``"16"``, the blank ``...``.

    >>> whole_number(16.0), whole_number(16.5), whole_number(True)
    (16, None, None)
    """
    value = one_number(answer)
    return int(value) if value is not None and value.is_integer() else None


def all_numbers(answers: Mapping[Key, Any]) -> dict[Key, float] | None:
    """Every answer as a float (see :func:`one_number`), or None if any one is not a number.

    >>> all_numbers({"step": 2, "fall": 0.5}), all_numbers({"step": 2, "fall": ...})
    ({'step': 2.0, 'fall': 0.5}, None)
    """
    found: dict[Key, float] = {}
    for key, answer in answers.items():
        value = one_number(answer)
        if value is None:
            return None
        found[key] = value
    return found
