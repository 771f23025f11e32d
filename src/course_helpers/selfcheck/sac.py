"""Self-checks of lesson 03, SAC on Minitaur."""

from __future__ import annotations

from typing import Any

from course_helpers.i18n import gettext as _
from course_helpers.selfcheck.feedback import Feedback, close, graded, size_of

__all__ = ["rate_limiter", "actor_outputs", "critic_input_size"]


@graded
def rate_limiter(limiter: Any, *, actors: int, inserts_per_actor_per_second: float,
                 gradient_steps_per_second: float, batch_size: int) -> Feedback:
    """Lesson 03: a rate limiter that keeps separate actors and a learner in step.

    Works with Reverb's limiters and with the in-process stand-in's, which keep the ratio
    under different attribute names.
    """
    kind = type(limiter).__name__
    if kind == "MinSize":
        return Feedback(False, _("Not yet: MinSize stops nothing once the table is filled. Here "
                                 "the learner reads far more than the actors write, so it would "
                                 "train on the same pairs over and over. Choose a limiter that "
                                 "keeps a ratio."))
    if kind != "SampleToInsertRatio":
        return Feedback(False, _("Not yet: build the limiter with reverb.rate_limiters, as the "
                                 "table cell does."))
    ratio = getattr(limiter, "samples_per_insert", None)
    ratio = float(getattr(limiter, "_samples_per_insert", ratio))
    inserts = actors * inserts_per_actor_per_second
    samples = gradient_steps_per_second * batch_size
    if close(ratio, samples / inserts):
        return Feedback(True, _("Right: samples per insert is what the learner reads each second "
                                "divided by what all the actors write, and SampleToInsertRatio "
                                "makes the faster side wait."))
    if close(ratio, gradient_steps_per_second / inserts):
        hint = _("you counted gradient steps, but Reverb counts sampled items: every step "
                 "samples a whole batch.")
    elif close(ratio, inserts / samples):
        hint = _("the ratio is upside down: it is samples divided by inserts.")
    elif close(ratio, samples / inserts_per_actor_per_second):
        hint = _("every actor writes into the same table; count the inserts of all of them.")
    else:
        hint = _("work out how many items the learner samples per second and how many the "
                 "actors insert per second, then divide.")
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


@graded
def actor_outputs(answer: Any, action_spec: Any) -> Feedback:
    """Lesson 03: how many numbers the SAC actor's last layer gives per observation."""
    if isinstance(answer, bool) or not isinstance(answer, int):
        return Feedback(False, _("Not yet: write a whole number."))
    motors = size_of(action_spec)
    if answer == 2 * motors:  # TanhNormalProjectionNetwork: a mean and a spread per motor
        return Feedback(True, _("Right: a mean and a standard deviation for every motor; the "
                                "action is sampled from them."))
    if answer == motors:
        hint = _("one number per motor would be a fixed action. The actor describes a "
                 "distribution: what does a normal distribution need, for each motor?")
    elif answer in (1, 2):
        hint = _("the actor describes the distribution of every motor's command, not of a "
                 "single number.")
    else:
        hint = _("count the numbers that describe a normal distribution, for each motor.")
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


@graded
def critic_input_size(answer: Any, observation_spec: Any, action_spec: Any) -> Feedback:
    """Lesson 03: the length of the vector that enters the critic's joint layers."""
    if isinstance(answer, bool) or not isinstance(answer, int):
        return Feedback(False, _("Not yet: write a whole number."))
    observation, action = size_of(observation_spec), size_of(action_spec)
    if answer == observation + action:
        return Feedback(True, _("Right: the critic scores a pair, so it reads the observation "
                                "and the action side by side."))
    if answer == observation:
        hint = _("that is the observation alone. The critic scores an action in a situation; "
                 "what else must it read?")
    elif answer == action:
        hint = _("that is the action alone. The critic needs to know the situation too.")
    elif answer == observation * action:
        hint = _("the two inputs are put side by side, not multiplied.")
    else:
        hint = _("add up the numbers that go in: what the robot observes and what it does.")
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))
