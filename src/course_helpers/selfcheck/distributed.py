"""Self-checks of lesson 04, distributed SAC."""

from __future__ import annotations

from typing import Any

from course_helpers.i18n import gettext as _
from course_helpers.selfcheck.feedback import Feedback, close, graded, one_number

__all__ = ["pairs_per_gradient_step", "policy_lag", "pairs_ahead"]


@graded
def pairs_per_gradient_step(
    answer: Any, *, collect_jobs: int, batch_size: int, samples_per_insert: float
) -> Feedback:
    """Lesson 04: how many new pairs the rate limiter lets in per gradient step."""
    value = one_number(answer)
    if value is None:
        return Feedback(False, _("Not yet: write a number."))
    right = batch_size / samples_per_insert
    if close(value, right):
        return Feedback(
            True,
            _(
                "Right: a gradient step samples a whole batch, and the limiter lets in one "
                "pair per samples_per_insert samples, however many jobs write them."
            ),
        )
    if close(value, right * collect_jobs) or close(value, right / collect_jobs):
        hint = _(
            "the limiter counts the table's inserts, not any one job's: the number of "
            "collect jobs changes who writes the pairs, not how many there are."
        )
    elif close(value, samples_per_insert / batch_size):
        hint = _("upside down: a step samples batch_size pairs; how many inserts pay for that?")
    elif close(value, 1 / samples_per_insert):
        hint = _("Reverb counts sampled items, and a gradient step samples a whole batch.")
    else:
        hint = _("start from what one gradient step samples, then apply the ratio.")
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


@graded
def policy_lag(
    answer: Any,
    *,
    collect_jobs: int,
    collect_steps_per_pull: int,
    batch_size: int,
    samples_per_insert: float,
) -> Feedback:
    """Lesson 04: how many gradient steps old a collect job's weights are when it pulls."""
    value = one_number(answer)
    if value is None:
        return Feedback(False, _("Not yet: write a number."))
    per_job = collect_steps_per_pull * samples_per_insert / batch_size
    right = collect_jobs * per_job
    if close(value, right):
        return Feedback(
            True,
            _(
                "Right: while one job plays its steps, every other job writes as many, and "
                "the learner takes a step for every batch_size / samples_per_insert pairs."
            ),
        )
    if close(value, per_job):
        hint = _("the learner trains on every job's pairs, not only on this job's.")
    elif close(value, collect_steps_per_pull) or close(
        value, collect_jobs * collect_steps_per_pull
    ):
        hint = _("that counts environment steps; how many gradient steps do those pairs pay for?")
    else:
        hint = _(
            "count the pairs all the jobs write while this one plays its steps, then the "
            "gradient steps the limiter allows for them."
        )
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


@graded
def pairs_ahead(
    answer: Any, *, min_size_to_sample: int, samples_per_insert: float, error_buffer: float
) -> Feedback:
    """Lesson 04: how far the collect jobs may run ahead of a learner that has not sampled."""
    value = one_number(answer)
    if value is None:
        return Feedback(False, _("Not yet: write a number."))
    right = error_buffer / samples_per_insert
    if close(value, right):
        return Feedback(
            True,
            _(
                "Right: the error may grow by error_buffer beyond its starting offset, and "
                "each insert adds samples_per_insert to it."
            ),
        )
    if close(value, min_size_to_sample + right):
        hint = _(
            "that counts the table's first pairs too; the question asks for the pairs after them."
        )
    elif close(value, error_buffer):
        hint = _("the error counts samples; each pair written adds samples_per_insert of them.")
    else:
        hint = _(
            "write the error, inserts × samples_per_insert − samples, with no sample yet, "
            "and find where it leaves the allowed range."
        )
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))
