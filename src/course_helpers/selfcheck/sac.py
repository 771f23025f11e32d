"""Self-checks of lesson 03, SAC on Minitaur."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from course_helpers.i18n import gettext as _
from course_helpers.numbers import number
from course_helpers.selfcheck.feedback import (
    Feedback,
    all_numbers,
    close,
    graded,
    one_number,
    size_of,
    whole_number,
)

__all__ = [
    "rate_limiter",
    "actor_outputs",
    "critic_input_size",
    "target_entropy",
    "critic_loss",
    "soft_q_target",
    "alpha_update",
]


@graded
def rate_limiter(
    limiter: Any,
    *,
    actors: int,
    inserts_per_actor_per_second: float,
    gradient_steps_per_second: float,
    batch_size: int,
) -> Feedback:
    """Lesson 03: a rate limiter that keeps separate actors and a learner in step.

    Works with Reverb's limiters and with the in-process stand-in's, which keep the ratio
    under different attribute names.
    """
    kind = type(limiter).__name__
    if kind == "MinSize":
        return Feedback(
            False,
            _(
                "Not yet: MinSize stops nothing once the table holds its "
                "minimum. At these speeds the ratio may be what you want, but "
                "nothing holds it: while the table is nearly empty the learner "
                "samples the same few pairs, and whenever the actors slow down it "
                "samples every stored pair more often than the ratio you chose. "
                "Choose a limiter that keeps a ratio."
            ),
        )
    if kind != "SampleToInsertRatio":
        return Feedback(
            False,
            _("Not yet: build the limiter with reverb.rate_limiters, as the table cell does."),
        )
    # Reverb keeps the ratio in a private attribute, the in-process stand-in in a public one.
    ratio = float(getattr(limiter, "_samples_per_insert", None) or limiter.samples_per_insert)
    inserts = actors * inserts_per_actor_per_second
    samples = gradient_steps_per_second * batch_size
    if close(ratio, samples / inserts):
        margin = _error_buffer_half_width(limiter)
        if margin is not None and margin < batch_size:
            return Feedback(
                False,
                _(
                    "Not yet: the ratio is right, but an error_buffer of {margin} "
                    "samples is less than one batch of {batch}: the learner would wait "
                    "after every batch, and the actors after every jitter. Give it a "
                    "few batches' worth."
                ).format(margin=number(margin), batch=number(batch_size)),
            )
        return Feedback(
            True,
            _(
                "Right: samples per insert is what the learner reads each second "
                "divided by what all the actors write, and SampleToInsertRatio "
                "makes the faster side wait. With MinSize(1) nothing would keep "
                "that ratio. With this lesson's ratio, {lesson}, the actors would "
                "wait: the learner's {samples} samples per second allow {inserts} "
                "inserts per second in all, where the actors could write {could}."
            ).format(
                lesson=number(batch_size / 2),
                samples=number(samples),
                inserts=number(samples / (batch_size / 2)),
                could=number(inserts),
            ),
        )
    if close(ratio, gradient_steps_per_second / inserts):
        hint = _(
            "you counted gradient steps, but Reverb counts sampled items: every step "
            "samples a whole batch."
        )
    elif close(ratio, inserts / samples):
        hint = _("the ratio is upside down: it is samples divided by inserts.")
    elif close(ratio, samples / inserts_per_actor_per_second):
        hint = _(
            "that is what one actor's inserts would give (and, at these speeds, one "
            "gradient step per collected step too): every actor writes into the same "
            "table, so count the inserts of all of them."
        )
    elif close(ratio, batch_size / 2):
        hint = _(
            "that is this lesson's ratio, one gradient step per two collected steps: a "
            "choice of the algorithm, which the limiter would hold by making one side wait. "
            "The question asks for the ratio at which, at these speeds, neither side waits."
        )
    else:
        hint = _(
            "work out how many items the learner samples per second and how many the "
            "actors insert per second, then divide."
        )
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


def _error_buffer_half_width(limiter: Any) -> float | None:
    """How far, in samples, either side may run ahead before it waits (None if unknown).

    Reverb keeps the allowed range as ``_min_diff`` and ``_max_diff``; the in-process
    stand-in keeps the ``error_buffer`` it was given (a number, or a pair of bounds).
    """
    low, high = getattr(limiter, "_min_diff", None), getattr(limiter, "_max_diff", None)
    if low is not None and high is not None:
        return (float(high) - float(low)) / 2
    buffer = getattr(limiter, "error_buffer", None)
    if isinstance(buffer, int | float):
        return float(buffer)
    if isinstance(buffer, tuple) and len(buffer) == 2:
        return (float(buffer[1]) - float(buffer[0])) / 2
    return None


@graded
def actor_outputs(answer: Any, action_spec: Any) -> Feedback:
    """Lesson 03: how many numbers the SAC actor's last layer gives per observation."""
    answer = whole_number(answer)
    if answer is None:
        return Feedback(False, _("Not yet: write a whole number."))
    dimensions = size_of(action_spec)
    if answer == 2 * dimensions:  # TanhNormalProjectionNetwork: a mean and a spread for each
        return Feedback(
            True,
            _(
                "Right: a mean and a standard deviation for every action dimension; "
                "the action is sampled from them."
            ),
        )
    if answer == dimensions:
        hint = _(
            "one number per action dimension would be a fixed action. The actor describes "
            "a distribution: what does a normal distribution need, for each dimension?"
        )
    elif answer in (1, 2):
        hint = _(
            "the actor describes the distribution of every action number, not of a single number."
        )
    else:
        hint = _(
            "count the numbers that describe a normal distribution, for each action dimension."
        )
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


