"""Self-checks of lesson 02, DQN on CartPole."""

from __future__ import annotations

from typing import Any

from course_helpers.i18n import gettext as _
from course_helpers.selfcheck.feedback import (
    Feedback,
    all_numbers,
    graded,
    one_number,
    whole_number,
)

__all__ = [
    "average_return_function",
    "n_step_num_steps",
    "q_network_parameters",
    "q_values_before_termination",
    "td_loss",
    "td_targets",
]


def _episode_returns(environment: Any, policy: Any, num_episodes: int) -> list[tuple[float, float]]:
    """(return, reward of the last step) of each episode, as course.average_return plays them."""
    from course_helpers.environments import play

    episodes: list[tuple[float, float]] = []
    for _step, time_step in play(environment, policy, num_episodes):
        reward = float(time_step.reward)
        if time_step.is_first():
            episodes.append((0.0, 0.0))
        total, _last = episodes[-1]
        episodes[-1] = (total + reward, reward)
    return episodes


class _CountingEpisodes:
    """The learner's environment, counting the episodes played to their end (the LAST time
    steps that ``step()`` returns); everything else passes. Episodes are counted at their
    end, not at ``reset()``: TF-Agents environments also reset themselves on the step
    after a LAST one, which a driver relies on."""

    def __init__(self, environment: Any) -> None:
        self._environment = environment
        self.episodes = 0

    def step(self, action: Any) -> Any:
        time_step = self._environment.step(action)
        if time_step.is_last():
            self.episodes += 1
        return time_step

    def __getattr__(self, name: str) -> Any:
        return getattr(self._environment, name)


def _leaning_policy(environment: Any) -> Any:
    """A deterministic policy whose episodes last different numbers of steps.

    A trained CartPole policy often scores 200 in every episode, and then the last
    episode's return, or a total divided by the wrong count, equals the average. On
    CartPole this policy pushes the cart toward the side the pole leans to, from the
    angle alone: without the angular velocity (which the lesson's
    ``push_toward_the_lean`` adds) the pole falls after 30 to 60 steps, a different
    number in each episode. Elsewhere it always takes the smallest action.
    """
    import numpy as np
    from tf_agents.policies import py_policy
    from tf_agents.trajectories import policy_step

    spec = environment.action_spec()

    class Leaning(py_policy.PyPolicy):
        def _action(self, time_step: Any, policy_state: Any) -> Any:
            observation = np.asarray(time_step.observation)
            if observation.shape == (4,):  # CartPole: position, velocity, angle, its rate
                action = int(observation[2] > 0)
            else:
                action = spec.minimum
            return policy_step.PolicyStep(np.asarray(action, dtype=spec.dtype), ())

    return Leaning(environment.time_step_spec(), spec)


@graded
def average_return_function(
    function: Any, environment: Any, policy: Any, num_episodes: int, seed: int = 1
) -> Feedback:
    """Lesson 02: ``function(environment, policy, num_episodes)`` must average the returns.

    Both the learner's function and the reference play from the same seed, so they see
    the same episodes with a deterministic policy: first with ``policy``, then with a
    scripted policy whose episodes differ in length (:func:`_leaning_policy`).
    """
    first = _compare_average_return(function, environment, policy, num_episodes, seed)
    if not first:
        return first
    second = _compare_average_return(
        function, environment, _leaning_policy(environment), num_episodes, seed
    )
    return first if second else second


