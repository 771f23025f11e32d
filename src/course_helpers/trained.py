"""Policies trained by the course and shipped with the helpers, to watch before training.

Lesson 3 opens with a Minitaur that already walks: the actor that one recorded full run of
the lesson kept, saved by ``course ship-policy`` as a TF-Agents SavedModel policy, with
``about.json`` beside it saying where it comes from (date, machine, seed, commit, returns).
It is a stored result, not the learner's run, and the lesson says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from course_helpers.i18n import gettext
from course_helpers.numbers import number

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


def describe_trained(lesson: str) -> str:
    """Where the shipped policy comes from, in the lesson's language: a stored result."""
    about = about_trained(lesson)
    machine = about["machine"]
    return gettext(
        "A stored result, not your run: the actor kept by one full run of this lesson "
        "(seed {seed}) on {date}, on a machine with {cores} CPU cores ({cpu}), at commit "
        "{commit}. Its best evaluation, at iteration {step}, was {best}; on new episodes it "
        "scored {kept}."
    ).format(
        seed=about["seed"],
        date=str(machine.get("date", ""))[:10],
        cores=machine.get("cores", "?"),
        cpu=machine.get("cpu", "?"),
        commit=machine.get("commit", "?"),
        step=number(int(about["best_step"])),
        best=number(about["best_return"], 2),
        kept=number(about["kept_return"], 2),
    )