@graded
def critic_input_size(answer: Any, observation_spec: Any, action_spec: Any) -> Feedback:
    """Lesson 03: the length of the vector that enters the critic's joint layers."""
    answer = whole_number(answer)
    if answer is None:
        return Feedback(False, _("Not yet: write a whole number."))
    observation, action = size_of(observation_spec), size_of(action_spec)
    if answer == observation + action:
        return Feedback(
            True,
            _(
                "Right: the critic scores a pair, so it reads the observation "
                "and the action side by side."
            ),
        )
    if answer == observation:
        hint = _(
            "that is the observation alone. The critic scores an action in a situation; "
            "what else must it read?"
        )
    elif answer == action:
        hint = _("that is the action alone. The critic needs to know the situation too.")
    elif answer == observation * action:
        hint = _("the two inputs are put side by side, not multiplied.")
    else:
        hint = _("add up the numbers that go in: what the robot observes and what it does.")
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


# ---------------------------------------------------------------------------------------
# The algorithm: target entropy, the critic's loss by hand, the soft Q target, α's update.


def _same(answer: float, value: float) -> bool:
    """Equal up to float32 rounding: what a recomputation in another order gives."""
    return abs(answer - value) <= 1e-4 * abs(value) + 1e-6


def _by_hand(answer: float, value: float) -> bool:
    """Equal up to the rounding of a computation by hand (three decimals are enough)."""
    return abs(answer - value) <= 1e-3 * abs(value) + 2e-3


def _named_mistake(
    value: float,
    right: float,
    mistakes: list[tuple[float, str]],
    equal: Callable[[float, float], bool],
    otherwise: str | None = None,
) -> str | None:
    """The hint of the first mistake that gives ``value``, skipping those that give ``right``
    too (on these numbers they cannot be told apart), or ``otherwise``."""
    return next(
        (hint for wrong, hint in mistakes if not equal(wrong, right) and equal(value, wrong)),
        otherwise,
    )


