"""Self-checks of lesson 01, replay buffers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from course_helpers.i18n import gettext as _
from course_helpers.selfcheck.feedback import Feedback, graded, shape_of

__all__ = ["dataset_shapes", "replay_buffer", "image_buffer", "second_steps"]


@graded
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
        shape = shape_of(predicted[name])
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


@graded
def replay_buffer(buffer: Any, *, image: tuple[tuple[int, ...], Any], reward: tuple[tuple[int, ...], Any],
                  environments: int, steps_per_environment: int) -> Feedback:
    """Check a ``TFUniformReplayBuffer`` built for items ``{"image", "reward"}``.

    ``image`` and ``reward`` are the (shape, dtype) the exercise asks for; a grayscale
    image may also carry a channel axis of 1.
    """
    import tensorflow as tf
    from tf_agents.replay_buffers import tf_uniform_replay_buffer

    if not isinstance(buffer, tf_uniform_replay_buffer.TFUniformReplayBuffer):
        return Feedback(False, _("Not yet: this is not a TFUniformReplayBuffer. Create one from "
                                 "a data_spec, a batch_size and a max_length."))
    specs = {spec.name: spec for spec in tf.nest.flatten(buffer.data_spec)}
    if set(specs) != {"image", "reward"}:
        return Feedback(False, _("Not yet: the data_spec should have two parts, named 'image' and "
                                 "'reward' (the third argument of tf.TensorSpec); found {names}.")
                        .format(names=sorted(str(name) for name in specs)))
    image_shape, image_dtype = image
    reward_shape, reward_dtype = reward
    found = specs["image"]
    if tuple(found.shape) not in (tuple(image_shape), (*image_shape, 1)):
        return Feedback(False, _("Not yet: one image is a single grayscale frame, so its spec "
                                 "has the frame's height and width, and nothing for the batch "
                                 "or for time: the buffer adds those."))
    if found.dtype != image_dtype:
        return Feedback(False, _("Not yet: the image is stored as {dtype}. Camera pixels are "
                                 "whole numbers from 0 to 255; {expected} stores each in one "
                                 "byte, {dtype} in more, for the same picture.").format(
            dtype=found.dtype.name, expected=tf.as_dtype(image_dtype).name))
    found = specs["reward"]
    if tuple(found.shape) != tuple(reward_shape) or found.dtype != reward_dtype:
        return Feedback(False, _("Not yet: a reward is one number per step. Its spec is a scalar: "
                                 "an empty shape, and a floating-point dtype."))
    batch_size, max_length = int(buffer._batch_size), int(buffer._max_length)
    if (batch_size, max_length) == (steps_per_environment, environments):
        return Feedback(False, _("Not yet: batch_size and max_length are swapped. batch_size "
                                 "counts the environments writing side by side; max_length, the "
                                 "steps each of them keeps."))
    if batch_size != environments:
        return Feedback(False, _("Not yet: batch_size is the number of environments that write "
                                 "one step each in every add_batch call, not a training batch."))
    if max_length == environments * steps_per_environment:
        return Feedback(False, _("Not yet: max_length counts the steps kept for one environment "
                                 "(one segment), not for all of them together."))
    if max_length != steps_per_environment:
        return Feedback(False, _("Not yet: max_length is how many steps each environment's "
                                 "segment keeps."))
    return Feedback(True, _("Right: it holds batch_size × max_length items, one segment per "
                            "environment."))


@graded
def image_buffer(buffer: Any) -> Feedback:
    """Lesson 01, exercise 2: four environments, 1,000 steps each, of an 84×84 grayscale
    image and a reward. The expected spec stays in here so the check cell does not give
    the dtype away."""
    import tensorflow as tf

    return replay_buffer(buffer, image=((84, 84), tf.uint8), reward=((), tf.float32),
                         environments=4, steps_per_environment=1_000)


@graded
def second_steps(answer: Any, sequences: Any) -> Feedback:
    """Check ``answer`` is the second step of every sampled sequence in ``sequences``.

    ``sequences`` is a ``[batch, time, ...]`` tensor with at least two steps, and a
    batch of at least two, so that the usual confusions can be told apart.
    """
    import numpy as np

    sequences = np.asarray(sequences)
    try:
        answer = np.asarray(answer, dtype=sequences.dtype)
    except (TypeError, ValueError):
        answer = None
    if answer is None or answer.dtype == object:
        return Feedback(False, _("Not yet: the answer should be a tensor cut out of the sampled "
                                 "sequences, using indexing."))

    def same(candidate: Any) -> bool:
        return answer.shape == candidate.shape and bool(np.array_equal(answer, candidate))

    if same(sequences[:, 1]):
        return Feedback(True, _("Right: the second axis is time, so fixing it at 1 keeps the "
                                "second step of every sequence in the batch."))
    if same(sequences[1]):
        hint = _("this is the second sequence of the batch, all its steps. The first axis is "
                 "the batch; time is the second.")
    elif same(sequences[:, 0]):
        hint = _("this is the first step of every sequence; steps are counted from 0.")
    elif same(sequences[:, -1]) or same(sequences[-1]):
        hint = _("this picks the last element of an axis; which axis holds time?")
    elif answer.shape == sequences.shape:
        hint = _("this is every step of every sequence; keep only one step per sequence.")
    else:
        hint = _("the answer should hold one step for each sequence in the batch. Index the "
                 "time axis, the second one.")
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))
