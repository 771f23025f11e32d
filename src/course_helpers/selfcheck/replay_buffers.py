"""Self-checks of lesson 01, replay buffers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from course_helpers.i18n import gettext as _
from course_helpers.numbers import number
from course_helpers.selfcheck.feedback import (
    Feedback,
    close,
    graded,
    one_number,
    shape_of,
    whole_number,
)

__all__ = [
    "dataset_shapes",
    "replay_buffer",
    "image_buffer",
    "second_steps",
    "fifo_survivors",
    "n_step_targets",
    "eviction_arithmetic",
]


@graded
def dataset_shapes(
    predicted: Mapping[str, Any],
    data_spec: Any,
    *,
    sample_batch_size: int,
    num_steps: int,
    buffer_batch_size: int | None = None,
) -> Feedback:
    """Check predicted shapes of what ``as_dataset(sample_batch_size, num_steps)`` yields.

    ``predicted`` maps each named spec in ``data_spec`` (``tf.TensorSpec(..., name=...)``)
    to a shape such as ``(8, 3, 5)``. ``buffer_batch_size`` is the buffer's own
    ``batch_size``, which learners often mistake for an axis of the samples.
    """
    import tensorflow as tf

    specs = {spec.name: tuple(spec.shape) for spec in tf.nest.flatten(data_spec)}
    missing = [name for name in specs if name not in predicted]
    if missing:
        return Feedback(
            False,
            _("Give a shape for every part of the item: {names} (missing: {missing}).").format(
                names=", ".join(specs), missing=", ".join(missing)
            ),
        )
    for name, item in specs.items():
        shape = shape_of(predicted[name])
        if shape is None:
            return Feedback(
                False,
                _(
                    "Write each shape as a tuple of whole numbers, such as "
                    "(2, 4); {name} is {value!r}."
                ).format(name=name, value=predicted[name]),
            )
        expected = (sample_batch_size, num_steps, *item)
        if shape == expected:
            continue
        if shape == (num_steps, sample_batch_size, *item):
            hint = _(
                "your {name} shape puts time first; as_dataset puts the batch first, "
                "then time, then the item's own shape."
            )
        elif shape == (sample_batch_size, *item):
            hint = _(
                "your {name} shape has no time axis: num_steps adds one, right after "
                "the batch axis."
            )
        elif shape == (num_steps, *item):
            hint = _("your {name} shape has no batch axis: sample_batch_size adds the first axis.")
        elif (
            buffer_batch_size is not None
            and buffer_batch_size in shape[:2]
            and buffer_batch_size != sample_batch_size
        ):
            hint = _(
                "your {name} shape uses the buffer's batch_size ({size}). That counts "
                "the buffer's segments; a sample's batch axis comes from "
                "sample_batch_size."
            )
        elif shape[:2] == (sample_batch_size, num_steps):
            hint = _(
                "the first two axes of {name} are right; after them comes the item's "
                "own shape, as its spec in data_spec gives it."
            )
        else:
            hint = _(
                "your {name} shape does not follow the order batch, time, item. "
                "Count which axis each argument adds."
            )
        return Feedback(
            False, _("Not yet: {hint}").format(hint=hint.format(name=name, size=buffer_batch_size))
        )
    return Feedback(
        True,
        _(
            "Right: every sample is [sample_batch_size, num_steps, ...item], "
            "batch first, then time."
        ),
    )


@graded
def replay_buffer(
    buffer: Any,
    *,
    image: tuple[tuple[int, ...], Any],
    reward: tuple[tuple[int, ...], Any],
    environments: int,
    steps_per_environment: int,
) -> Feedback:
    """Check a ``TFUniformReplayBuffer`` built for items ``{"image", "reward"}``.

    ``image`` and ``reward`` are the (shape, dtype) the exercise asks for; a grayscale
    image may also carry a channel axis of 1.
    """
    import tensorflow as tf
    from tf_agents.replay_buffers import tf_uniform_replay_buffer

    if not isinstance(buffer, tf_uniform_replay_buffer.TFUniformReplayBuffer):
        return Feedback(
            False,
            _(
                "Not yet: this is not a TFUniformReplayBuffer. Create one from "
                "a data_spec, a batch_size and a max_length."
            ),
        )
    if isinstance(buffer.data_spec, Mapping):  # a dict of specs: its keys name the parts
        specs = {key: spec for key, spec in buffer.data_spec.items()}
    else:
        specs = {spec.name: spec for spec in tf.nest.flatten(buffer.data_spec)}
    if set(specs) != {"image", "reward"}:
        return Feedback(
            False,
            _(
                "Not yet: the data_spec should have two parts, named 'image' and "
                "'reward' (the name argument of tf.TensorSpec, or the keys of a "
                "dictionary of specs); found {names}."
            ).format(names=sorted(str(name) for name in specs)),
        )
    image_shape, image_dtype = image
    reward_shape, reward_dtype = reward
    found = specs["image"]
    if tuple(found.shape) not in (tuple(image_shape), (*image_shape, 1)):
        return Feedback(
            False,
            _(
                "Not yet: one image is a single grayscale frame, so its spec "
                "has the frame's height and width, and nothing for the batch "
                "or for time: the buffer adds those."
            ),
        )
    if found.dtype != image_dtype:
        expected = tf.as_dtype(image_dtype)
        # (The hints ask for the dtype without naming it: the check never gives it away.)
        if found.dtype.is_integer and found.dtype.size <= expected.size:  # int8
            hint = _(
                "Not yet: the image is stored as {dtype}, which holds {low} to {high}: "
                "pixels from 0 to 255 do not all fit. Which dtype holds exactly 0 to 255, "
                "in one byte?"
            )
        elif found.dtype.size <= expected.size:  # bool
            hint = _(
                "Not yet: the image is stored as {dtype}. Camera pixels are whole numbers "
                "from 0 to 255: which dtype holds exactly those, in one byte?"
            )
        else:
            hint = _(
                "Not yet: the image is stored as {dtype}, {size} bytes per pixel. Camera "
                "pixels are whole numbers from 0 to 255: which dtype holds exactly those, "
                "in one byte?"
            )
        return Feedback(
            False,
            hint.format(
                dtype=found.dtype.name,
                size=found.dtype.size,
                low=number(found.dtype.min) if found.dtype.is_integer else "",
                high=number(found.dtype.max) if found.dtype.is_integer else "",
            ),
        )
    found = specs["reward"]
    if tuple(found.shape) != tuple(reward_shape):
        return Feedback(
            False,
            _("Not yet: a reward is one number per step, so its spec has an empty shape: ()."),
        )
    if tf.as_dtype(found.dtype) != tf.as_dtype(reward_dtype):
        if tf.as_dtype(found.dtype).is_floating:  # float16, float64: the buffer does not cast
            hint = _(
                "Not yet: the reward's dtype is {dtype}. TF-Agents' environments and agents "
                "give rewards as {expected}, and a buffer does not convert what it is given: "
                "a {dtype} spec would refuse every real reward."
            )
        else:
            hint = _(
                "Not yet: the reward's dtype is {dtype}. TF-Agents stores rewards as "
                "floating-point numbers: use {expected}, as the question asks."
            )
        return Feedback(
            False,
            hint.format(
                dtype=tf.as_dtype(found.dtype).name, expected=tf.as_dtype(reward_dtype).name
            ),
        )
    batch_size, max_length = int(buffer._batch_size), int(buffer._max_length)
    if (batch_size, max_length) == (steps_per_environment, environments):
        return Feedback(
            False,
            _(
                "Not yet: batch_size and max_length are swapped. batch_size "
                "counts the environments writing side by side; max_length, the "
                "steps each of them keeps."
            ),
        )
    if batch_size != environments:
        return Feedback(
            False,
            _(
                "Not yet: batch_size is the number of environments that write "
                "one step each in every add_batch call, not a training batch."
            ),
        )
    if max_length == environments * steps_per_environment:
        return Feedback(
            False,
            _(
                "Not yet: max_length counts the steps kept for one environment "
                "(one segment), not for all of them together."
            ),
        )
    if max_length != steps_per_environment:
        return Feedback(
            False, _("Not yet: max_length is how many steps each environment's segment keeps.")
        )
    return Feedback(
        True, _("Right: it holds batch_size × max_length items, one segment per environment.")
    )


@graded
def image_buffer(buffer: Any) -> Feedback:
    """Lesson 01, exercise 2: four environments, 1,000 steps each, of an 84×84 grayscale
    image and a reward. The expected spec stays in here so the check cell does not give
    the dtype away."""
    import tensorflow as tf

    return replay_buffer(
        buffer,
        image=((84, 84), tf.uint8),
        reward=((), tf.float32),
        environments=4,
        steps_per_environment=1_000,
    )


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
        return Feedback(
            False,
            _(
                "Not yet: the answer should be a tensor cut out of the sampled "
                "sequences, using indexing."
            ),
        )

    def same(candidate: Any) -> bool:
        return answer.shape == candidate.shape and bool(np.array_equal(answer, candidate))

    if same(sequences[:, 1]):
        return Feedback(
            True,
            _(
                "Right: the second axis is time, so fixing it at 1 keeps the "
                "second step of every sequence in the batch."
            ),
        )
    if same(sequences[1]):
        hint = _(
            "this is the second sequence of the batch, all its steps. The first axis is "
            "the batch; time is the second."
        )
    elif same(sequences[:, 0]):
        hint = _("this is the first step of every sequence; steps are counted from 0.")
    elif same(sequences[:, -1]) or same(sequences[-1]):
        hint = _("this picks the last element of an axis; which axis holds time?")
    elif same(sequences[:, 1:2]):
        hint = _(
            "this keeps a time axis of length 1. Index the time axis with 1 instead of "
            "slicing it with 1:."
        )
    elif answer.shape == sequences.shape:
        hint = _("this is every step of every sequence; keep only one step per sequence.")
    else:
        hint = _(
            "the answer should hold one step for each sequence in the batch. Index the "
            "time axis, the second one."
        )
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


def _numbers(answer: Any) -> set[float] | None:
    """The answer as a set of numbers, or None if it is not a collection of numbers."""
    import numbers

    import numpy as np

    if isinstance(answer, (str, bytes, Mapping)) or answer is Ellipsis:
        return None
    try:
        items = (
            list(np.asarray(answer, dtype=object).reshape(-1))
            if hasattr(answer, "shape")
            else list(answer)
        )
    except TypeError:
        return None
    values = set()
    for item in items:
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, (numbers.Real, np.number)):
            return None
        values.add(float(item))
    return values


@graded
def fifo_survivors(can_be_sampled: Any, buffer: Any, written: Any) -> Feedback:
    """Check the set of items a uniform sample of ``buffer`` can return after FIFO eviction.

    ``buffer`` is a small ``TFUniformReplayBuffer`` of scalar items and ``written`` the
    batches given to its ``add_batch``, in order, one row per call, one column per
    segment. The reference is what the buffer itself still stores, read with one
    deterministic pass; ``written`` only serves to recognise the usual mistakes.
    """
    import numpy as np
    import tensorflow as tf

    answer = _numbers(can_be_sampled)
    if answer is None:
        return Feedback(
            False, _("Not yet: write the items as a set of numbers, such as {1, 2, 3}.")
        )
    stored = {
        float(tf.nest.flatten(item)[0].numpy())
        for item, _info in buffer.as_dataset(single_deterministic_pass=True)
    }
    if answer == stored:
        return Feedback(
            True,
            _(
                "Right: each segment keeps its newest max_length items, and a "
                "uniform sample can return any item of any segment."
            ),
        )
    written = np.asarray(written, dtype=float)
    length = int(buffer._max_length)

    def kept(rows: Any) -> set[float]:
        return {float(value) for value in np.asarray(rows).reshape(-1)}

    segments = [kept(written[-length:, column]) for column in range(written.shape[1])]
    if not answer <= kept(written):
        hint = _(
            "some of these items were never written. Count the add_batch calls and what "
            "each of them wrote to each segment."
        )
    elif answer == kept(written[:length]):
        hint = _(
            "these are the oldest items. FIFO evicts the oldest: first in, first out, so "
            "each new write replaces the item that has been there longest."
        )
    elif answer == kept(written):
        hint = _(
            "your set keeps every item ever written, but max_length caps each segment: "
            "once a segment is full, every add_batch call overwrites its oldest item."
        )
    elif answer in (kept(written[-(length + 1) :]), kept(written[-(length - 1) :])):
        hint = _(
            "off by one: each segment keeps exactly max_length items, the newest ones. "
            "Count them again at both ends."
        )
    elif any(answer == segment for segment in segments):
        hint = _(
            "these are the items of one segment only. A uniform sample draws from every "
            "segment, and each segment keeps its own newest max_length items."
        )
    elif answer < stored:
        hint = _(
            "every item in your set is still stored, but some stored items are missing from it."
        )
    elif answer > stored:
        hint = _("some of these items have already been overwritten.")
    else:
        hint = _(
            "for each segment, keep its newest max_length items; a sample can return any of them."
        )
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


def _n_step_target(rewards: Any, discounts: Any, gamma: float, bootstrap_value: float) -> float:
    """The n-step target as DqnAgent computes it: ``trajectory.to_n_step_transition``, then
    ``reward + gamma * discount * max_a Q(s_{t+n}, a)`` as in ``DqnAgent._loss``."""
    import tensorflow as tf
    from tf_agents.trajectories import trajectory

    n = len(rewards)
    # One sequence of n + 1 steps; the last step's reward and discount are never read.
    reward = tf.constant([[*map(float, rewards), 0.0]], tf.float32)
    discount = tf.constant([[*map(float, discounts), 1.0]], tf.float32)
    steps = tf.zeros([1, n + 1], tf.int32)
    sequence = trajectory.Trajectory(
        step_type=steps,
        observation=tf.zeros([1, n + 1]),
        action=steps,
        policy_info=(),
        next_step_type=steps,
        reward=reward,
        discount=discount,
    )
    transition = trajectory.to_n_step_transition(sequence, gamma=gamma)
    next_step = transition.next_time_step
    return float(next_step.reward[0] + gamma * next_step.discount[0] * bootstrap_value)


def _n_step_variants(
    rewards: list[float], discounts: list[float], gamma: float, bootstrap: float
) -> dict[str, float]:
    """What the usual mistakes give: the sum written out with one thing changed."""
    n = len(rewards)

    def target(
        power: Any,
        cut_rewards: bool = True,
        cut_bootstrap: bool = True,
        bootstrap_power: int | None = None,
        with_bootstrap: bool = True,
        cut_own_reward: bool = False,
    ) -> float:
        total, alive = 0.0, 1.0
        for k, (reward, discount) in enumerate(zip(rewards, discounts)):
            own = discount if cut_own_reward else 1.0
            total += power(k) * (alive * own if cut_rewards else 1.0) * reward
            alive *= discount
        if with_bootstrap:
            exponent = n if bootstrap_power is None else bootstrap_power
            total += power(exponent) * (alive if cut_bootstrap else 1.0) * bootstrap
        return total

    powers = lambda k: gamma**k  # noqa: E731
    return {
        "no gamma": target(lambda k: 1.0),
        "gamma once": target(lambda k: gamma if k else 1.0),
        "bootstrap after the end": target(powers, cut_bootstrap=False),
        "rewards after the end": target(powers, cut_rewards=False),
        "no cut": target(powers, cut_rewards=False, cut_bootstrap=False),
        "no bootstrap": target(powers, with_bootstrap=False),
        "terminal reward dropped": target(powers, cut_own_reward=True),
        "powers from 1": target(lambda k: gamma ** (k + 1)),
        "bootstrap power n - 1": target(powers, bootstrap_power=n - 1),
        "bootstrap power n + 1": target(powers, bootstrap_power=n + 1),
    }


@graded
def n_step_targets(
    answers: Mapping[str, Any],
    *,
    rewards: Mapping[str, Any],
    discounts: Mapping[str, Any],
    gamma: float,
    bootstrap_value: float,
) -> Feedback:
    """Check n-step targets computed by hand, one per named sequence.

    ``rewards[name]`` and ``discounts[name]`` are the ``reward`` and ``discount`` of the
    first n steps of a sampled sequence of n + 1 steps, and ``bootstrap_value`` is
    max_a Q(s_{t+n}, a). The reference is what DqnAgent computes from them.
    """
    if not isinstance(answers, Mapping):
        return Feedback(
            False,
            _("Not yet: keep the dictionary, with one number for each sequence: {names}.").format(
                names=", ".join(rewards)
            ),
        )
    hints = {
        "no gamma": _(
            "the rewards and the bootstrap value are added without γ. Each step "
            "further away weighs γ times the one before it."
        ),
        "gamma once": _(
            "γ multiplies once per step, so the k-th reward after the first is "
            "multiplied by γ to the power k, not by γ alone."
        ),
        "bootstrap after the end": _(
            "the episode ends inside this sequence: its discount of "
            "0 switches off everything after it, the bootstrap value "
            "too. There is nothing left to estimate after a terminal "
            "step."
        ),
        "rewards after the end": _(
            "the rewards after the step whose discount is 0 belong to "
            "another episode; the discount cuts them off."
        ),
        "terminal reward dropped": _(
            "the reward on the transition whose discount is 0 still counts: it was "
            "earned on the way into the end. Only what comes after it is cut off."
        ),
        "no bootstrap": _(
            "the bootstrap value is missing: after n rewards, the target network's "
            "estimate stands in for everything that follows."
        ),
        "powers": _(
            "off by one in the powers of γ: the first reward is not discounted "
            "(γ to the power 0 is 1), the k-th after it gets γ to the power k, and the "
            "bootstrap value, n steps ahead, gets γ to the power n."
        ),
    }
    for name in rewards:
        if name not in answers:
            return Feedback(
                False, _("Not yet: give a number for sequence {name}.").format(name=name)
            )
        answer = one_number(answers[name])
        if answer is None:
            return Feedback(
                False,
                _("Not yet: the target of sequence {name} should be a number.").format(name=name),
            )
        sequence_rewards = [float(r) for r in rewards[name]]
        sequence_discounts = [float(d) for d in discounts[name]]
        right = _n_step_target(sequence_rewards, sequence_discounts, gamma, bootstrap_value)
        if close(answer, right):
            continue
        variants = _n_step_variants(sequence_rewards, sequence_discounts, gamma, bootstrap_value)
        mistake = next(
            (
                kind
                for kind, value in variants.items()
                if not close(value, right) and close(answer, value)
            ),
            None,
        )
        if mistake is not None:
            hint = hints[
                "powers"
                if "power" in mistake
                else "bootstrap after the end"
                if mistake == "no cut"
                else mistake
            ]
        elif abs(answer - right) <= 0.01 * max(1.0, abs(right)):
            hint = _("close, but keep more digits, or let Python do the arithmetic.")
        else:
            hint = _(
                "add the rewards, each multiplied by γ once per step from the first and "
                "cut off after a discount of 0, then the bootstrap value, multiplied by γ "
                "to the power n and by every discount."
            )
        return Feedback(False, _("Not yet, sequence {name}: {hint}").format(name=name, hint=hint))
    return Feedback(
        True,
        _(
            "Right: each reward discounted once per step, the bootstrap value "
            "by γ to the power n, and a discount of 0 cuts off all that "
            "follows, as DqnAgent computes it."
        ),
    )


@graded
def eviction_arithmetic(
    items_stored: Any,
    probability_in_sample: Any,
    *,
    batch_size: int,
    max_length: int,
    add_batch_calls: int,
    sample_batch_size: int,
) -> Feedback:
    """Check how many items a buffer holds after ``add_batch_calls`` writes, and the chance
    that one stored item appears in a sample of ``sample_batch_size`` drawn with replacement.

    The reference comes from a ``TFUniformReplayBuffer`` built and filled here: its
    ``num_frames()`` and the sampling probability its ``BufferInfo`` reports.
    """
    import tensorflow as tf
    from tf_agents.replay_buffers import tf_uniform_replay_buffer

    stored_answer = whole_number(items_stored)
    if stored_answer is None:
        return Feedback(False, _("Not yet: items_stored should be a whole number."))
    buffer = tf_uniform_replay_buffer.TFUniformReplayBuffer(
        tf.TensorSpec([], tf.int32), batch_size=batch_size, max_length=max_length
    )
    for _call in range(add_batch_calls):
        buffer.add_batch(tf.zeros([batch_size], tf.int32))
    stored = int(buffer.num_frames())
    if stored_answer != stored:
        if stored_answer == batch_size * add_batch_calls:
            hint = _(
                "this counts every item ever written, but max_length caps each segment: "
                "once a segment is full, each write evicts its oldest item."
            )
        elif stored_answer == min(add_batch_calls, max_length):
            hint = _(
                "this is one segment's count. Every add_batch call writes one item to "
                "each of the batch_size segments."
            )
        elif stored_answer == add_batch_calls:
            hint = _(
                "this counts add_batch calls. Each call writes one item to each of the "
                "batch_size segments, and each segment keeps at most max_length items."
            )
        elif stored_answer == batch_size * max(add_batch_calls - max_length, 0):
            hint = _("this counts the items that were evicted, not those still stored.")
        else:
            hint = _(
                "each segment holds its newest items, at most max_length of them; add up "
                "the segments."
            )
        return Feedback(False, _("Not yet: {hint}").format(hint=hint))
    probability = one_number(probability_in_sample)
    if probability is None:
        return Feedback(
            False, _("Not yet: probability_in_sample should be a number between 0 and 1.")
        )
    _sample, info = next(iter(buffer.as_dataset(sample_batch_size=1)))
    per_draw = float(info.probabilities[0])  # 1 / N, as the buffer reports it
    right = 1.0 - (1.0 - per_draw) ** sample_batch_size
    if close(probability, right):
        return Feedback(
            True,
            _(
                "Right: the item is missed by one draw with probability 1 − 1/N, "
                "by all k independent draws with that to the power k; the "
                "item is in the sample otherwise."
            ),
        )
    k = sample_batch_size
    if not 0.0 <= probability <= 1.0:
        hint = _("a probability lies between 0 and 1.")
    elif close(probability, k * per_draw):
        hint = _(
            "k/N would be right without replacement. TF-Agents draws with replacement: an "
            "item can come more than once, so find the chance that it never comes, and "
            "take that from 1."
        )
    elif close(probability, per_draw):
        hint = _("that is the chance of one draw; the sample draws sample_batch_size items.")
    elif close(probability, 1.0 - (1.0 - 1.0 / (batch_size * add_batch_calls)) ** k) or close(
        probability, k / (batch_size * add_batch_calls)
    ):
        hint = _("your N counts every item ever written; use the items still stored.")
    elif close(probability, per_draw**k) or close(probability, (1.0 - per_draw) ** k):
        hint = _(
            "(1 − 1/N) to the power k is the chance that the item never comes; the "
            "question asks for the chance that it comes at least once."
        )
    elif abs(probability - right) <= 0.01:
        hint = _("close, but keep more digits, or let Python do the arithmetic.")
    else:
        hint = _(
            "each of the k draws picks one of the N stored items uniformly and "
            "independently. What is the chance that no draw picks this item?"
        )
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))