@graded
def target_entropy(answer: Any, agent: Any) -> Feedback:
    """Lesson 03: the learner's prediction of ``tf_agent._target_entropy``, the question's.

    The reference is that attribute: ``SacAgent``'s own default
    (``_get_default_target_entropy``) when the agent was built without a
    ``target_entropy``, as in the lesson, and otherwise the value it was given (the
    exercise that tries the paper's value).
    """
    value = one_number(answer)
    if value is None:
        return Feedback(False, _("Not yet: write your prediction as a number, in place of the ..."))
    right = float(agent._target_entropy)
    default = float(agent._get_default_target_entropy(agent.action_spec))
    actions = float(sum(size_of(spec) for spec in _flat(agent.action_spec)))
    observations = float(sum(size_of(spec) for spec in _flat(agent.time_step_spec.observation)))
    if _same(value, right):
        if not _same(right, default):
            return Feedback(
                True,
                _("Right: this agent was given its own target entropy, not TF-Agents' default."),
            )
        return Feedback(
            True,
            _(
                "Right: TF-Agents' default is minus half the number of action "
                "dimensions, half the paper's target."
            ),
        )
    if _same(value, default):
        hint = _(
            "that is TF-Agents' default, but this agent was given its own target_entropy: "
            "read the cell that builds it."
        )
    elif not _same(right, default) and not _same(value, -right):
        # (the hints below are about TF-Agents' default, which this agent does not use)
        hint = _("this agent was given its own target_entropy: read the cell that builds it.")
    elif _same(value, -actions):
        hint = _(
            "that is the paper's target, −dim(A). TF-Agents chose its own default: read "
            "_get_default_target_entropy in sac_agent.py."
        )
    elif _same(value, actions) or _same(value, -right):
        hint = _(
            "check the sign. The target is an entropy the policy should keep, and SAC's "
            "targets for continuous actions are negative."
        )
    elif any(_same(value, sign * observations / halve) for sign in (1, -1) for halve in (1, 2)):
        hint = _(
            "count the action's dimensions, not the observation's: the entropy is that of "
            "the actions the policy chooses."
        )
    else:
        hint = _(
            "the default depends only on the action spec: count its dimensions, then read "
            "_get_default_target_entropy in sac_agent.py."
        )
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


def _flat(nest: Any) -> list[Any]:
    import tensorflow as tf

    return tf.nest.flatten(nest)


class _Sampled:
    """Makes ``agent._actions_and_log_probs`` return a given sample, for as long as it is open.

    SAC draws a fresh action inside its losses, so two calls never see the same one. To run
    the library's own loss on the sample a learner (or an exercise) chose, the method is
    replaced on this one instance, and removed again on leaving, whatever happens.
    """

    def __init__(self, agent: Any, actions: Any, log_pis: Any) -> None:
        self._agent, self._sample = agent, (actions, log_pis)

    def __enter__(self) -> Any:
        self._before = vars(self._agent).get("_actions_and_log_probs")
        self._agent._actions_and_log_probs = lambda *args, **kwargs: self._sample
        return self._agent

    def __exit__(self, *exc: Any) -> None:
        if self._before is None:
            del self._agent._actions_and_log_probs  # the class's own method shows through again
        else:
            self._agent._actions_and_log_probs = self._before


def _library_critic_loss(
    agent: Any, transition: Any, next_actions: Any, next_log_pis: Any, **changes: Any
) -> Any:
    """``agent.critic_loss`` on ``transition``, with (a′, log π(a′|s′)) given: the library's code.

    The arguments are the ones ``SacAgent._train`` passes (its gamma, reward scale and
    td_errors_loss_fn) unless ``changes`` replaces them.
    """
    time_steps, policy_steps, next_time_steps = transition
    arguments = dict(
        td_errors_loss_fn=agent._td_errors_loss_fn,
        gamma=agent._gamma,
        reward_scale_factor=agent._reward_scale_factor,
        training=False,
    )
    with _Sampled(agent, next_actions, next_log_pis):
        return agent.critic_loss(
            time_steps, policy_steps.action, next_time_steps, **{**arguments, **changes}
        )