def _compare_average_return(
    function: Any, environment: Any, policy: Any, num_episodes: int, seed: int
) -> Feedback:
    import numpy as np

    environment.seed(seed)
    counted = _CountingEpisodes(environment)
    try:
        answer = function(counted, policy, num_episodes)
    except Exception as error:  # the learner's code: any error is feedback, not a crash
        return Feedback(
            False,
            _("Not yet: your function raised {error}.").format(
                error=f"{type(error).__name__}: {error}"
            ),
        )
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

    # A trained policy may score the same in every episode (200 on CartPole); then only
    # the number of episodes played to their end shows whether the function played
    # num_episodes of them.
    if counted.episodes < num_episodes:
        hint = (
            _(
                "your function did not play any episode to its end: step until "
                "time_step.is_last() is true, then start the next episode with reset()."
            )
            if counted.episodes == 0
            else _(
                "this is the first episode's return only; play num_episodes episodes, each "
                "starting with reset()."
            )
            if counted.episodes == 1
            else _(
                "your function played {played} episodes to their end, not {episodes}; play "
                "num_episodes episodes, each until its last time step."
            ).format(played=counted.episodes, episodes=num_episodes)
        )
        return Feedback(False, _("Not yet: {hint}").format(hint=hint))
    if close(float(np.mean(returns))):
        return Feedback(
            True,
            _(
                "Right: your loop gives the same average return as "
                "course.average_return, over the same episodes."
            ),
        )
    if close(float(np.sum(returns))) and num_episodes > 1:
        hint = _("this is the total over all episodes; divide by the number of episodes.")
    elif close(float(np.mean([total - last for total, last in episodes]))):
        hint = _(
            "every episode misses its last reward: add the reward of each step, the "
            "last one included, then stop when the time step is the last."
        )
    elif close(returns[-1]) and num_episodes > 1:
        hint = _(
            "this is the last episode's return only; add up the return of every "
            "episode, then divide by the number of episodes."
        )
    elif close(returns[0]) and num_episodes > 1:
        hint = _(
            "this is the first episode's return only; play num_episodes episodes, each "
            "starting with reset()."
        )
    else:
        hint = _(
            "this is not the average, over num_episodes episodes, of each episode's "
            "summed rewards. Check that each episode starts with reset() and ends when "
            "is_last() is true."
        )
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


@graded
def n_step_num_steps(answer: Any, n_step_update: int) -> Feedback:
    """Lesson 02: how many consecutive steps an ``n_step_update`` DQN trains on."""
    answer = whole_number(answer)
    if answer is None:
        return Feedback(False, _("Not yet: write a whole number of steps."))
    needed = n_step_update + 1  # DqnAgent.train_sequence_length; tested against TF-Agents
    if answer == needed:
        return Feedback(
            True,
            _(
                "Right: the first step, and every step up to the one whose "
                "observation the update looks at."
            ),
        )
    if answer == 2:
        hint = _("2 is what a one-step update needs; this update looks further ahead.")
    elif answer == n_step_update:
        hint = _(
            "with that many steps, the last one is one step short of the observation the "
            "update needs."
        )
    elif answer > needed:
        hint = _(
            "that is more than the update reads. Count the first step, then the steps up "
            "to the observation it looks at."
        )
    else:
        hint = _(
            "the update reads the rewards of the next steps and one observation after "
            "them; count the steps from the first to that observation."
        )
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


@graded
def q_network_parameters(
    answer: Any, observation_size: int, fc_layer_params: tuple[int, ...], num_actions: int
) -> Feedback:
    """Lesson 02: the number of weights and biases of a dense Q-network."""
    answer = whole_number(answer)
    if answer is None:
        return Feedback(False, _("Not yet: write a whole number of parameters."))
    sizes = [observation_size, *fc_layer_params, num_actions]
    layers = list(zip(sizes, sizes[1:]))
    total = sum(inputs * units + units for inputs, units in layers)
    if answer == total:
        return Feedback(
            True, _("Right: every dense layer has inputs × units weights and one bias per unit.")
        )
    if answer == sum(inputs * units for inputs, units in layers):
        hint = _("you counted the weights; every unit also has a bias.")
    elif answer == sum(inputs * units + units for inputs, units in layers[:-1]):
        hint = _("add the output layer: it computes one Q-value per action.")
    else:
        hint = _(
            "count layer by layer, from the observation to the Q-values: each layer has "
            "inputs × units weights and one bias per unit."
        )
    return Feedback(False, _("Not yet: {hint}").format(hint=hint))


def _near(answer: float, value: float) -> bool:
    """Equal up to float32 rounding, whatever the scale of the loss."""
    return abs(answer - value) <= 1e-4 * abs(value) + 1e-7


