"""Self-checks for the exercises: an answer at once, in the lesson's language.

A check compares what the learner wrote with what TF-Agents really does, computed at
check time, so no solution is stored in the notebook. When the answer is wrong, the
message names the misunderstanding it most likely comes from (time before batch, a
forgotten axis) instead of saying only "wrong", and it never prints the right answer.

While nbgrader runs a notebook (``nbgrader validate`` or ``autograde``, which set
``NBGRADER_EXECUTION`` in the kernel's environment), a check that does not pass raises
``AssertionError`` with its hint instead of returning it, so nbgrader counts its cell as
failed. Everywhere else it only shows the note.
"""

from __future__ import annotations

import functools
import html
import os
from collections.abc import Callable, Mapping
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

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # text/plain in a notebook
        printer.text(str(self))

    def _repr_html_(self) -> str:
        colour = "#1b7f3b" if self.passed else "#b3261e"
        return (f'<div role="status" style="border-left: 4px solid {colour}; '
                f'padding: 0.3em 0.8em">{html.escape(str(self))}</div>')


def _graded(check: Callable[..., Feedback]) -> Callable[..., Feedback]:
    """Make ``check`` fail its cell, with the hint, while nbgrader runs the notebook."""
    @functools.wraps(check)
    def run(*args: Any, **kwargs: Any) -> Feedback:
        feedback = check(*args, **kwargs)
        if not feedback and os.environ.get("NBGRADER_EXECUTION") in ("validate", "autograde"):
            raise AssertionError(str(feedback))
        return feedback
    return run


def _shape(value: Any) -> tuple[int, ...] | None:
    try:
        return tuple(int(n) for n in value)
    except (TypeError, ValueError):
        return None


@_graded
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


@_graded
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


@_graded
def image_buffer(buffer: Any) -> Feedback:
    """Lesson 01, exercise 2: four environments, 1,000 steps each, of an 84×84 grayscale
    image and a reward. The expected spec stays in here so the check cell does not give
    the dtype away."""
    import tensorflow as tf

    return replay_buffer(buffer, image=((84, 84), tf.uint8), reward=((), tf.float32),
                         environments=4, steps_per_environment=1_000)


@_graded
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


def _episode_returns(environment: Any, policy: Any, num_episodes: int) -> list[tuple[float, float]]:
    """(return, reward of the last step) of each episode, as course.average_return plays them."""
    from course_helpers.environments import play

    episodes: list[tuple[float, float]] = []
    for _, time_step in play(environment, policy, num_episodes):
        reward = float(time_step.reward)
        if time_step.is_first():
            episodes.append((0.0, 0.0))
        total, _ = episodes[-1]
        episodes[-1] = (total + reward, reward)
    return episodes


@_graded
def average_return_function(function: Any, environment: Any, policy: Any, num_episodes: int,
                            seed: int = 1) -> Feedback:
    """Lesson 02: ``function(environment, policy, num_episodes)`` must average the returns.

    Both the learner's function and the reference play from the same seed, so they see
    the same episodes with a deterministic policy.
    """
    import numpy as np

    environment.seed(seed)
    try:
        answer = function(environment, policy, num_episodes)
    except Exception as error:  # the learner's code: any error is feedback, not a crash
        return Feedback(False, _("Not yet: your function raised {error}.").format(
            error=f"{type(error).__name__}: {error}"))
    try:  # one number: a float, a NumPy scalar or a scalar tensor
        answer = None if answer is None else float(np.asarray(answer, dtype=float).reshape(()))
    except (TypeError, ValueError):
        answer = None
    if answer is None:
        return Feedback(False, _("Not yet: your function should return the average as a number."))
    environment.seed(seed)
    episodes = _episode_returns(environment, policy, num_episodes)
    returns = [total for total, _ in episodes]

    def close(value: float) -> bool:
        return abs(answer - value) <= 1e-4 * max(1.0, abs(value))

    if close(float(np.mean(returns))):
        return Feedback(True, _("Right: your loop gives the same average return as "
                                "course.average_return, over the same episodes."))
    if close(float(np.sum(returns))) and num_episodes > 1:
        hint = _("this is the total over all episodes; divide by the number of episodes.")
    elif close(float(np.mean([total - last for total, last in episodes]))):
        hint = _("every episode misses its last reward: add the reward of each step, the "
                 "last one included, then stop when the time step is the last.")
    elif close(returns[0]) and num_episodes > 1:
        hint = _("this is the first episode's return only; play num_episodes episodes, each "
                 "starting with reset().")
    else:
        hint = _("this is not the average, over num_episodes episodes, of each episode's "
                 "summed rewards. Check that each episode starts with reset() and ends when "
                 "is_last() is true.")
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