def _critic_loss_parts(
    agent: Any, transition: Any, next_actions: Any, next_log_pis: Any
) -> dict[str, Any]:
    """Every number the critic loss reads, as NumPy arrays, split as SacAgent splits it."""
    import tensorflow as tf

    time_steps, policy_steps, next_time_steps = transition
    now = (time_steps.observation, policy_steps.action)
    ahead = (next_time_steps.observation, next_actions)

    def value(network: Any, inputs: Any) -> Any:
        return network(inputs, training=False)[0].numpy()

    return dict(
        q1=value(agent._critic_network_1, now),
        q2=value(agent._critic_network_2, now),
        target1=value(agent._target_critic_network_1, ahead),
        target2=value(agent._target_critic_network_2, ahead),
        online1=value(agent._critic_network_1, ahead),
        online2=value(agent._critic_network_2, ahead),
        log_pi=tf.convert_to_tensor(next_log_pis).numpy(),
        alpha=float(tf.exp(agent._log_alpha)),
        reward=next_time_steps.reward.numpy(),
        discount=next_time_steps.discount.numpy(),
        gamma=float(agent._gamma),
        scale=float(agent._reward_scale_factor),
    )


@graded
def critic_loss(
    answer: Any, agent: Any, transition: Any, next_actions: Any, next_log_pis: Any
) -> Feedback:
    """Lesson 03: SAC's critic loss on one batch, recomputed by the learner.

    ``transition`` is the batch as ``SacAgent._train`` sees it, (time steps, policy steps,
    next time steps); ``next_actions`` and ``next_log_pis`` are the learner's sample of
    a′ ~ π(·|s′) and its log π(a′|s′).

    SAC samples a′ inside ``critic_loss``, so calling ``agent.critic_loss`` would draw
    another a′ and give another number. The reference is still the library's own code: the
    real ``agent.critic_loss``, with the agent's gamma, reward scale and td_errors_loss_fn,
    while ``agent._actions_and_log_probs`` is replaced, on this instance only and until the
    call returns, by a function that hands back the learner's (next_actions, next_log_pis).

    The typical mistakes are recomputed on the same batch and named when the answer matches
    one of them. A mistake that gives the right number on this batch (no d = 0 in it, target
    critics still equal to the critics, α still 1) cannot be seen, and the message says so.
    """
    import numpy as np

    if answer is Ellipsis:
        return Feedback(
            False, _("Not yet: replace each ... with your computation, then run the cell again.")
        )
    try:
        reference = float(_library_critic_loss(agent, transition, next_actions, next_log_pis))
        p = _critic_loss_parts(agent, transition, next_actions, next_log_pis)
    except Exception as error:  # a later cell may have rebound a name: feedback, not a crash
        return Feedback(
            False,
            _(
                "Not yet: the check needs the lesson's SacAgent, the batch's "
                "transition, and the next actions and their log-probabilities "
                "({error})."
            ).format(error=f"{type(error).__name__}: {error}"),
        )
    gamma, d, reward, scale = p["gamma"], p["discount"], p["reward"], p["scale"]
    alpha, log_pi = p["alpha"], p["log_pi"]
    smaller = np.minimum(p["target1"], p["target2"])

    def y(
        next_value: Any = smaller,
        *,
        entropy: Any = None,
        r: Any = None,
        discount: Any = d,
        g: float = gamma,
    ) -> Any:
        soft = next_value - alpha * log_pi if entropy is None else next_value + entropy
        return (scale * reward if r is None else r) + g * discount * soft

    def loss(target: Any, *, both: bool = True) -> float:
        errors = (target - p["q1"]) ** 2 + ((target - p["q2"]) ** 2 if both else 0.0)
        return float(np.mean(errors))

    right = y()
    try:
        per_pair = np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        per_pair = None
    if per_pair is not None and per_pair.shape == right.shape and per_pair.size > 1:
        return Feedback(
            False,
            _(
                "Not yet: you have one number per pair; critic_loss returns "
                "their mean over the batch, one number."
            ),
        )
    value = one_number(answer)
    if value is None:
        return Feedback(
            False,
            _(
                "Not yet: my_critic_loss should be one number, the mean over "
                "the batch of both critics' squared errors."
            ),
        )
    wrong_network = _(
        "y uses the wrong network. The target looks one step ahead, at (s′, a′), "
        "with the target critics, tf_agent._target_critic_network_1 and _2."
    )
    mistakes = [
        (loss(y(np.minimum(p["online1"], p["online2"]))), wrong_network),
        (loss(y(np.minimum(p["q1"], p["q2"]))), wrong_network),
        (
            loss(y(np.maximum(p["target1"], p["target2"]))),
            _(
                "SAC takes the smaller of the twin target critics, not the larger: the minimum is "
                "what curbs overestimation."
            ),
        ),
        (
            loss(y((p["target1"] + p["target2"]) / 2)),
            _("SAC takes the smaller of the twin target critics, not their average."),
        ),
        (
            loss(y(entropy=alpha * log_pi)),
            _(
                "check the sign of the entropy term: the target subtracts α·log π(a′|s′), which "
                "adds α times the entropy."
            ),
        ),
        (
            loss(y(entropy=-log_pi)),
            _(
                "log π(a′|s′) is weighed by α, the temperature: alpha = tf.exp(tf_agent._log_alpha)."
            ),
        ),
        (
            loss(y(entropy=0.0)),
            _(
                "your target leaves out the soft part, −α·log π(a′|s′): the entropy the policy "
                "will have at s′."
            ),
        ),
        (
            loss(y(discount=1.0)),
            _(
                "multiply the next value by the discount d, next_time_steps.discount: it is 0 where "
                "the episode ended, and nothing follows."
            ),
        ),
        (
            loss(y(r=reward)),
            _("the agent multiplies the reward by reward_scale_factor before it enters y."),
        ),
        (loss(y(g=1.0)), _("discount the next value by γ, the agent's gamma.")),
        (loss(y(r=0.0)), _("your target leaves out the reward: y starts with the scaled r.")),
        (
            float(np.mean((right - p["q1"]) ** 2)),
            _(
                "both critics learn from the same y: add the squared errors of critic 1 and critic "
                "2 for each pair, then take the mean."
            ),
        ),
        (
            float(np.mean((right - p["q2"]) ** 2)),
            _(
                "both critics learn from the same y: add the squared errors of critic 1 and critic "
                "2 for each pair, then take the mean."
            ),
        ),
        (
            0.5 * loss(right),
            _(
                "this is the average of the two critics' errors; critic_loss adds them. (The "
                "training step then multiplies by critic_loss_weight, 0.5: that is the loss the "
                "learner reports.)"
            ),
        ),
        (
            float(np.sum((right - p["q1"]) ** 2 + (right - p["q2"]) ** 2)),
            _("this is the sum over the batch; critic_loss returns the mean."),
        ),
        (float(np.sqrt(loss(right))), _("this is the square root of the loss; keep the squares.")),
    ]
    if _same(value, reference):
        notes = []
        if np.all(d != 0.0):
            notes.append(
                _(
                    "This batch holds no episode end (every d is 1), so it cannot show "
                    "whether your target multiplies by d."
                )
            )
        if np.allclose(p["online1"], p["target1"]) and np.allclose(p["online2"], p["target2"]):
            notes.append(
                _(
                    "The target critics still equal the critics (the agent copied them, "
                    "and no training step has moved them yet), so the numbers cannot tell "
                    "which you used; the target uses the target critics."
                )
            )
        if abs(alpha - 1.0) < 1e-6:
            notes.append(
                _(
                    "α is still 1, so the numbers cannot tell whether you multiplied "
                    "log π by it; the target does."
                )
            )
        message = _(
            "Right: your loss is the one SacAgent.critic_loss computes for this batch "
            "and this sample of a′."
        )
        return Feedback(True, " ".join([message, *notes]))
    hint = _named_mistake(
        value,
        reference,
        mistakes,
        _same,
        _(
            "this is not the mean over the batch of (y − Q₁(s, a))² + (y − Q₂(s, a))². Check each "
            "part of y = c·r + γ·d·(min of the target critics at (s′, a′) − α·log π(a′|s′)). If the "
            "agent trained after your cells ran, run them again."
        ),
    )
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