def _td_loss_parts(agent: Any, experience: Any) -> dict[str, Any]:
    """What DqnAgent's loss reads from ``experience``, split as the agent itself splits it."""
    import tensorflow as tf

    transition = agent._as_transition(experience)  # the agent's own conversion to (s, a, r, d, s')
    time_steps, policy_steps, next_time_steps = transition
    s, s_next = time_steps.observation, next_time_steps.observation
    actions = tf.cast(policy_steps.action, tf.int32)
    q_values = agent._q_network(s, step_type=time_steps.step_type)[0]
    return dict(
        q_values=q_values,
        q_taken=tf.gather(q_values, actions, batch_dims=1),
        next_target=agent._target_q_network(s_next, step_type=next_time_steps.step_type)[0],
        next_online=agent._q_network(s_next, step_type=next_time_steps.step_type)[0],
        this_target=agent._target_q_network(s, step_type=time_steps.step_type)[0],
        reward=agent._reward_scale_factor * next_time_steps.reward,
        discount=next_time_steps.discount,
        gamma=agent._gamma,
        valid=tf.cast(
            ~time_steps.is_last(), tf.float32
        ),  # DqnAgent skips pairs that start at an end
    )


@graded
def td_loss(answer: Any, agent: Any, experience: Any) -> Feedback:
    """Lesson 02: the TD loss of one batch, recomputed by the learner.

    The reference is what the agent itself computes, ``agent.loss(experience)``, with the
    agent's own gamma and reward scale (``agent.loss`` alone would use ``_loss``'s defaults,
    1.0 for both; ``agent.train`` passes the agent's), and the agent's own per-pair loss
    (``td_errors_loss_fn``: the plain square in the lesson, or the Huber loss). The typical
    mistakes are recomputed on the same batch and named when the answer matches one of them.
    A mistake that gives the same number on this batch (no episode end in it; a target
    network equal to the Q-network) cannot be seen, and the message says so instead of
    claiming more than it checked.
    """
    import numpy as np
    import tensorflow as tf

    if answer is Ellipsis:
        return Feedback(
            False, _("Not yet: replace each ... with your computation, then run the cell again.")
        )
    try:
        reference = float(
            agent.loss(
                experience, gamma=agent._gamma, reward_scale_factor=agent._reward_scale_factor
            ).loss
        )
        parts = _td_loss_parts(agent, experience)
        loss_fn = agent._td_errors_loss_fn
    except (AttributeError, TypeError, ValueError) as error:
        return Feedback(
            False,
            _(
                "Not yet: the check needs the lesson's DqnAgent and a batch "
                "sampled from its dataset ({error})."
            ).format(error=f"{type(error).__name__}: {error}"),
        )
    p = {name: value.numpy() if hasattr(value, "numpy") else value for name, value in parts.items()}
    gamma, discount, reward, valid = p["gamma"], p["discount"], p["reward"], p["valid"]

    def target(next_values: Any, *, d: Any = discount, sign: float = 1.0, r: Any = reward) -> Any:
        return r + sign * gamma * d * next_values.max(axis=-1)

    def per_pair(targets: Any, estimates: Any = p["q_taken"]) -> Any:
        """The agent's own loss of each pair, as DqnAgent applies td_errors_loss_fn."""
        return np.asarray(
            loss_fn(tf.constant(targets, tf.float32), tf.constant(estimates, tf.float32))
        )

    def mean(values: Any) -> float:
        return float(np.mean(valid * values))

    # An error of 3 costs 9 under the square, 2.5 under the Huber loss.
    huber_agent = bool(np.isclose(per_pair(np.array([3.0]), np.array([0.0]))[0], 2.5))
    y = target(p["next_target"])
    errors = y - p["q_taken"]
    huber = np.where(np.abs(errors) <= 1.0, 0.5 * errors**2, np.abs(errors) - 0.5)
    try:  # one loss per pair is a common half-way answer
        answer_per_pair = np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        answer_per_pair = None
    if (
        answer_per_pair is not None
        and answer_per_pair.shape == errors.shape
        and np.allclose(answer_per_pair, per_pair(y), rtol=1e-4, atol=1e-6)
    ):
        return Feedback(
            False,
            _(
                "Not yet: you have one loss per pair; the loss is their mean over the batch, "
                "one number."
            ),
        )
    value = one_number(answer)
    if value is None:
        return Feedback(
            False,
            _(
                "Not yet: my_td_loss should be one number, the mean over the batch of each "
                "pair's loss."
            ),
        )

    online_network = mean(per_pair(target(p["next_online"])))
    # (value the mistake gives, hint), most telling first; a mistake that gives the right
    # number on this batch is skipped, since it cannot be told apart here.
    mistakes = [
        (
            mean(per_pair(target(p["next_target"], d=1.0))),
            _(
                "your target bootstraps through the ends of episodes. Multiply the next value by "
                "the discount d: it is 0 where the pole fell, and nothing follows."
            ),
        ),
        (
            mean(per_pair(y, p["q_values"].max(axis=-1))),
            _(
                "you compared y with the largest Q-value of s. The loss uses Q(s, a), the value of "
                "the action the agent really took: tf.gather(q_values, a, batch_dims=1)."
            ),
        ),
        (
            mean(per_pair(target(p["this_target"]))),
            _(
                "your target looks at s. It bootstraps from the next observation, s′: "
                "next_time_steps.observation."
            ),
        ),
        (
            online_network,
            _(
                "your target comes from the Q-network. DQN computes it with the target network, "
                "agent._target_q_network."
            ),
        ),
        (
            mean(per_pair(target(p["next_target"], sign=-1.0))),
            _("check the sign in the target: the value of s′ is added to the reward."),
        ),
        (
            mean(per_pair(target(p["next_target"], r=0.0))),
            _("your target leaves out the reward: y starts with r."),
        ),
        (
            float(np.sum(valid * per_pair(y))),
            _("this is the sum over the batch; the loss is the mean."),
        ),
        (
            mean(errors),
            _(
                "this is the mean of the TD errors themselves, where positive and negative "
                "errors cancel. Take each error's loss first, then the mean."
            ),
        ),
        (
            mean(-errors),
            _(
                "this is the mean of the TD errors themselves, where positive and negative "
                "errors cancel. Take each error's loss first, then the mean."
            ),
        ),
    ]
    if huber_agent:
        mistakes += [
            (
                mean(errors**2),
                _(
                    "this is the mean squared TD error. The agent cell chose "
                    "common.element_wise_huber_loss: x²/2 for an error x of size up to 1, "
                    "|x| − 1/2 beyond."
                ),
            ),
            (
                0.5 * mean(errors**2),
                _(
                    "this is half the square of every TD error. The Huber loss is x²/2 only up "
                    "to an error of size 1, and |x| − 1/2 beyond: use tf.where."
                ),
            ),
            (
                mean(np.abs(errors)),
                _(
                    "this is the mean of the errors' sizes |x|. The Huber loss is x²/2 up to an "
                    "error of size 1, and |x| − 1/2 beyond."
                ),
            ),
        ]
    else:
        mistakes += [
            (
                mean(np.abs(errors)),
                _("square each TD error; this is the mean of their sizes."),
            ),
            (
                0.5 * mean(errors**2),
                _(
                    "this is half the squared error. common.element_wise_squared_loss, the "
                    "agent's td_errors_loss_fn, has no factor 1/2."
                ),
            ),
            (
                mean(huber),
                _(
                    "this is the Huber loss, DqnAgent's default. The agent cell chose "
                    "common.element_wise_squared_loss: the plain square."
                ),
            ),
            (
                float(np.sqrt(mean(errors**2))),
                _("this is the square root of the loss; leave the mean of the squares as it is."),
            ),
        ]
    if _near(value, reference):
        notes = []
        if np.all(discount != 0.0):
            notes.append(
                _(
                    "This batch holds no episode end (every d is 1), so it cannot show "
                    "whether your target multiplies by d; draw another batch to test that."
                )
            )
        if _near(online_network, reference):
            notes.append(
                _(
                    "Here the target network holds the same weights as the Q-network (it was "
                    "just copied, or target_update_period is 1), so the numbers cannot tell "
                    "which one you used; DQN's target uses agent._target_q_network."
                )
            )
        message = _(
            "Right: your loss is the one agent.train computes for this batch: "
            "agent.loss(experience) with the agent's own gamma and reward_scale_factor."
        )
        return Feedback(True, " ".join([message, *notes]))
    for wrong, hint in mistakes:
        if not _near(wrong, reference) and _near(value, wrong):
            return Feedback(False, _("Not yet: {hint}").format(hint=hint))
    return Feedback(
        False,
        _(
            "Not yet: this is not the agent's loss of this batch. Check each line: Q(s, a) at "
            "the action taken; y = r + γ·d·max over the target network's Q-values of s′; then "
            "each pair's loss of y − Q(s, a) (the agent's td_errors_loss_fn), and their mean. "
            "If the agent trained after your cell ran, run it again."
        ),
    )