@_graded
def n_step_num_steps(answer: Any, n_step_update: int) -> Feedback:
    """Lesson 02: how many consecutive steps an ``n_step_update`` DQN trains on."""
    if isinstance(answer, bool) or not isinstance(answer, int):
        return Feedback(False, _("Not yet: write a whole number of steps."))
    needed = n_step_update + 1  # DqnAgent.train_sequence_length; tested against TF-Agents
    if answer == needed:
        return Feedback(True, _("Right: the first step, and every step up to the one whose "
                                "observation the update looks at."))
    if answer == 2:
        hint = _("2 is what a one-step update needs; this update looks further ahead.")
    elif answer == n_step_update:
        hint = _("with that many steps, the last one is one step short of the observation the "
                 "update needs.")
    elif answer > needed:
        hint = _("that is more than the update reads. Count the first step, then the steps up "
                 "to the observation it looks at.")
    else:
        hint = _("the update reads the rewards of the next steps and one observation after "
                 "them; count the steps from the first to that observation.")
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


@_graded
def q_network_parameters(answer: Any, observation_size: int, fc_layer_params: tuple[int, ...],
                         num_actions: int) -> Feedback:
    """Lesson 02: the number of weights and biases of a dense Q-network."""
    if isinstance(answer, bool) or not isinstance(answer, int):
        return Feedback(False, _("Not yet: write a whole number of parameters."))
    sizes = [observation_size, *fc_layer_params, num_actions]
    layers = list(zip(sizes, sizes[1:]))
    total = sum(inputs * units + units for inputs, units in layers)
    if answer == total:
        return Feedback(True, _("Right: every dense layer has inputs × units weights and one "
                                "bias per unit."))
    if answer == sum(inputs * units for inputs, units in layers):
        hint = _("you counted the weights; every unit also has a bias.")
    elif answer == sum(inputs * units + units for inputs, units in layers[:-1]):
        hint = _("add the output layer: it computes one Q-value per action.")
    else:
        hint = _("count layer by layer, from the observation to the Q-values: each layer has "
                 "inputs × units weights and one bias per unit.")
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-3 * max(abs(a), abs(b))


@_graded
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
    if _close(ratio, samples / inserts):
        return Feedback(True, _("Right: samples per insert is what the learner reads each second "
                                "divided by what all the actors write, and SampleToInsertRatio "
                                "makes the faster side wait."))
    if _close(ratio, gradient_steps_per_second / inserts):
        hint = _("you counted gradient steps, but Reverb counts sampled items: every step "
                 "samples a whole batch.")
    elif _close(ratio, inserts / samples):
        hint = _("the ratio is upside down: it is samples divided by inserts.")
    elif _close(ratio, samples / inserts_per_actor_per_second):
        hint = _("every actor writes into the same table; count the inserts of all of them.")
    else:
        hint = _("work out how many items the learner samples per second and how many the "
                 "actors insert per second, then divide.")
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


def _size(spec: Any) -> int:
    import numpy as np

    return int(np.prod(spec.shape, dtype=np.int64))


@_graded
def actor_outputs(answer: Any, action_spec: Any) -> Feedback:
    """Lesson 03: how many numbers the SAC actor's last layer gives per observation."""
    if isinstance(answer, bool) or not isinstance(answer, int):
        return Feedback(False, _("Not yet: write a whole number."))
    motors = _size(action_spec)
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


@_graded
def critic_input_size(answer: Any, observation_spec: Any, action_spec: Any) -> Feedback:
    """Lesson 03: the length of the vector that enters the critic's joint layers."""
    if isinstance(answer, bool) or not isinstance(answer, int):
        return Feedback(False, _("Not yet: write a whole number."))
    observation, action = _size(observation_spec), _size(action_spec)
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