def _tiny_agent(
    *, target_q: tuple[float, float] = (0.0, 0.0), alpha: float = 1.0, action_spec: Any = None
) -> Any:
    """A SacAgent whose critics return fixed numbers: the library's formulas on given values.

    Critic 1 and 2 return 0; target critic 1 and 2 return ``target_q``. The actor is a real,
    small network (the exercises replace its sample with ``_Sampled``).
    """
    import math

    import tensorflow as tf
    from tf_agents.agents.sac import sac_agent, tanh_normal_projection_network
    from tf_agents.networks import actor_distribution_network, network
    from tf_agents.specs import tensor_spec
    from tf_agents.trajectories import time_step as ts

    class FixedCritic(network.Network):
        """A critic that rates every (observation, action) pair ``value``."""

        def __init__(self, input_tensor_spec: Any, value: float, name: str) -> None:
            super().__init__(input_tensor_spec, state_spec=(), name=name)
            self._value = float(value)

        def call(
            self,
            inputs: Any,
            step_type: Any = None,
            network_state: Any = (),
            training: bool = False,
        ) -> Any:
            observation, _action = inputs
            return tf.fill(tf.shape(observation)[:1], self._value), network_state

    observation_spec = tf.TensorSpec([1], tf.float32)
    if action_spec is None:
        action_spec = tensor_spec.BoundedTensorSpec([1], tf.float32, -1.0, 1.0)
    pair = (observation_spec, action_spec)
    actor = actor_distribution_network.ActorDistributionNetwork(
        observation_spec,
        action_spec,
        fc_layer_params=(),
        continuous_projection_net=tanh_normal_projection_network.TanhNormalProjectionNetwork,
    )
    return sac_agent.SacAgent(
        ts.time_step_spec(observation_spec),
        action_spec,
        critic_network=FixedCritic(pair, 0.0, "Critic1"),
        critic_network_2=FixedCritic(pair, 0.0, "Critic2"),
        target_critic_network=FixedCritic(pair, target_q[0], "TargetCritic1"),
        target_critic_network_2=FixedCritic(pair, target_q[1], "TargetCritic2"),
        actor_network=actor,
        initial_log_alpha=math.log(alpha),
        actor_optimizer=None,
        critic_optimizer=None,
        alpha_optimizer=None,
    )


