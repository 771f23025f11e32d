"""Videos: frames from a real environment, mp4 files on disk, players in the notebook."""

import base64
import os
import re
from typing import Any

import imageio.v2 as imageio
import numpy as np
import pytest
from IPython.display import HTML
from tf_agents.environments import suite_gym
from tf_agents.policies import random_py_policy

from course_helpers import video


def synthetic_frames(count, height=48, width=64):
    """Frames that brighten from black to white, so each one is different."""
    levels = np.linspace(0, 255, count).astype(np.uint8)
    return [np.full((height, width, 3), level, dtype=np.uint8) for level in levels]


def decode(path):
    reader: Any  # imageio's stubs type the reader as a base class that cannot iterate
    with imageio.get_reader(path) as reader:
        return [frame for frame in reader]


def test_write_mp4_decodes_back_to_the_number_of_frames_written(tmp_path):
    path = video.write_mp4(synthetic_frames(12), tmp_path / "clip.mp4")
    frames = decode(path)
    assert len(frames) == 12
    assert {frame.shape for frame in frames} == {(48, 64, 3)}


def test_write_mp4_returns_the_path_it_wrote(tmp_path):
    path = video.write_mp4(synthetic_frames(2), str(tmp_path / "clip.mp4"))
    assert path == tmp_path / "clip.mp4"
    assert path.stat().st_size > 0


def test_write_mp4_keeps_the_picture(tmp_path):
    red = np.zeros((48, 64, 3), dtype=np.uint8)
    red[..., 0] = 255
    ramp = synthetic_frames(3)
    frames = decode(video.write_mp4([red, *ramp], tmp_path / "clip.mp4"))
    channel_means = frames[0].reshape(-1, 3).mean(axis=0)
    assert channel_means[0] > 200 and channel_means[1] < 60 and channel_means[2] < 60
    brightness = [frame.mean() for frame in frames[1:]]
    assert brightness[0] < 30 and brightness[-1] > 225


def test_write_mp4_writes_at_the_requested_frame_rate(tmp_path):
    path = video.write_mp4(synthetic_frames(4), tmp_path / "clip.mp4", fps=10)
    reader: Any  # imageio's stubs type the reader as a base class without get_meta_data
    with imageio.get_reader(path) as reader:
        assert reader.get_meta_data()["fps"] == 10


def test_write_mp4_writes_cartpole_frames_at_full_size(tmp_path, cartpole):
    cartpole.reset()
    frames = decode(video.write_mp4([cartpole.render()] * 3, tmp_path / "cartpole.mp4"))
    assert len(frames) == 3
    assert frames[0].shape == (400, 600, 3)


def test_write_mp4_of_zero_frames_says_to_check_rendering(tmp_path):
    with pytest.raises(ValueError, match="No frames to write") as error:
        video.write_mp4([], tmp_path / "empty.mp4")
    assert "env.render()" in str(error.value)
    assert not (tmp_path / "empty.mp4").exists()


@pytest.mark.parametrize("shape", [(48, 64), (48, 64, 4), (48, 64, 1)])
def test_write_mp4_rejects_frames_that_are_not_rgb_images(tmp_path, shape):
    with pytest.raises(ValueError, match=r"shape \(height, width, 3\)"):
        video.write_mp4([np.zeros(shape, dtype=np.uint8)], tmp_path / "clip.mp4")


def test_write_mp4_rejects_frames_of_different_sizes_naming_the_frame(tmp_path):
    frames = synthetic_frames(3) + synthetic_frames(1, height=32)
    with pytest.raises(ValueError, match=r"frame 3 is \(32, 64, 3\)"):
        video.write_mp4(frames, tmp_path / "clip.mp4")


def test_write_mp4_streams_frames_from_a_generator(tmp_path):
    path = video.write_mp4((frame for frame in synthetic_frames(7)), tmp_path / "clip.mp4")
    assert len(decode(path)) == 7


def test_a_failed_write_keeps_the_earlier_video_and_leaves_no_partial_file(tmp_path):
    path = video.write_mp4(synthetic_frames(5), tmp_path / "clip.mp4")
    earlier = path.read_bytes()
    broken = synthetic_frames(3) + synthetic_frames(1, height=32)
    with pytest.raises(ValueError, match="same shape"):
        video.write_mp4(broken, path)
    assert path.read_bytes() == earlier
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.mp4"]


def test_episode_frames_yields_one_frame_per_step_including_each_reset(cartpole, random_policy):
    frames = list(
        video.episode_frames(cartpole, random_policy, num_episodes=1, max_steps_per_episode=5)
    )
    assert len(frames) == 6
    assert {frame.shape for frame in frames} == {(400, 600, 3)}


def test_write_mp4_into_a_missing_folder_names_the_folder(tmp_path):
    missing = tmp_path / "no_such_folder"
    with pytest.raises(FileNotFoundError, match="does not exist") as error:
        video.write_mp4(synthetic_frames(2), missing / "clip.mp4")
    assert str(missing) in str(error.value)


