"""``course ship-policy``: make the trained Minitaur that lesson 3 shows before training.

The policy comes from one recorded full run of lesson 3: a file that ``course bench
--only sac --save-runs FILE`` wrote with ``COURSE_BENCH_KEEP_ACTOR`` set, so that the run
saved the weights of the actor it kept. This module rebuilds that actor (the lesson's
``ActorDistributionNetwork`` with a ``TanhNormalProjectionNetwork``, its layer sizes read
from the weights), wraps it as the greedy policy the lesson evaluates, and saves it with
TF-Agents' ``PolicySaver`` into the helpers' package, with a record of the run it comes
from (date, machine, seed, commit, returns). The runtime reads it with
:mod:`course_helpers.trained`.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from course_helpers import trained

#: A shipped policy that does not walk would mislead: its kept actor must score this.
WALKS = 5.0


class NotShippable(ValueError):
    """The recorded run cannot give the course's trained policy; the message says why."""


def choose_run(record: dict[str, Any], seed: int | None) -> dict[str, Any]:
    """The run of lesson 3 to ship from a ``--save-runs`` record: the one with ``seed``, or
    the only one. It must be a full run that saved its actor, and its actor must walk."""
    runs = [run for run in record.get("runs", []) if run.get("lesson") == "03"]
    if seed is not None:
        runs = [run for run in runs if run.get("seed") == seed]
    if len(runs) != 1:
        raise NotShippable(
            f"the record holds {len(runs)} run(s) of lesson 3"
            + (f" with seed {seed}" if seed is not None else "")
            + "; name one with --seed."
        )
    run = runs[0]
    report = run["report"]
    if run.get("quick"):
        raise NotShippable("it is a quick-mode run; ship a full run of the lesson.")
    if not report.get("actor_weights"):
        raise NotShippable(
            "the run did not save its actor; run the benchmark again with "
            "COURSE_BENCH_KEEP_ACTOR=<folder>."
        )
    kept = report.get("kept", {}).get("kept_return")
    if kept is None or kept < WALKS:
        raise NotShippable(
            f"its kept actor scored {kept} on new episodes, below {WALKS}: it does not walk."
        )
    return run


def ship(record_path: Path, seed: int | None = None, target: Path | None = None) -> Path:
    """Save the kept actor of the chosen run as the course's trained policy; return its
    folder. The folder is replaced only once the new policy is complete."""
    record = json.loads(record_path.read_text(encoding="utf-8"))
    try:
        run = choose_run(record, seed)
    except NotShippable as reason:
        raise NotShippable(f"{record_path}: {reason}") from None
    target = target or trained.policy_dir(trained.MINITAUR)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".shipping-") as scratch:
        staged = Path(scratch) / target.name
        _save_policy(Path(run["report"]["actor_weights"]), staged / trained.SAVED_MODEL)
        report = run["report"]
        about = {
            "lesson": "03_sac_minitaur",
            "seed": run["seed"],
            "machine": record["machine"],
            "hyperparameters": report["hyperparameters"],
            "settings_changed_for_this_run": run.get("hyperparameters", ""),
            "best_step": report["kept"]["best_step"],
            "best_return": report["kept"]["best_return"],
            "kept_return": report["kept"]["kept_return"],
            "evaluations": [[int(step), float(value)] for step, _, value in report["evaluations"]],
            "source": str(record_path),
            "note": record.get("note", ""),
        }
        (staged / trained.ABOUT).write_text(json.dumps(about, indent=1) + "\n", encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        staged.rename(target)
    return target


def _save_policy(weights_file: Path, folder: Path) -> None:
    """Rebuild lesson 3's actor with these weights and save its greedy policy."""
    import numpy as np
    import tensorflow as tf
    from tf_agents.agents.sac import tanh_normal_projection_network
    from tf_agents.environments import suite_pybullet
    from tf_agents.networks import actor_distribution_network
    from tf_agents.policies import actor_policy, greedy_policy, policy_saver
    from tf_agents.train.utils import spec_utils

    with np.load(weights_file) as stored:
        weights = [stored[name] for name in stored.files]
    env = suite_pybullet.load(trained.MINITAUR_ENV)
    observation_spec, action_spec, time_step_spec = spec_utils.get_tensor_specs(env)
    # The hidden layers' kernels are every 2-D weight but the projection's, the last one.
    kernels = [w for w in weights if w.ndim == 2]
    actor_net = actor_distribution_network.ActorDistributionNetwork(
        observation_spec,
        action_spec,
        fc_layer_params=tuple(int(k.shape[1]) for k in kernels[:-1]),
        continuous_projection_net=tanh_normal_projection_network.TanhNormalProjectionNetwork,
    )
    actor_net.create_variables(observation_spec)
    actor_net.set_weights(weights)
    policy = greedy_policy.GreedyPolicy(
        actor_policy.ActorPolicy(
            time_step_spec, action_spec, actor_network=actor_net, training=False
        )
    )
    policy_saver.PolicySaver(policy, batch_size=None).save(str(folder))
    env.close()
    tf.keras.backend.clear_session()