def _steps(rewards: Any, discounts: Any) -> Any:
    """A batch of mid-episode time steps with these rewards and discounts."""
    import tensorflow as tf
    from tf_agents.trajectories import time_step as ts

    n = len(rewards)
    return ts.TimeStep(
        step_type=tf.ones([n], tf.int32),
        reward=tf.constant(rewards, tf.float32),
        discount=tf.constant(discounts, tf.float32),
        observation=tf.zeros([n, 1]),
    )


def _library_soft_targets(
    *,
    reward: float,
    reward_scale_factor: float,
    gamma: float,
    target_q: tuple[float, float],
    alpha: float,
    log_pi: float,
    discounts: tuple[float, ...],
) -> list[float]:
    """SacAgent.critic_loss's own targets y, one per discount, for the given numbers."""
    import tensorflow as tf
    from tf_agents.trajectories import policy_step, trajectory

    agent = _tiny_agent(target_q=target_q, alpha=alpha)
    n = len(discounts)
    now, ahead = _steps([0.0] * n, [1.0] * n), _steps([reward] * n, list(discounts))
    transition = trajectory.Transition(now, policy_step.PolicyStep(tf.zeros([n, 1]), (), ()), ahead)
    seen: list[Any] = []

    def keep_targets(targets: Any, predictions: Any) -> Any:  # td_errors_loss_fn(y, Q(s, a))
        seen.append(targets)
        return tf.math.squared_difference(targets, predictions)

    _library_critic_loss(
        agent,
        transition,
        tf.zeros([n, 1]),
        tf.fill([n], float(log_pi)),
        td_errors_loss_fn=keep_targets,
        gamma=gamma,
        reward_scale_factor=reward_scale_factor,
    )
    return [float(t) for t in seen[0].numpy()]