def test_write_mp4_to_a_bare_file_name_writes_in_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    video.write_mp4(synthetic_frames(2), "clip.mp4")
    assert len(decode(tmp_path / "clip.mp4")) == 2


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="root may write into any folder, so a read-only folder cannot be made",
)
def test_write_mp4_into_a_read_only_folder_says_it_is_not_writable(tmp_path):
    folder = tmp_path / "read_only"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(PermissionError, match="not writable"):
            video.write_mp4(synthetic_frames(2), folder / "clip.mp4")
    finally:
        folder.chmod(0o700)


def test_write_mp4_into_a_folder_it_may_not_write_says_to_choose_another(tmp_path, monkeypatch):
    # As root every folder is writable, so the permission check is made to say no.
    folder = tmp_path / "locked"
    folder.mkdir()
    real_access = os.access
    monkeypatch.setattr(
        video.os,
        "access",
        lambda p, mode: False if os.fspath(p) == str(folder) else real_access(p, mode),
    )
    with pytest.raises(PermissionError, match="is not writable") as error:
        video.write_mp4(synthetic_frames(2), folder / "clip.mp4")
    assert "Choose a path in a folder you own" in str(error.value)
    assert list(folder.iterdir()) == []


def test_embed_mp4_returns_html_with_the_file_as_a_base64_video_source(tmp_path):
    path = video.write_mp4(synthetic_frames(3), tmp_path / "clip.mp4")
    player = video.embed_mp4(path)
    assert isinstance(player, HTML)
    assert "<video" in player.data
    match = re.search(
        r'<source src="data:video/mp4;base64,([A-Za-z0-9+/=]+)" type="video/mp4">', player.data
    )
    assert match is not None
    assert base64.b64decode(match.group(1)) == path.read_bytes()


def test_embed_mp4_refuses_a_file_larger_than_max_megabytes(tmp_path):
    path = tmp_path / "big.mp4"
    path.write_bytes(b"\0" * 300_000)  # 0.3 MB
    with pytest.raises(ValueError, match="0.3 MB, more than the 0.1 MB limit") as error:
        video.embed_mp4(path, max_megabytes=0.1)
    assert "raise max_megabytes" in str(error.value)
    assert isinstance(video.embed_mp4(path, max_megabytes=1), HTML)


def test_embed_mp4_of_a_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        video.embed_mp4(tmp_path / "missing.mp4")


def test_record_episodes_returns_one_rendered_frame_per_time_step(cartpole, random_policy):
    # An upright pole cannot fall in three steps: each episode is reset + 3 steps.
    frames = video.record_episodes(cartpole, random_policy, num_episodes=2, max_steps_per_episode=3)
    assert len(frames) == 2 * (1 + 3)
    assert all(frame.shape == (400, 600, 3) and frame.dtype == np.uint8 for frame in frames)


def test_record_episodes_films_pybullet_minitaur_at_the_smaller_frame_size():
    import sys

    from course_helpers.environments import load

    env = load("MinitaurBulletEnv-v0")
    try:
        module = sys.modules[type(env.gym.unwrapped).__module__]
        default_size = module.RENDER_WIDTH, module.RENDER_HEIGHT
        policy = random_py_policy.RandomPyPolicy(env.time_step_spec(), env.action_spec())
        frames = video.record_episodes(env, policy, num_episodes=1, max_steps_per_episode=2)
        width, height = video.PYBULLET_FRAME_SIZE
        assert len(frames) == 3
        assert {frame.shape for frame in frames} == {(height, width, 3)}
        # The environment's own size is restored for renders outside the recording.
        assert (module.RENDER_WIDTH, module.RENDER_HEIGHT) == default_size
    finally:
        env.close()


def test_record_video_saves_the_episodes_and_returns_a_player(tmp_path, random_policy):
    path = tmp_path / "random_agent.mp4"
    player = video.record_video(
        "CartPole-v0", random_policy, path, num_episodes=2, max_steps_per_episode=3
    )
    assert isinstance(player, HTML)
    assert "data:video/mp4;base64," in player.data
    frames = decode(path)
    assert len(frames) == 2 * (1 + 3)
    assert frames[0].shape == (400, 600, 3)


def test_record_video_refuses_a_policy_for_another_environment_before_writing(tmp_path, cartpole):
    mountain_car = suite_gym.load("MountainCar-v0")
    policy = random_py_policy.RandomPyPolicy(
        mountain_car.time_step_spec(), mountain_car.action_spec()
    )
    path = tmp_path / "wrong.mp4"
    with pytest.raises(ValueError, match="does not fit"):
        video.record_video(cartpole, policy, path, num_episodes=1)
    assert not path.exists()
    mountain_car.close()


def test_record_video_refuses_zero_episodes(tmp_path, cartpole, random_policy):
    with pytest.raises(ValueError, match="num_episodes must be a positive integer"):
        video.record_video(cartpole, random_policy, tmp_path / "none.mp4", num_episodes=0)
