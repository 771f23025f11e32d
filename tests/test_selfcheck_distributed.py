"""Lesson 4's self-checks: the right answer passes, and each likely mistake gets its hint."""

from __future__ import annotations

import pytest

import course_helpers as course


@pytest.mark.parametrize(
    "answer, passed, hint",
    [
        (256, True, "Right"),
        (1, False, "a gradient step samples a whole batch"),
        (1 / 256, False, "upside down"),
        (128, False, "lesson 3's ρ, for one gradient step per two environment steps"),
        (..., False, "write a number"),
    ],
)
def test_samples_per_insert_for_one_gradient_step_per_environment_step(answer, passed, hint):
    feedback = course.selfcheck.samples_per_insert(
        answer, batch_size=256, gradient_steps_per_env_step=1.0
    )
    assert bool(feedback) is passed and hint in feedback.message


@pytest.mark.parametrize(
    "answer, passed, hint",
    [
        (150, True, "Right"),
        (50, False, "every job's pairs"),
        (75, False, "the average over the stretch"),
        # 100 is three mistakes at once here: the lesson's 2-job example, the other two
        # jobs' pairs alone, and one job's environment steps; the hint names all three.
        (
            100,
            False,
            "the lesson's example, with 2 jobs, or the other jobs' pairs alone, or "
            "the 100 environment steps of a stretch",
        ),
        (300, False, "environment steps"),
        (3, False, "count the pairs"),
    ],
)
def test_policy_lag_counts_every_jobs_pairs_in_gradient_steps(answer, passed, hint):
    feedback = course.selfcheck.policy_lag(
        answer, collect_jobs=3, collect_steps_per_pull=100, batch_size=256, samples_per_insert=128.0
    )
    assert bool(feedback) is passed and hint in feedback.message


@pytest.mark.parametrize(
    "answer, hint",
    [
        (200, "count this job's own pairs too"),
        (100, "that is the lesson's example, with 2 jobs; here there are 5."),
        (125, "the average over the stretch"),
        (500, "environment steps"),
    ],
)
def test_policy_lag_names_each_mistake_where_they_give_different_numbers(answer, hint):
    # With 5 jobs: 50 per job, right 250; the other jobs' 200, the 2-job example's 100.
    feedback = course.selfcheck.policy_lag(
        answer, collect_jobs=5, collect_steps_per_pull=100, batch_size=256, samples_per_insert=128.0
    )
    assert not feedback and hint in feedback.message


@pytest.mark.parametrize(
    "answer, passed, hint",
    [
        (1_000, True, "Right"),
        (11_000, False, "first pairs too"),
        (128_000, False, "each pair written adds"),
        (2_000, False, "in the middle of the allowed range"),
        (5, False, "write the error"),
    ],
)
def test_pairs_ahead_of_a_learner_that_has_not_sampled(answer, passed, hint):
    feedback = course.selfcheck.pairs_ahead(
        answer, min_size_to_sample=10_000, samples_per_insert=128.0, error_buffer=128_000.0
    )
    assert bool(feedback) is passed and hint in feedback.message
