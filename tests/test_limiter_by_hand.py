"""Lesson 4's rate limiter by hand: what its explanation says the race shows."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

import course_helpers as course

LESSON = Path(__file__).resolve().parents[1] / "notebooks/en/04_distributed_sac.ipynb"


@pytest.fixture(scope="module")
def race():
    cell = next(c for c in nbformat.read(LESSON, 4).cells if c.get("id") == "limiter-by-hand")
    namespace = {"course": course}
    exec(cell.source, namespace)  # the lesson's own code, as the learner runs it
    return namespace["race"]


def test_one_job_leaves_the_learner_waiting_at_the_bottom_of_the_range(race):
    r = race(1)
    assert r["steps"] / len(r["errors"]) == pytest.approx(0.5, abs=0.03)  # a step every other tick
    assert r["job_waits"] == 0 and r["learner_waits"] > 1_000
    assert r["errors"][-1] == -r["e"]  # the bottom of [ρm - e, ρm + e]
    assert 1.9 < r["new_pairs"] / r["steps"] < 2  # B/ρ, less the slack the learner spent


def test_four_jobs_wait_for_the_learner_at_the_top_of_the_range(race):
    r = race(4)
    assert r["steps"] / len(r["errors"]) == pytest.approx(1, abs=0.01)
    assert r["learner_waits"] == 0
    offered = 4 * len(r["errors"])
    assert r["job_waits"] / offered == pytest.approx(0.5, abs=0.03)  # half the pairs offered
    assert r["e"] - 256 <= r["errors"][-1] <= r["e"]  # the top, less the last batch
    assert 2 < r["new_pairs"] / r["steps"] < 2.1  # B/ρ, plus the slack the jobs spent


def test_e_never_leaves_the_allowed_range(race):
    for jobs in (1, 2, 4):
        r = race(jobs)
        assert -r["e"] <= min(r["errors"]) and max(r["errors"]) <= r["e"]


def test_the_ratio_is_b_over_rho_whatever_the_speeds(race):
    assert race(2)["new_pairs"] / race(2)["steps"] == pytest.approx(2, abs=0.01)
    r = race(4, rho=256.0)  # exercise 1's ratio: one new pair per gradient step
    assert r["new_pairs"] / r["steps"] == pytest.approx(1, abs=0.05)
