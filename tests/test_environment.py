"""The installed stack works as the course needs it, pins included.

requirements.in keeps typing-extensions at 4.5.0, which TensorFlow 2.15 needs for
PolicySaver, and so takes an IPython older than 8.23, which starts with it. These tests
prove both halves of that choice, and that what is installed is what is pinned.
"""

import re
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

REQUIREMENTS = Path(__file__).resolve().parents[1] / "requirements.txt"


def pinned_versions():
    """``{name: version}`` for every ``name==version`` line of requirements.txt."""
    pins: dict[str, str] = {}
    for line in REQUIREMENTS.read_text().splitlines():
        requirement = line.split("#", 1)[0].split(";", 1)[0].strip()
        match = re.fullmatch(
            r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*==\s*(\S+)", requirement
        )
        if match:
            pins.setdefault(canonical(match.group(1)), match.group(2))
    return pins


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.mark.parametrize(
    "package", ["tensorflow", "tf-agents", "dm-reverb", "gym", "typing-extensions", "ipython"]
)
def test_installed_version_matches_requirements_txt(package):
    pins = pinned_versions()
    assert package in pins, f"requirements.txt pins no version of {package}"
    assert metadata.version(package) == pins[package], (
        f"{package} {metadata.version(package)} is installed but requirements.txt pins "
        f"{pins[package]}; reinstall with: make setup"
    )


# Starts a Jupyter kernel or server: a `notebook` test.
@pytest.mark.notebook
def test_a_jupyter_kernel_starts_with_the_pinned_typing_extensions():
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", startup_timeout=60)
    printed = []

    def collect(message):
        if message["msg_type"] == "stream":
            printed.append(message["content"]["text"])

    try:
        reply = client.execute_interactive(
            "import IPython, typing_extensions\n"
            "from importlib.metadata import version\n"
            "print(IPython.__version__, version('typing-extensions'))",
            timeout=60,
            output_hook=collect,
        )
        assert reply["content"]["status"] == "ok", reply["content"]
        ipython, typing_extensions = "".join(printed).split()
        pins = pinned_versions()
        assert (ipython, typing_extensions) == (pins["ipython"], pins["typing-extensions"])
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_policy_saver_saves_a_dqn_policy_that_reloads_and_acts(tmp_path):
    import tensorflow as tf
    from tf_agents.agents.dqn import dqn_agent
    from tf_agents.environments import suite_gym, tf_py_environment
    from tf_agents.networks import sequential
    from tf_agents.policies import policy_saver

    env = tf_py_environment.TFPyEnvironment(suite_gym.load("CartPole-v0"))
    num_actions = int(env.action_spec().maximum - env.action_spec().minimum + 1)
    q_network = sequential.Sequential(
        [tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(num_actions)]
    )
    agent = dqn_agent.DqnAgent(
        env.time_step_spec(),
        env.action_spec(),
        q_network=q_network,
        optimizer=tf.keras.optimizers.Adam(1e-3),
    )
    agent.initialize()

    saved = tmp_path / "policy"
    policy_saver.PolicySaver(agent.policy).save(str(saved))
    assert (saved / "saved_model.pb").is_file()

    reloaded = tf.saved_model.load(str(saved))
    time_step = env.reset()
    action = reloaded.action(time_step).action.numpy()
    assert action.shape == (1,)
    assert env.action_spec().minimum <= action[0] <= env.action_spec().maximum
    # The reloaded greedy policy is the saved one: same action as the agent's own.
    np.testing.assert_array_equal(action, agent.policy.action(time_step).action.numpy())


def test_reverb_server_starts_on_a_free_port_serves_a_table_and_stops():
    import reverb

    table = reverb.Table(
        name="replay",
        sampler=reverb.selectors.Uniform(),
        remover=reverb.selectors.Fifo(),
        max_size=10,
        rate_limiter=reverb.rate_limiters.MinSize(1),
    )
    server = reverb.Server(tables=[table], port=None)
    try:
        assert server.port > 0
        client = reverb.Client(f"localhost:{server.port}")
        client.insert([np.arange(3, dtype=np.int32)], priorities={"replay": 1.0})
        (sample,) = list(client.sample("replay", num_samples=1))
        np.testing.assert_array_equal(sample[0].data[0], np.arange(3, dtype=np.int32))
        assert client.server_info()["replay"].current_size == 1
    finally:
        server.stop()
