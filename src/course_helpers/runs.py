"""What a long training run keeps on disk, so that it survives a restart.

A run's folder holds TF-Agents' own checkpoints (the Learner writes the networks, the
optimizers, α and the train step under ``train/checkpoints``; Reverb writes the replay
table under ``train/replay_buffer_checkpoints``) and the lesson's own record of the run:
its evaluations, its training curves and the actor it keeps, saved beside each
checkpoint by :func:`save_progress` and read back by :func:`saved_progress`.

The folder is named after the lesson, the seed and a digest of the settings, so that a
run started again with the same settings resumes, and one with other settings starts
afresh in a folder of its own: no earlier run is overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from course_helpers.i18n import gettext
from course_helpers.numbers import number

#: Where run folders go when this variable names a folder (the tests, or a Drive folder).
RUNS_VARIABLE = "COURSE_RUNS"
#: Where run folders go on Colab once Google Drive is mounted, so a run outlives the runtime.
COLAB_DRIVE = Path("/content/drive/MyDrive")
#: The Learner's checkpoints inside a run folder (``learner.TRAIN_DIR``/``POLICY_CHECKPOINT_DIR``).
CHECKPOINTS = Path("train") / "checkpoints"
PROGRESS = "progress"


def runs_base() -> Path:
    """The folder that holds the run folders: ``$COURSE_RUNS``; else, on Colab with Drive
    mounted, ``tf-agents-course/runs`` on Drive; else ``runs`` beside the notebook."""
    chosen = os.environ.get(RUNS_VARIABLE, "").strip()
    if chosen:
        return Path(chosen).expanduser()
    if COLAB_DRIVE.is_dir():
        return COLAB_DRIVE / "tf-agents-course" / "runs"
    return Path.cwd() / "runs"


def run_folder(lesson: str, seed: int, settings: Mapping[str, Any]) -> Path:
    """The folder of this lesson's run with this seed and these settings (made if new).

    The settings are written to ``settings.json`` in it, for the learner to read.
    """
    text = json.dumps(dict(settings), sort_keys=True, default=str)
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    folder = runs_base() / f"{lesson}-seed-{seed}-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    settings_file = folder / "settings.json"
    if not settings_file.exists():
        _write_atomically(settings_file, json.dumps(dict(settings), indent=1, default=str))
    return folder


def new_run_folder(lesson: str) -> Path:
    """A new, empty folder for one run of ``lesson``, named by the time it was made
    (``04_distributed_sac-20261127-112640``): a run that does not resume never meets an
    earlier run's files."""
    import time

    stamp = time.strftime("%Y%m%d-%H%M%S")
    for attempt in range(1000):
        folder = runs_base() / (f"{lesson}-{stamp}" + (f"-{attempt}" if attempt else ""))
        try:
            folder.mkdir(parents=True)
        except FileExistsError:
            continue
        return folder
    raise FileExistsError(f"{runs_base()} already holds 1000 runs of {lesson} made at {stamp}")


def checkpoint_step(folder: str | os.PathLike[str]) -> int:
    """The train step of the newest Learner checkpoint in ``folder``; 0 when there is none."""
    steps = [
        int(match.group(1))
        for path in (Path(folder) / CHECKPOINTS).glob("ckpt-*.index")
        if (match := re.fullmatch(r"ckpt-(\d+)\.index", path.name))
    ]
    return max(steps, default=0)


def describe_run(folder: str | os.PathLike[str]) -> str:
    """One sentence for the learner: a new run, or one that resumes, and from which step."""
    step = checkpoint_step(folder)
    if step:
        return gettext(
            "This run was saved at iteration {step}: it resumes from there. Its folder: {folder}"
        ).format(step=number(step), folder=folder)
    return gettext("A new run. Its checkpoints go to {folder}").format(folder=folder)


def save_progress(folder: str | os.PathLike[str], step: int, **groups: Any) -> Path:
    """Save the lesson's record of the run at ``step``: each group a tuple of lists of
    numbers or of NumPy arrays (the kept actor's weights). Written next to the checkpoint of
    the same step, and atomically: a run stopped while saving keeps its previous record."""
    import numpy as np

    target = Path(folder) / PROGRESS
    target.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, Any] = {}

    def encode(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            key = f"a{len(arrays)}"
            arrays[key] = value
            return {"array": key}
        if isinstance(value, (list, tuple)):
            return [encode(item) for item in value]
        if isinstance(value, (np.floating, np.integer)):
            return value.item()
        return value

    record = {"step": int(step), "groups": {name: encode(value) for name, value in groups.items()}}
    stem = target / f"step-{int(step):09d}"
    temporary = stem.with_suffix(".npz.partial")
    with open(temporary, "wb") as file:
        np.savez(file, **arrays)
    os.replace(temporary, stem.with_suffix(".npz"))
    _write_atomically(stem.with_suffix(".json"), json.dumps(record))
    return stem.with_suffix(".json")


def saved_progress(folder: str | os.PathLike[str], step: int) -> dict[str, Any]:
    """The newest record :func:`save_progress` wrote at or before ``step`` (the checkpoint
    the run resumes from), as ``{group: tuple}``; ``{}`` for a new run.

    A run stopped between its checkpoint and its record resumes with the record before.
    """
    import numpy as np

    saved = sorted(
        path
        for path in (Path(folder) / PROGRESS).glob("step-*.json")
        if int(path.stem.removeprefix("step-")) <= step
    )
    if not step or not saved:
        return {}
    stem = saved[-1].with_suffix("")
    record = json.loads(stem.with_suffix(".json").read_text(encoding="utf-8"))
    with np.load(stem.with_suffix(".npz")) as stored:
        arrays = {key: stored[key] for key in stored.files}

    def decode(value: Any) -> Any:
        if isinstance(value, dict) and set(value) == {"array"}:
            return arrays[value["array"]]
        if isinstance(value, list):
            return [decode(item) for item in value]
        return value

    return {name: tuple(decode(value)) for name, value in record["groups"].items()}


def _write_atomically(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
