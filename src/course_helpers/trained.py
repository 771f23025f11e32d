"""Policies trained by the course and shipped with the helpers, to watch before training.

Lesson 3 opens with a Minitaur that already walks: the actor that one recorded full run of
the lesson kept, saved by ``course ship-policy`` as a TF-Agents SavedModel policy, with
``about.json`` beside it saying where it comes from (date, machine, seed, commit, returns).
It is a stored result, not the learner's run, and the lesson says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from course_helpers.i18n import gettext
from course_helpers.numbers import date, number

#: Lesson 3's policy, by the lesson's name, and the environment it acts in.
MINITAUR = "03_sac_minitaur"
MINITAUR_ENV = "MinitaurBulletEnv-v0"
#: Inside a policy's folder: the SavedModel, and the record of the run it comes from.
SAVED_MODEL = "policy"
ABOUT = "about.json"
_FOLDER = Path(__file__).resolve().parent / "trained_policies"


def policy_dir(lesson: str) -> Path:
    """The folder of the policy shipped for ``lesson`` (the SavedModel and its record)."""
    return _FOLDER / lesson


def trained_policy_dir(lesson: str) -> str:
    """The SavedModel of the policy shipped for ``lesson``, for TF-Agents to load.

    In a lesson::

            policy = py_tf_eager_policy.SavedModelPyTFEagerPolicy(
                trained_policy_dir("03_sac_minitaur"), load_specs_from_pbtxt=True)
    """
    folder = policy_dir(lesson) / SAVED_MODEL
    if not (folder / "saved_model.pb").exists():
        raise FileNotFoundError(
            gettext(
                "No trained policy is shipped for {lesson} in this copy of the course "
                "({folder} is missing). Reinstall the course's helpers, or skip this section."
            ).format(lesson=lesson, folder=folder)
        )
    return str(folder)


def about_trained(lesson: str) -> dict[str, Any]:
    """The record of the run the shipped policy comes from."""
    result: dict[str, Any] = json.loads((policy_dir(lesson) / ABOUT).read_text(encoding="utf-8"))
    return result


#: Settings that change what is shown or logged, not what is learned.
BOOKKEEPING = frozenset(
    {
        "log_interval",
        "num_eval_episodes",
        "policy_save_interval",
        "preview_steps",
        "steps_per_second_interval",
        "video_steps",
    }
)


def describe_trained(lesson: str, settings: Mapping[str, Any] | None = None) -> str:
    """Where the shipped policy comes from, in the lesson's language: a stored result. With
    the notebook's ``settings``, also the ones its run did not share with them."""
    about = about_trained(lesson)
    machine = about["machine"]
    trained_with = about["hyperparameters"]
    text = gettext(
        "A stored result, not your run: the actor kept by one run of this lesson's training "
        "(seed {seed}, {iterations} iterations) on {date}, on a machine with {cores} CPU "
        "cores ({cpu}), at commit {commit}. Its best evaluation, at iteration {step}, was "
        "{best}; on new episodes it scored {kept}."
    ).format(
        seed=about["seed"],
        iterations=number(int(trained_with["num_iterations"])),
        date=date(str(machine["date"])) if machine.get("date") else "?",
        cores=machine.get("cores", "?"),
        cpu=machine.get("cpu", "?"),
        commit=_commit(str(machine.get("commit", "?"))),
        step=number(int(about["best_step"])),
        best=number(about["best_return"], 2),
        kept=number(about["kept_return"], 2),
    )
    if settings is not None:
        differences = [
            f"{name} = {_show(value)}"
            for name, value in sorted(trained_with.items())
            if name not in BOOKKEEPING and settings.get(name) != value
        ]
        if differences:
            text += " " + gettext(
                "It was trained with settings that differ from this notebook's: {differences}."
            ).format(differences=", ".join(differences))
    return text


def _commit(commit: str) -> str:
    """The commit, and whether the lesson had local changes then (a tuning run's edit)."""
    sha, changed, _ = commit.partition(" with local changes")
    return f"{sha} ({gettext('with local changes')})" if changed else sha


def _show(value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return number(value)
    return str(value)
