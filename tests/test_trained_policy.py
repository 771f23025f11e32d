"""The trained Minitaur that lesson 3 shows first: made by `course ship-policy` from a
recorded full run whose actor walks, loaded by TF-Agents as the lesson loads it, and
described with the run it comes from."""

import json

import numpy as np
import pytest

from course_helpers import i18n, trained
from course_tools import trained_policy

MACHINE = {"date": "2026-11-27T03:00:00+00:00", "cores": 2, "cpu": "AMD EPYC", "commit": "abc1234"}


def test_a_trial_with_local_changes_says_so_in_the_learners_language(monkeypatch, tmp_path):
    folder = tmp_path / trained.MINITAUR
    folder.mkdir()
    about = {
        "seed": 10,
        "machine": {**MACHINE, "commit": "4f1793c with local changes"},
        "hyperparameters": {"num_iterations": 120_000},
        "best_step": 120_000,
        "best_return": 5.1,
        "kept_return": 5.7,
    }
    (folder / trained.ABOUT).write_text(json.dumps(about))
    monkeypatch.setattr(trained, "_FOLDER", tmp_path)
    i18n.set_language("es")
    try:
        assert "4f1793c (con cambios locales)" in trained.describe_trained(trained.MINITAUR)
    finally:
        i18n.set_language("en")


def record(tmp_path, weights_file=None, kept=6.2, quick=False, seeds=(7,)):
    runs = [
        {
            "lesson": "03",
            "seed": seed,
            "quick": quick,
            "hyperparameters": "",
            "report": {
                "hyperparameters": {"num_iterations": 150_000},
                "evaluations": [[20_000, 240.0, 1.5], [140_000, 1700.0, 6.5]],
                "kept": {"best_step": 140_000.0, "best_return": 6.5, "kept_return": kept},
                "actor_weights": str(weights_file) if weights_file else None,
            },
        }
        for seed in seeds
    ]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"machine": MACHINE, "runs": runs}))
    return path


@pytest.mark.parametrize(
    "options, reason",
    [
        ({"kept": 3.4}, "does not walk"),
        ({"quick": True}, "quick-mode"),
        ({"weights": False}, "COURSE_BENCH_KEEP_ACTOR"),
        ({"seeds": (7, 8)}, "--seed"),
    ],
)
def test_a_run_that_would_mislead_is_refused_with_the_reason(tmp_path, options, reason):
    weights = None if options.get("weights") is False else tmp_path / "actor.npz"
    path = record(
        tmp_path,
        weights,
        kept=options.get("kept", 6.2),
        quick=options.get("quick", False),
        seeds=options.get("seeds", (7,)),
    )
    with pytest.raises(trained_policy.NotShippable, match=reason) as raised:
        trained_policy.ship(path, target=tmp_path / "out")
    assert str(path) in str(raised.value)
    assert not (tmp_path / "out").exists()


def test_the_shipped_policy_loads_as_the_lesson_loads_it_and_says_where_it_comes_from(
    tmp_path, monkeypatch
):
    import tensorflow as tf
    from tf_agents.agents.sac import tanh_normal_projection_network
    from tf_agents.environments import suite_pybullet
    from tf_agents.networks import actor_distribution_network
    from tf_agents.policies import py_tf_eager_policy
    from tf_agents.train.utils import spec_utils

    env = suite_pybullet.load(trained.MINITAUR_ENV)
    observation_spec, action_spec, _ = spec_utils.get_tensor_specs(env)
    actor = actor_distribution_network.ActorDistributionNetwork(
        observation_spec,
        action_spec,
        fc_layer_params=(32, 16),
        continuous_projection_net=tanh_normal_projection_network.TanhNormalProjectionNetwork,
    )
    actor.create_variables(observation_spec)
    weights_file = tmp_path / "actor.npz"
    np.savez(weights_file, *actor.get_weights())

    target = tmp_path / "trained_policies" / trained.MINITAUR
    folder = trained_policy.ship(record(tmp_path, weights_file), target=target)
    assert folder == target
    monkeypatch.setattr(trained, "_FOLDER", target.parent)

    policy = py_tf_eager_policy.SavedModelPyTFEagerPolicy(
        course_dir := trained.trained_policy_dir(trained.MINITAUR), load_specs_from_pbtxt=True
    )
    assert course_dir.endswith("policy")
    time_step = env.reset()
    action = policy.action(time_step).action
    # The greedy action is the actor's mode: tanh of the mean the network computes.
    observation = tf.nest.map_structure(lambda x: x[None], time_step.observation)
    mean = actor(observation, step_type=None, network_state=())[0].mode()
    assert np.allclose(action, mean.numpy()[0], atol=1e-5)
    env.close()

    i18n.set_language("en")
    told = trained.describe_trained(trained.MINITAUR)
    assert told.startswith("A stored result, not your run")
    assert "(seed 7, 150,000 iterations) on 27 November 2026" in told and "abc1234" in told
    assert "iteration 140,000" in told and "6.20" in told
    assert "differ" not in told
    # Beside the notebook's own settings, it names those its run did not share.
    told = trained.describe_trained(
        trained.MINITAUR, {"num_iterations": 150_000, "log_interval": 1}
    )
    assert "differ" not in told
    told = trained.describe_trained(trained.MINITAUR, {"num_iterations": 120_000})
    assert told.endswith("differ from this notebook's: num_iterations = 150,000.")
    i18n.set_language("fr")
    told = trained.describe_trained(trained.MINITAUR)
    assert "27 novembre 2026" in told and "150\u202f000" in told
    i18n.set_language("en")


def test_a_missing_policy_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setattr(trained, "_FOLDER", tmp_path)
    with pytest.raises(FileNotFoundError, match="Reinstall"):
        trained.trained_policy_dir(trained.MINITAUR)
