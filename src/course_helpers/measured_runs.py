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