def _next_values(next_q_values: Any) -> Any:
    import numpy as np

    return np.asarray(next_q_values, dtype=np.float32)


@graded
def td_targets(
    terminal_target: Any, truncated_target: Any, *, reward: float, gamma: float, next_q_values: Any
) -> Feedback:
    """Lesson 02: DQN's target for a step that terminates and for one a time limit truncates.

    Both steps give ``reward`` and lead to an observation whose target-network Q-values are
    ``next_q_values``. The discounts come from TF-Agents' own ``termination`` and
    ``truncation`` time steps, and the targets from ``dqn_agent.compute_td_targets``.
    """
    import numpy as np
    from tf_agents.agents.dqn import dqn_agent
    from tf_agents.trajectories import time_step as ts

    answers = all_numbers({"terminal": terminal_target, "truncated": truncated_target})
    if answers is None:
        return Feedback(False, _("Not yet: give each target as one number."))
    q = _next_values(next_q_values)
    observation = np.zeros([1], np.float32)
    discounts = {
        "terminal": float(ts.termination(observation, reward).discount),
        "truncated": float(ts.truncation(observation, reward).discount),
    }
    right = {
        kind: float(dqn_agent.compute_td_targets(q.max(), reward, gamma * d))
        for kind, d in discounts.items()
    }
    if all(_near(answers[kind], right[kind]) for kind in right):
        return Feedback(
            True,
            _(
                "Right: where the pole fell, d = 0 and the target is the reward "
                "alone; at a cut by TF-Agents' TimeLimit, d stays 1 and the "
                "target still counts the value of s′."
            ),
        )
    bootstrapped, cut = reward + gamma * q.max(), float(reward)
    if _near(answers["terminal"], bootstrapped) and _near(answers["truncated"], cut):
        return Feedback(
            False,
            _(
                "Not yet: you swapped the two. A termination stops the future "
                "(d = 0); a truncation only stops the clock (d = 1)."
            ),
        )
    for kind, where in (
        ("terminal", _("the terminal step")),
        ("truncated", _("the truncated step")),
    ):
        value = answers[kind]
        if _near(value, right[kind]):
            continue
        if kind == "terminal" and _near(value, bootstrapped):
            hint = _(
                "you bootstrapped through a termination. Once the pole has fallen nothing "
                "follows: d = 0, so the target is the reward alone."
            )
        elif kind == "truncated" and _near(value, cut):
            hint = _(
                "you cut a truncated episode short. The time limit stopped the clock, not "
                "the task: TF-Agents' TimeLimit keeps d = 1, so the target still counts the "
                "value of s′."
            )
        elif any(_near(value, reward + gamma * other) for other in (q.mean(), q.sum(), q.min())):
            hint = _(
                "take the max of the next Q-values, not their mean, sum or minimum: the "
                "target assumes the best action from s′ on."
            )
        elif _near(value, reward + q.max()):
            hint = _("multiply the value of s′ by γ, the agent's gamma.")
        elif _near(value, gamma * q.max()):
            hint = _("the target starts with the reward r.")
        elif kind == "terminal" and _near(value, 0.0) and not _near(reward, 0.0):
            hint = _(
                "d = 0 switches off the future, not the reward: the value of what follows "
                "a termination is 0, and the target is r."
            )
        else:
            hint = _("y = r + γ·d·max Q(s′, ·); work out d for this step first.")
        return Feedback(False, _("Not yet, for {step}: {hint}").format(step=where, hint=hint))
    return Feedback(False, _("Not yet: y = r + γ·d·max Q(s′, ·); work out d for each step first."))