@graded
def soft_q_target(
    step_target: Any,
    fall_target: Any,
    *,
    reward: float,
    reward_scale_factor: float,
    gamma: float,
    target_q: tuple[float, float],
    alpha: float,
    log_pi: float,
) -> Feedback:
    """Lesson 03: SAC's critic target by hand, mid-episode (d = 1) and after a fall (d = 0).

    Both steps give ``reward`` and lead to s′, where a′ has log-probability ``log_pi`` and the
    two target critics rate (s′, a′) ``target_q``. The reference is the target y that
    ``SacAgent.critic_loss`` itself computes for these numbers, read from its
    ``td_errors_loss_fn``, with critics that return the given values.
    """
    answers = all_numbers({"step": step_target, "fall": fall_target})
    if answers is None:
        return Feedback(False, _("Not yet: give each target as one number."))
    right = dict(
        zip(
            ("step", "fall"),
            _library_soft_targets(
                reward=reward,
                reward_scale_factor=reward_scale_factor,
                gamma=gamma,
                target_q=target_q,
                alpha=alpha,
                log_pi=log_pi,
                discounts=(1.0, 0.0),
            ),
        )
    )
    if all(_by_hand(answers[kind], right[kind]) for kind in right):
        return Feedback(
            True,
            _(
                "Right: the scaled reward, plus, while the episode goes on, γ "
                "times the smaller target critic minus α·log π(a′|s′). After a "
                "fall, d = 0 leaves the scaled reward alone."
            ),
        )
    r = reward_scale_factor * reward
    small, large = min(target_q), max(target_q)

    def ahead(
        next_value: float = small, entropy: float = -alpha * log_pi, g: float = gamma
    ) -> float:
        return g * (next_value + entropy)

    step_mistakes = [
        (r + ahead(large), _("SAC takes the smaller of the two target critics, not the larger.")),
        (
            r + ahead(sum(target_q) / 2),
            _("SAC takes the smaller of the two target critics, not their average."),
        ),
        (
            r + ahead(entropy=alpha * log_pi),
            _("check the sign of the entropy term: the target subtracts α·log π(a′|s′)."),
        ),
        (r + ahead(entropy=0.0), _("the target also counts the soft part, −α·log π(a′|s′).")),
        (r + ahead(entropy=-log_pi), _("log π(a′|s′) is weighed by α.")),
        (reward + ahead(), _("the reward is multiplied by reward_scale_factor first.")),
        (r + ahead(g=1.0), _("the next value is discounted by γ.")),
        (ahead(), _("the target starts with the scaled reward.")),
    ]
    fall_mistakes = [
        (
            right["step"],
            _("after a fall d = 0: nothing follows, so the target does not bootstrap from s′."),
        ),
        (
            reward,
            _("the reward is multiplied by reward_scale_factor first, even on the last step."),
        ),
        (
            0.0,
            _("the last step's reward still counts: with d = 0 the target is the scaled reward."),
        ),
        (
            r - alpha * log_pi,
            _(
                "with d = 0 the whole bracket goes, the entropy term too: only "
                "the scaled reward is left."
            ),
        ),
    ]
    for kind, mistakes, where in (
        ("step", step_mistakes, _("the mid-episode step")),
        ("fall", fall_mistakes, _("the fall")),
    ):
        if _by_hand(answers[kind], right[kind]):
            continue
        hint = _named_mistake(
            answers[kind],
            right[kind],
            mistakes,
            _by_hand,
            _("y = c·r + γ·d·(min(Q̄₁, Q̄₂) − α·log π(a′|s′)); work out d first."),
        )
        return Feedback(False, _("Not yet, for {step}: {hint}").format(step=where, hint=hint))
    return Feedback(False, _("Not yet: y = c·r + γ·d·(min(Q̄₁, Q̄₂) − α·log π(a′|s′))."))


