"""Runs of a lesson measured on the course machine and shipped with the course.

One training run says little: two runs of the same seed can end far apart. So a lesson
can draw the learner's own curve over the spread of several runs measured in advance by
``course bench --write-reference`` (several seeds, each more than once), with the
lesson's default hyperparameters. The file says when, where and at which commit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from course_helpers.i18n import gettext


@dataclass(frozen=True)
class MeasuredRuns:
    """The average return at each evaluation of several full runs of one lesson."""

    lesson: str
    date: str
    machine: str
    commit: str
    seeds: tuple[int, ...]
    hyperparameters: dict[str, Any]
    steps: tuple[int, ...]
    #: One row per run, one value per step of ``steps``.
    returns: tuple[tuple[float, ...], ...]

    def __post_init__(self) -> None:
        if not self.returns or any(len(row) != len(self.steps) for row in self.returns):
            raise ValueError(
                gettext(
                    "The measured runs of {lesson} are damaged: every run needs one average "
                    "return per evaluation step. Measure them again with course bench."
                ).format(lesson=self.lesson)
            )

    def description(self) -> str:
        """Which runs, when and where, in the lesson's language: "seeds 300, 301 (26 November
        2026; 2 cores, AMD EPYC, Python 3.11.7)", or "seeds 800, 801, two runs each (...)"
        where every seed ran as often. Seeds are whole numbers, so a comma separates them
        in every language (a semicolon separates decimals only where the comma is the
        decimal mark)."""
        from course_helpers.numbers import date, number

        machine = self.machine
        cores, separator, rest = machine.partition(" cores, ")  # as course bench writes it
        if separator and cores.isdigit():
            machine = gettext("{cores} cores, {rest}").format(cores=number(int(cores)), rest=rest)
        unique = list(dict.fromkeys(self.seeds))
        seeds = ", ".join(number(seed) for seed in unique)
        each = len(self.seeds) // len(unique) if unique else 1
        if each > 1 and all(self.seeds.count(seed) == each for seed in unique):
            return gettext("seeds {seeds}, {runs} runs each ({date}; {machine})").format(
                seeds=seeds, runs=number(each), date=date(self.date), machine=machine
            )
        return gettext("seeds {seeds} ({date}; {machine})").format(
            seeds=", ".join(number(seed) for seed in self.seeds),
            date=date(self.date),
            machine=machine,
        )

    def interquartile_mean(self) -> np.ndarray:
        """The interquartile mean of the runs' returns at each step of ``steps``."""
        return interquartile_mean(np.asarray(self.returns, dtype=float))

    def interquartile_mean_interval(
        self, confidence: float = 0.95, resamples: int = 2000, seed: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        """A percentile bootstrap interval of :meth:`interquartile_mean`, at each step.

        The runs are resampled with replacement ``resamples`` times (one seed, so the
        interval is the same at every call), and the interval holds the middle
        ``confidence`` of the resampled interquartile means.
        """
        return bootstrap_interval(
            np.asarray(self.returns, dtype=float), interquartile_mean, confidence, resamples, seed
        )


def interquartile_mean(runs: np.ndarray) -> np.ndarray:
    """The mean of the middle half of the runs (rows), at each column.

    The lowest and the highest quarter of the runs are left out, as in the interquartile
    mean (IQM) of Agarwal et al. (2021): less sensitive to one odd run than the mean, less
    wasteful of the runs than the median. It counts ``int(0.25 * n)`` runs as a quarter,
    as ``scipy.stats.trim_mean(runs, 0.25)`` does; it is written with NumPy because the
    learner's runtime does not install SciPy.

    Example:
        >>> runs = np.array([[0.0], [10.0], [11.0], [12.0], [13.0], [200.0], [14.0], [15.0]])
        >>> float(interquartile_mean(runs)[0])  # the mean of 11, 12, 13 and 14
        12.5
    """
    runs = np.sort(np.asarray(runs, dtype=float), axis=0)
    quarter = int(0.25 * runs.shape[0])
    return runs[quarter : runs.shape[0] - quarter].mean(axis=0)


def bootstrap_interval(
    runs: np.ndarray,
    statistic: Any,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """The percentile bootstrap interval of ``statistic(runs)`` over resampled runs.

    ``runs`` holds one row per run; ``statistic`` maps such an array to one value per
    column. This is the interval ``rliable`` reports for one task (its stratified
    bootstrap with a single stratum), written out because ``rliable`` and the ``arch``
    package it needs are not in the learner's runtime.
    """
    runs = np.asarray(runs, dtype=float)
    if not 0 < confidence < 1:
        raise ValueError(
            gettext("confidence must be between 0 and 1, got {value}.").format(value=confidence)
        )
    generator = np.random.default_rng(seed)
    picks = generator.integers(0, runs.shape[0], size=(resamples, runs.shape[0]))
    values = np.stack([statistic(runs[pick]) for pick in picks])
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail], axis=0)
    return low, high


def measured_runs(lesson: str) -> MeasuredRuns:
    """The runs measured for ``lesson`` (a notebook's name, e.g. ``"02_dqn_cartpole"``).

    Example:
        >>> runs = measured_runs("02_dqn_cartpole")
        >>> len(runs.returns) == len(runs.seeds)
        True
    """
    path = resources.files("course_helpers") / "measurements" / f"{lesson}.json"
    if not path.is_file():
        raise FileNotFoundError(
            gettext(
                "No measured runs are shipped for {lesson}. The lessons that have them: {known}."
            ).format(lesson=lesson, known=", ".join(known_lessons()) or "-")
        )
    data = json.loads(path.read_text(encoding="utf-8"))
    return MeasuredRuns(
        lesson=lesson,
        date=data["date"],
        machine=data["machine"],
        commit=data["commit"],
        seeds=tuple(data["seeds"]),
        hyperparameters=dict(data["hyperparameters"]),
        steps=tuple(data["steps"]),
        returns=tuple(tuple(row) for row in data["returns"]),
    )


def known_lessons() -> list[str]:
    """The lessons that ship measured runs."""
    folder = resources.files("course_helpers") / "measurements"
    return sorted(
        p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json")
    )
