"""Self-checks for the exercises: an answer at once, in the lesson's language.

A check compares what the learner wrote with what TF-Agents really does, computed at
check time, so no solution is stored in the notebook. When the answer is wrong, the
message names the misunderstanding it most likely comes from (time before batch, a
forgotten axis) instead of saying only "wrong", and it never prints the right answer.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from course_helpers.i18n import gettext as _


@dataclass(frozen=True)
class Feedback:
    """The outcome of one self-check; shows as a short coloured note in a notebook."""

    passed: bool
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return f"{'✔' if self.passed else '✘'} {self.message}"

    def _repr_html_(self) -> str:
        colour = "#1b7f3b" if self.passed else "#b3261e"
        return (f'<div role="status" style="border-left: 4px solid {colour}; '
                f'padding: 0.3em 0.8em">{html.escape(str(self))}</div>')


def _shape(value: Any) -> tuple[int, ...] | None:
    try:
        return tuple(int(n) for n in value)
    except (TypeError, ValueError):
        return None


def dataset_shapes(predicted: Mapping[str, Any], data_spec: Any, *, sample_batch_size: int,
                   num_steps: int, buffer_batch_size: int | None = None) -> Feedback:
    """Check predicted shapes of what ``as_dataset(sample_batch_size, num_steps)`` yields.

    ``predicted`` maps each named spec in ``data_spec`` (``tf.TensorSpec(..., name=...)``)
    to a shape such as ``(8, 3, 5)``. ``buffer_batch_size`` is the buffer's own
    ``batch_size``, which learners often mistake for an axis of the samples.
    """
    import tensorflow as tf

    specs = {spec.name: tuple(spec.shape) for spec in tf.nest.flatten(data_spec)}
    missing = [name for name in specs if name not in predicted]
    if missing:
        return Feedback(False, _("Give a shape for every part of the item: {names} "
                                 "(missing: {missing}).").format(
            names=", ".join(specs), missing=", ".join(missing)))
    for name, item in specs.items():
        shape = _shape(predicted[name])
        if shape is None:
            return Feedback(False, _("Write each shape as a tuple of whole numbers, such as "
                                     "(2, 4); {name} is {value!r}.").format(
                name=name, value=predicted[name]))
        expected = (sample_batch_size, num_steps, *item)
        if shape == expected:
            continue
        if shape == (num_steps, sample_batch_size, *item):
            hint = _("your {name} shape puts time first; as_dataset puts the batch first, "
                     "then time, then the item's own shape.")
        elif shape == (sample_batch_size, *item):
            hint = _("your {name} shape has no time axis: num_steps adds one, right after "
                     "the batch axis.")
        elif shape == (num_steps, *item):
            hint = _("your {name} shape has no batch axis: sample_batch_size adds the first "
                     "axis.")
        elif buffer_batch_size is not None and buffer_batch_size in shape[:2] \
                and buffer_batch_size != sample_batch_size:
            hint = _("your {name} shape uses the buffer's batch_size ({size}). That counts "
                     "the buffer's segments; a sample's batch axis comes from "
                     "sample_batch_size.")
        elif shape[:2] == (sample_batch_size, num_steps):
            hint = _("the first two axes of {name} are right; after them comes the item's "
                     "own shape, as its spec in data_spec gives it.")
        else:
            hint = _("your {name} shape does not follow the order batch, time, item. "
                     "Count which axis each argument adds.")
        return Feedback(False, _("Not yet: {hint}").format(
            hint=hint.format(name=name, size=buffer_batch_size)))
    return Feedback(True, _("Right: every sample is [sample_batch_size, num_steps, ...item], "
                            "batch first, then time."))