def _library_alpha_gradient(*, mean_log_pi: float, action_spec: Any) -> tuple[float, float]:
    """(target entropy, d alpha_loss / d log α) as SacAgent computes them for this batch."""
    import tensorflow as tf

    agent = _tiny_agent(action_spec=action_spec)
    n = 4
    with _Sampled(agent, tf.zeros([n, *action_spec.shape]), tf.fill([n], float(mean_log_pi))):
        with tf.GradientTape() as tape:
            loss = agent.alpha_loss(_steps([0.0] * n, [1.0] * n))
        gradient = tape.gradient(loss, agent._log_alpha)
    return float(agent._target_entropy), float(gradient)


@graded
def alpha_update(
    gradient: Any, direction: Any, *, mean_log_pi: float, action_spec: Any
) -> Feedback:
    """Lesson 03: the gradient of α's loss with respect to log α, and where α goes next.

    A batch's sampled actions have an average log-probability ``mean_log_pi``; the agent
    has the default target entropy for ``action_spec``. The reference gradient is taken
    with a GradientTape through ``SacAgent.alpha_loss`` itself; this batch's gradient pushes
    log α, hence α, against its sign (the agent's Adam averages it with earlier batches'
    before it moves α: the exercise asks for the push, not the step).
    """
    value = one_number(gradient)
    if value is None:
        return Feedback(False, _("Not yet: give the gradient as one number."))
    target, right = _library_alpha_gradient(mean_log_pi=mean_log_pi, action_spec=action_spec)
    entropy = -mean_log_pi
    if not _by_hand(value, right):
        actions = float(size_of(action_spec))
        mistakes = [
            (mean_log_pi - target, _("the entropy estimate is −log π, not log π: a sign.")),
            (
                target - entropy,
                _("the other way round: the gradient is the entropy estimate minus the target."),
            ),
            (entropy + target, _("subtract the target entropy from the estimate; do not add it.")),
            (entropy + actions, _("TF-Agents' default target is half the paper's −dim(A).")),
            (
                -entropy + actions,  # log π where −log π belongs, and the paper's −dim(A)
                _(
                    "two things: the sign of the entropy term, and TF-Agents' "
                    "default target, which is half the paper's −dim(A)."
                ),
            ),
            (
                -actions - entropy,  # the paper's target minus the estimate
                _(
                    "two things: the gradient is the entropy estimate minus the target, not "
                    "the other way round, and TF-Agents' default target is half the paper's "
                    "−dim(A)."
                ),
            ),
        ]
        hint = _named_mistake(
            value,
            right,
            mistakes,
            _by_hand,
            _(
                "alpha_loss is log α times (−log π − target entropy), averaged over the batch, with "
                "the bracket held constant: differentiate with respect to log α."
            ),
        )
        return Feedback(False, _("Not yet: {hint}").format(hint=hint))
    if not isinstance(direction, str) or direction.strip().lower() not in ("up", "down"):
        return Feedback(
            False, _('Not yet: the gradient is right. For the direction, write "up" or "down".')
        )
    if (direction.strip().lower() == "up") != (right < 0):
        return Feedback(
            False,
            _(
                "Not yet: the gradient is right, but gradient descent pushes log α "
                "against the gradient's sign. Is the policy more or less random than the "
                "target asks?"
            ),
        )
    return Feedback(
        True,
        _(
            "Right: the policy's entropy is below the target, so this batch pushes α "
            "up, to pay the actor more for staying random. (Adam moves α by the average "
            "of recent batches' gradients: batches like this one, if they go on, make α grow.)"
        )
        if right < 0
        else _(
            "Right: the policy's entropy is above the target, so this batch pushes α "
            "down, and the actor may commit to the actions the critics prefer. (Adam moves "
            "α by the average of recent batches' gradients: batches like this one, if they go "
            "on, make α shrink.)"
        ),
    )