@graded
def q_values_before_termination(
    answer_gamma_1: Any, answer_gamma: Any, *, steps_left: int, gamma: float
) -> Feedback:
    """Lesson 02: the true Q-value of a step ``steps_left`` rewards of 1 before a termination.

    With γ = 1 and with ``gamma``. The reference is the fixed point of DQN's target: starting
    from the last step (discount 0), ``dqn_agent.compute_td_targets`` is applied back to the
    current step, each time with the next step's value in place of max Q.
    """
    import numpy as np
    from tf_agents.agents.dqn import dqn_agent

    answers = all_numbers({1.0: answer_gamma_1, float(gamma): answer_gamma})
    if answers is None:
        return Feedback(False, _("Not yet: give each Q-value as one number."))

    def fixed_point(g: float, rewards: int) -> float:
        value = 0.0  # what follows the last reward: nothing, its discount is 0
        for step in range(rewards):
            discount = 0.0 if step == 0 else 1.0
            value = float(
                dqn_agent.compute_td_targets(
                    np.float32(value), np.float32(1.0), np.float32(g * discount)
                )
            )
        return value

    right = {g: fixed_point(g, steps_left) for g in answers}
    if all(_near(answers[g], right[g]) for g in answers):
        return Feedback(
            True,
            _(
                "Right: with γ = 1 the Q-value counts the rewards still to come; "
                "with γ < 1 each reward weighs γ times the one before it, so the "
                "same episode is worth less."
            ),
        )
    if _near(answers[1.0], right[gamma]) and _near(answers[gamma], right[1.0]):
        return Feedback(
            False,
            _(
                "Not yet: you swapped the two. With γ = 1 no reward is "
                "discounted, so that value is the larger one."
            ),
        )
    for g, where in ((1.0, _("with γ = 1")), (float(gamma), _("with γ < 1"))):
        value = answers[g]
        if _near(value, right[g]):
            continue
        powers = g ** np.arange(steps_left)
        if any(_near(value, fixed_point(g, n)) for n in (steps_left - 1, steps_left + 1)):
            hint = _("off by one: count the rewards still to come, this step's included.")
        elif g != 1.0 and _near(value, float(np.sum(g * powers))):
            hint = _("the first reward, this step's own, is not discounted: its weight is γ⁰ = 1.")
        elif g != 1.0 and _near(value, 1.0 / (1.0 - g)):
            hint = _(
                "1 / (1 − γ) is the value of an episode that never ends. This one ends, and "
                "the discount 0 at its end cuts the sum."
            )
        elif g != 1.0 and any(
            _near(value, steps_left * g**n) for n in (1, steps_left - 1, steps_left)
        ):
            hint = _(
                "each reward has its own discount, γ to the power of its delay: add them "
                "one by one rather than discounting the total once."
            )
        elif g != 1.0 and _near(value, float(steps_left)):
            hint = _(
                "this is the value without discounting; with γ < 1 each reward weighs "
                "γ times the one before it."
            )
        else:
            hint = _(
                "apply y = r + γ·d·(value of the next step) from the last step back: the "
                "last step has d = 0."
            )
        return Feedback(False, _("Not yet, {case}: {hint}").format(case=where, hint=hint))
    return Feedback(
        False, _("Not yet: apply y = r + γ·d·(value of the next step) from the last step back.")
    )
