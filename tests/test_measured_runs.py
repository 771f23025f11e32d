"""The runs measured in advance that lesson 2 draws behind the learner's own curve."""

from __future__ import annotations

import json
from importlib import resources

import nbformat
import numpy as np
import pytest

from course_helpers.measured_runs import (
    MeasuredRuns,
    bootstrap_interval,
    interquartile_mean,
    known_lessons,
    measured_runs,
)
from course_tools import lessons


def lesson_defaults(lesson: str) -> dict:
    """The full values of a lesson's hyperparameters cell, as a learner runs it."""
    notebook = nbformat.read(lessons.lesson_path(lesson), as_version=4)
    source = next(cell.source for cell in notebook.cells if cell.get("id") == "hyperparameters")

    class Course:
        @staticmethod
        def hyperparameters(*, quick=None, multiples_of=None, **full):
            return full

    namespace: dict = {"course": Course}
    exec(source.replace("\nhp\n", "\n").removesuffix("\nhp"), namespace)
    return namespace["hp"]


def test_lesson_2_ships_its_measured_runs_with_seeds_date_machine_and_commit():
    assert "02_dqn_cartpole" in known_lessons()
    runs = measured_runs("02_dqn_cartpole")
    assert len(runs.returns) == len(runs.seeds) >= 10
    assert len(set(runs.seeds)) >= 5  # several seeds, each measured more than once
    assert runs.date and runs.machine and runs.commit
    assert all(len(row) == len(runs.steps) for row in runs.returns)


def test_the_shipped_runs_were_measured_with_the_lessons_current_defaults():
    """A reference measured with other settings than the lesson's would mislead: change a
    default, and this fails until `course bench --only dqn --write-reference` is run again."""
    runs = measured_runs("02_dqn_cartpole")
    assert runs.hyperparameters == lesson_defaults("02_dqn_cartpole")
    steps = lesson_defaults("02_dqn_cartpole")
    assert runs.steps[-1] == steps["num_env_steps"]


def test_the_description_says_which_runs_when_and_where_in_the_lessons_language(monkeypatch):
    from course_helpers import i18n

    runs = MeasuredRuns(
        "x",
        "2026-11-26T21:00:00",
        "2 cores, AMD EPYC, Python 3.11.7",
        "c",
        (300, 301),
        {},
        (1000,),
        ((1.0,), (2.0,)),
    )
    assert runs.description() == (
        "seeds 300, 301 (26 November 2026; 2 cores, AMD EPYC, Python 3.11.7)"
    )
    monkeypatch.setattr(i18n, "_language", "pt-br")
    assert runs.description() == (
        "sementes 300, 301 (26 de novembro de 2026; 2 núcleos, AMD EPYC, Python 3.11.7)"
    )
    twice = MeasuredRuns(
        "x", "2026-11-26", "2 cores, AMD EPYC, Python 3.11.7", "c", (300, 301, 300, 301),
        {}, (1000,), ((1.0,), (2.0,), (1.0,), (2.0,)),
    )  # fmt: skip
    assert twice.description().startswith("sementes 300, 301, 2 execuções cada (26 de novembro")


def test_an_unknown_lesson_is_refused_listing_the_ones_that_have_runs():
    with pytest.raises(FileNotFoundError, match="The lessons that have them: .*02_dqn_cartpole"):
        measured_runs("99_nothing")


def test_runs_with_a_missing_value_are_refused_as_damaged():
    with pytest.raises(ValueError, match="damaged"):
        MeasuredRuns("x", "d", "m", "c", (1, 2), {}, (1000, 2000), ((1.0, 2.0), (1.0,)))


def test_the_file_is_plain_json_that_the_package_ships():
    path = resources.files("course_helpers") / "measurements" / "02_dqn_cartpole.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert set(data) == {
        "date",
        "machine",
        "commit",
        "seeds",
        "hyperparameters",
        "steps",
        "returns",
    }


def test_interquartile_mean_leaves_out_the_lowest_and_highest_quarter_of_the_runs():
    runs = np.array([[0.0, 9.0], [10.0, 9.0], [11.0, 9.0], [12.0, 9.0],
                     [13.0, 9.0], [200.0, 9.0], [14.0, 9.0], [15.0, 9.0]])  # fmt: skip
    np.testing.assert_allclose(interquartile_mean(runs), [12.5, 9.0])
    # Fewer than four runs: no quarter to leave out, so the plain mean.
    np.testing.assert_allclose(interquartile_mean(np.array([[1.0], [2.0], [6.0]])), [3.0])


def test_the_bootstrap_interval_holds_the_statistic_and_narrows_with_more_runs():
    generator = np.random.default_rng(1)
    few = generator.normal(100.0, 20.0, size=(10, 1))
    many = generator.normal(100.0, 20.0, size=(400, 1))
    low, high = bootstrap_interval(few, interquartile_mean)
    assert low[0] <= interquartile_mean(few)[0] <= high[0]
    many_low, many_high = bootstrap_interval(many, interquartile_mean)
    assert many_high[0] - many_low[0] < (high[0] - low[0]) / 3
    assert many_low[0] < 100.0 < many_high[0]
    # One seed: the same interval at every call, so a plot never changes between runs.
    again_low, again_high = bootstrap_interval(few, interquartile_mean)
    np.testing.assert_array_equal(again_low, low)
    np.testing.assert_array_equal(again_high, high)
    with pytest.raises(ValueError, match="confidence must be between 0 and 1"):
        bootstrap_interval(few, interquartile_mean, confidence=95)


def test_plot_returns_draws_the_measured_runs_behind_the_learners_run():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from course_helpers.plots import plot_returns

    rows = ((50.0, 200.0), (70.0, 150.0), (10.0, 190.0), (60.0, 180.0), (65.0, 170.0))
    runs = MeasuredRuns("x", "d", "m", "c", (1, 1, 2, 2, 3), {}, (1000, 2000), rows)
    try:
        ax = plot_returns([0, 1000, 2000], [9.0, 60.0, 200.0], target=195, measured=runs)
        iqm, learner, _target = ax.get_lines()
        # Five runs: one lowest and one highest left out at each step.
        np.testing.assert_allclose(
            np.asarray(iqm.get_ydata(), dtype=float), [(50 + 60 + 65) / 3, (170 + 180 + 190) / 3]
        )
        np.testing.assert_array_equal(learner.get_ydata(), [9.0, 60.0, 200.0])
        spread, interval = ax.collections
        vertices = {tuple(v) for v in np.asarray(spread.get_paths()[0].vertices).tolist()}
        assert vertices >= {(1000, 10.0), (2000, 150.0), (1000, 70.0), (2000, 200.0)}
        low, high = runs.interquartile_mean_interval()
        inner = {tuple(v) for v in np.asarray(interval.get_paths()[0].vertices).tolist()}
        assert inner >= {(1000, low[0]), (2000, high[1])}
        assert 10.0 <= low[0] < high[0] <= 70.0
        legend = ax.get_legend()
        assert legend is not None
        labels = [t.get_text() for t in legend.get_texts()]
        assert "5 measured runs: interquartile mean" in labels
        assert "5 measured runs: lowest to highest" in labels
        assert "95% bootstrap interval of the interquartile mean" in labels
    finally:
        plt.close("all")
