"""Progress bars for the lessons' long loops, so a learner sees that work is happening."""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

from course_helpers.i18n import gettext

if TYPE_CHECKING:  # imported when a bar is made, so that importing the package stays light
    from tqdm.auto import tqdm

T = TypeVar("T")


def progress(iterable: Iterable[T] | int, description: str, **kwargs) -> tqdm:
    """Wrap a loop in a tqdm bar (a widget in JupyterLab, text elsewhere).

    The bar speaks the lesson's language: its description and unit come from the helpers'
    catalog, and its counts, percentage and rate are written as the language writes
    numbers (:mod:`course_helpers.numbers`): "Entraînement : 40 %", "1.500/10.000".

    Args:
        iterable: what the loop runs over, or an int ``n`` for ``range(n)``.
        description: a few words shown left of the bar, e.g. "Training"; shown in the
            lesson's language when the helpers' catalog translates it.
        **kwargs: passed to tqdm, e.g. ``total=`` for a generator, ``unit="step"`` (one of
            :data:`UNITS`, translated too) or ``unit_scale=40`` (each update counts 40).

    Example:
        >>> for step in progress(3, "Training", disable=True):
        ...     pass
    """
    steps = range(iterable) if isinstance(iterable, int) else iterable
    kwargs.setdefault("mininterval", 0.5)
    kwargs.setdefault("dynamic_ncols", True)
    kwargs["unit"] = gettext(kwargs.get("unit", "it"))
    return _localized_tqdm()(steps, desc=gettext(description), **kwargs)


#: The units the helpers and lessons count in, each translated in the helpers' catalog.
UNITS = ("it", "step", "episode", "frame", "pkg", "file", "pair")
#: The bar's layout where the total is known: tqdm's own, with localized fields.
_LAYOUT = "{desc_l}{percentage_l}|{bar}| {n_l}/{total_l} [{elapsed}<{remaining}, {rate_l}{postfix}]"
#: Where the total is unknown (a video's frames): tqdm's own again, a count and a rate.
_OPEN_LAYOUT = "{desc_l}{n_l} [{elapsed}, {rate_l}{postfix}]"


@cache
def _localized_tqdm() -> type:
    """tqdm.auto's class (the notebook widget or the text bar), writing numbers as the
    lesson's language does. tqdm has no locale setting: its fields are replaced here."""
    from tqdm.auto import tqdm

    class LocalizedTqdm(tqdm):
        @property
        def format_dict(self) -> dict[str, Any]:
            fields = super().format_dict
            # No layout or SI prefixes (k, M) asked for: with a total to count towards, or
            # without one.
            if fields["bar_format"] is None and fields["unit_scale"] is not True:
                layout = _LAYOUT if fields["total"] else _OPEN_LAYOUT
                fields.update(bar_format=layout, **_localized_fields(fields))
            return fields

        def set_postfix(self, ordered_dict=None, refresh=True, **kwargs) -> None:
            """Show ``loss=0.52`` as "perda: 0,52": labels from the helpers' catalog
            (:data:`POSTFIX_LABELS`), numbers in the lesson's language."""
            values = {**(ordered_dict or {}), **kwargs}
            self.set_postfix_str(
                " · ".join(
                    gettext("{label}: {value}").format(
                        label=gettext(POSTFIX_LABELS.get(key, key)), value=_postfix_value(value)
                    )
                    for key, value in values.items()
                ),
                refresh=refresh,
            )

    return LocalizedTqdm


#: What the lessons' postfix keywords show: ``set_postfix(avg_return=...)`` reads
#: "average return" in English, each translated in the helpers' catalog.
POSTFIX_LABELS = {
    "loss": "loss",
    "avg_return": "average return",
    "critic_loss": "critic loss",
    "alpha": "α",
    "collect_jobs": "collect jobs",
}


def _postfix_value(value: Any) -> str:
    """A postfix value as the lesson's language writes it: a number with three significant
    digits (as tqdm's own postfix shows them), anything else as it is."""
    from course_helpers.numbers import number

    if isinstance(value, str | bool) or not hasattr(value, "__float__"):
        return str(value)
    magnitude = abs(float(value))
    if isinstance(value, int) or magnitude == 0 or not math.isfinite(magnitude):
        return number(value)
    return number(value, min(6, max(0, 2 - math.floor(math.log10(magnitude)))))


def _localized_fields(fields: dict[str, Any]) -> dict[str, str]:
    """The counts, percentage, rate and description of a bar, in the lesson's language."""
    from course_helpers.numbers import number, percent

    scale = fields["unit_scale"] if fields["unit_scale"] not in (None, False, True) else 1
    done, total, unit = fields["n"] * scale, (fields["total"] or 0) * scale, fields["unit"]
    rate = fields["rate"]
    if rate is None and fields["elapsed"]:
        rate = fields["n"] / fields["elapsed"]
    if not rate:
        written_rate = f"? {unit}/s"
    elif rate * scale < 1:  # slower than one a second: seconds per unit, as tqdm writes it
        written_rate = f"{number(1 / (rate * scale), 2)} s/{unit}"
    else:
        written_rate = f"{number(rate * scale, 2)} {unit}/s"
    description = fields["prefix"]
    return {
        "desc_l": gettext("{description}: ").format(description=description) if description else "",
        "percentage_l": percent(done / total).rjust(4) if total else "",
        "n_l": number(done),
        "total_l": number(total) if total else "?",
        "rate_l": written_rate,
    }


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
