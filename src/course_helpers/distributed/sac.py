"""What every job shares: the run's settings, the Minitaur, and lesson 3's SAC agent.

The settings live in ``settings.json`` in the run's folder, which every job reads, so a
job started by hand on another machine runs with exactly the settings of the others.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from course_helpers.i18n import gettext

#: Lesson 3's settings, and the few that only a distributed run has.
DEFAULTS: dict[str, Any] = {
    "env_name": "MinitaurBulletEnv-v0",
    "seed": 42,
    "num_iterations": 150_000,  # gradient steps the learner takes
    "initial_collect_steps": 10_000,  # random steps, shared among the collect jobs
    "collect_jobs": 1,  # how many collect jobs share them (the launcher records it)
    "batch_size": 256,
    "replay_buffer_capacity": 50_000,
    "samples_per_insert": 128.0,  # lesson 3: 256 pairs sampled per 2 pairs written
    "learner_steps_per_push": 5,  # gradient steps between two pushes of the weights
    "collect_steps_per_pull": 100,  # environment steps between two pulls of the weights
    "critic_learning_rate": 3e-4,
    "actor_learning_rate": 3e-4,
    "alpha_learning_rate": 3e-4,
    "target_update_tau": 0.005,
    "target_update_period": 1,
    "gamma": 0.99,
    "reward_scale_factor": 10.0,
    "actor_fc_layer_params": [256, 256],
    "critic_joint_fc_layer_params": [256, 256],
    "policy_save_interval": 5_000,
    "eval_interval": 20_000,
    "num_eval_episodes": 10,
}

#: What quick mode changes: a run of a few hundred gradient steps that exercises every job.
QUICK: dict[str, Any] = {
    "num_iterations": 300,
    "initial_collect_steps": 400,
    "batch_size": 64,
    "replay_buffer_capacity": 5_000,
    "samples_per_insert": 32.0,
    "collect_steps_per_pull": 50,
    "policy_save_interval": 100,
    "eval_interval": 100,
    "num_eval_episodes": 1,
}

SETTINGS_FILE = "settings.json"


def write_settings(root_dir: str | os.PathLike[str], settings: Mapping[str, Any]) -> Path:
    """Write the run's settings where every job reads them; unknown names are refused."""
    unknown = sorted(set(settings) - set(DEFAULTS))
    if unknown:
        raise ValueError(
            gettext("Unknown settings {unknown}; the jobs know: {known}.").format(
                unknown=", ".join(unknown), known=", ".join(DEFAULTS)
            )
        )
    path = Path(root_dir) / SETTINGS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.partial")
    temporary.write_text(json.dumps({**DEFAULTS, **settings}, indent=1))
    os.replace(temporary, path)
    return path


def read_settings(root_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The run's settings, as :func:`write_settings` wrote them."""
    path = Path(root_dir) / SETTINGS_FILE
    try:
        return {**DEFAULTS, **json.loads(path.read_text())}
    except FileNotFoundError:
        raise SystemExit(
            gettext(
                "{path} does not exist. Start the job with the run folder's --root-dir, "
                "where the launcher wrote settings.json, or copy that file there first."
            ).format(path=path)
        ) from None


def load_env(settings: Mapping[str, Any], seed: int):
    """One Minitaur. ``seed`` goes to ``env.seed``, which pybullet's Minitaur keeps but
    does not use: its randomised bodies come from Python's and NumPy's global generators
    (lesson 3)."""
    from tf_agents.environments import suite_pybullet

    env = suite_pybullet.load(settings["env_name"])
    env.seed(seed)
    return env


def create_agent(settings: Mapping[str, Any], env, train_step):
    """Lesson 3's SAC agent, built from the settings (call it inside the strategy's scope)."""
    import tensorflow as tf
    from tf_agents.agents.ddpg import critic_network
    from tf_agents.agents.sac import sac_agent, tanh_normal_projection_network
    from tf_agents.networks import actor_distribution_network
    from tf_agents.train.utils import spec_utils

    observation_spec, action_spec, time_step_spec = spec_utils.get_tensor_specs(env)
    critic_net = critic_network.CriticNetwork(
        (observation_spec, action_spec),
        observation_fc_layer_params=None,
        action_fc_layer_params=None,
        joint_fc_layer_params=tuple(settings["critic_joint_fc_layer_params"]),
        kernel_initializer="glorot_uniform",
        last_kernel_initializer="glorot_uniform",
    )
    actor_net = actor_distribution_network.ActorDistributionNetwork(
        observation_spec,
        action_spec,
        fc_layer_params=tuple(settings["actor_fc_layer_params"]),
        continuous_projection_net=tanh_normal_projection_network.TanhNormalProjectionNetwork,
    )
    agent = sac_agent.SacAgent(
        time_step_spec,
        action_spec,
        actor_network=actor_net,
        critic_network=critic_net,
        actor_optimizer=tf.keras.optimizers.Adam(settings["actor_learning_rate"]),
        critic_optimizer=tf.keras.optimizers.Adam(settings["critic_learning_rate"]),
        alpha_optimizer=tf.keras.optimizers.Adam(settings["alpha_learning_rate"]),
        target_update_tau=settings["target_update_tau"],
        target_update_period=settings["target_update_period"],
        td_errors_loss_fn=tf.math.squared_difference,
        gamma=settings["gamma"],
        reward_scale_factor=settings["reward_scale_factor"],
        train_step_counter=train_step,
    )
    agent.initialize()
    return agent
