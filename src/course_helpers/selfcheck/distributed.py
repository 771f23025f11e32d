"""Self-checks of lesson 04, distributed SAC."""

from __future__ import annotations

from typing import Any

from course_helpers.i18n import gettext as _
from course_helpers.selfcheck.feedback import Feedback, close, graded, one_number

__all__ = ["samples_per_insert", "policy_lag", "pairs_ahead"]


@graded
def samples_per_insert(
    answer: Any, *, batch_size: int, gradient_steps_per_env_step: float
) -> Feedback:
    """Lesson 04: the limiter's samples per insert for a given replay ratio."""
    value = one_number(answer)
    if value is None:
        return Feedback(False, _("Not yet: write a number."))
    right = batch_size * gradient_steps_per_env_step
    if close(value, right):
        return Feedback(
            True,
            _(
                "Right: each pair written must pay for the batch of one gradient step, and "
                "Reverb counts every pair of that batch as a sample."
            ),
        )
    if close(value, gradient_steps_per_env_step):
        hint = _("Reverb counts sampled items, and a gradient step samples a whole batch.")
    elif close(value, batch_size / 2) and not close(gradient_steps_per_env_step, 0.5):
        hint = _(
            "that is lesson 3's ρ, for one gradient step per two environment steps; count "
            "the gradient steps this question asks for."
        )
    elif close(value, 1 / right) or close(value, gradient_steps_per_env_step / batch_size):
        hint = _("upside down: ρ is pairs sampled per pair written.")
    else:
        hint = _("count the pairs one gradient step samples, per pair written.")
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
    others = (collect_jobs - 1) * per_job  # this job's own pairs left out
    example = 2 * per_job  # the lesson's worked example, with 2 jobs
    if close(value, per_job):
        hint = _("the learner trains on every job's pairs, not only on this job's.")
    elif (
        collect_jobs != 2
        and close(value, others)
        and close(value, example)
        and close(value, collect_steps_per_pull)
    ):
        hint = _(
            "that is the lesson's example, with 2 jobs, or the other jobs' pairs alone, or the "
            "{steps} environment steps of a stretch: here there are {count} jobs, this job's "
            "own pairs count too, and the question counts gradient steps."
        ).format(count=collect_jobs, steps=collect_steps_per_pull)
    elif collect_jobs != 2 and close(value, others) and close(value, example):
        hint = _(
            "that is the lesson's example, with 2 jobs, or the other jobs' pairs alone: "
            "here there are {count} jobs, and this job's own pairs count too."
        ).format(count=collect_jobs)
    elif close(value, others):
        hint = _("count this job's own pairs too: all the jobs write while it plays.")
    elif collect_jobs != 2 and close(value, example):
        hint = _("that is the lesson's example, with 2 jobs; here there are {count}.").format(
            count=collect_jobs
        )
    elif close(value, right / 2):
        hint = _(
            "that is the average over the stretch; the question asks how far behind the "
            "weights are when the job pulls again."
        )
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
    elif close(value, 2 * right):
        hint = _(
            "the error starts at its offset, in the middle of the allowed range, not at its "
            "bottom: it may grow by error_buffer only."
        )
    else:
        hint = _(
            "write the error, inserts × samples_per_insert − samples, with no sample yet, "
            "and find where it leaves the allowed range."
        )
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))
