"""Videos of a policy playing an environment, written as mp4 and shown in the notebook.

Frames come from the environment's own renderer, imageio with its ffmpeg plugin (which
ships its own ffmpeg binary) writes the mp4, and the file is embedded as a base64
``<video>`` tag so it plays in JupyterLab, Colab and exported HTML alike.
"""

from __future__ import annotations

import base64
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from course_helpers.environments import as_py_environment, play
from course_helpers.i18n import gettext
from course_helpers.numbers import number
from course_helpers.progress import progress

#: Videos larger than this are not embedded: they would bloat the notebook file.
DEFAULT_MAX_MEGABYTES = 10.0

#: pybullet renders on the CPU. Its Minitaur draws 960 x 720 frames by default, at about
#: a second each on a laptop core; at 480 x 360 a frame takes about 50 ms.
PYBULLET_FRAME_SIZE = (480, 360)


@contextmanager
def _pybullet_frame_size(env: Any, size: tuple[int, int]) -> Iterator[None]:
    """Render pybullet's Minitaur environments at ``size`` while recording.

    Those environments read their frame size from module constants (RENDER_WIDTH,
    RENDER_HEIGHT) at every render() call and offer no argument for it.
    """
    gym_env = getattr(getattr(env, "gym", None), "unwrapped", None)
    module: Any = sys.modules.get(type(gym_env).__module__) if gym_env is not None else None
    if (
        module is None
        or not hasattr(module, "RENDER_WIDTH")
        or not hasattr(module, "RENDER_HEIGHT")
    ):
        yield
        return
    saved = module.RENDER_WIDTH, module.RENDER_HEIGHT
    module.RENDER_WIDTH, module.RENDER_HEIGHT = size
    try:
        yield
    finally:
        module.RENDER_WIDTH, module.RENDER_HEIGHT = saved


def episode_frames(
    env: Any, policy: Any, num_episodes: int = 3, max_steps_per_episode: int | None = None
) -> Iterator[np.ndarray]:
    """Play episodes with ``policy`` and yield each rendered frame (H x W x 3, uint8).

    Frames are produced one at a time, so a long episode never sits in memory whole
    (1,000 Minitaur frames would take half a gigabyte). pybullet's Minitaur is filmed at
    :data:`PYBULLET_FRAME_SIZE` to keep recording fast.
    """
    env = as_py_environment(env)
    steps = play(env, policy, num_episodes, max_steps_per_episode)
    with _pybullet_frame_size(env, PYBULLET_FRAME_SIZE):
        for py_env, _ in progress(steps, "Filming", unit="frame", leave=False):
            yield py_env.render()


def record_episodes(
    env: Any, policy: Any, num_episodes: int = 3, max_steps_per_episode: int | None = None
) -> list[np.ndarray]:
    """Play episodes with ``policy`` and return every rendered frame, as a list."""
    return list(episode_frames(env, policy, num_episodes, max_steps_per_episode))


def write_mp4(frames: Iterable[np.ndarray], path: str | os.PathLike, fps: int = 30) -> Path:
    """Write RGB frames (a list, or a generator such as :func:`episode_frames`) to an mp4 file.

    The video goes to a temporary file beside ``path`` and replaces ``path`` only once it
    is complete, so a failure never leaves a broken video or destroys an earlier one.
    """
    import imageio.v2 as imageio

    path = Path(path)
    directory = path.parent  # Path("clip.mp4").parent is Path(".")
    if not directory.is_dir():
        raise FileNotFoundError(
            gettext("Cannot write {path}: the folder {folder} does not exist.").format(
                path=path, folder=directory
            )
        )
    if not os.access(directory, os.W_OK):
        raise PermissionError(
            gettext(
                "Cannot write {path}: the folder {folder} is not writable. Choose a path "
                "in a folder you own, for example the notebook's working folder."
            ).format(path=path, folder=directory)
        )
    stream = iter(frames)
    first = next(stream, None)
    if first is None:
        raise ValueError(
            gettext(
                "No frames to write to {path}: the episode produced none. Check that the "
                "environment renders (env.render() after env.reset()) and that the policy ran."
            ).format(path=path)
        )
    first = np.asarray(first)
    if first.ndim != 3 or first.shape[-1] != 3:
        raise ValueError(
            gettext(
                "Frames must be RGB images of shape (height, width, 3); frame 0 has shape {shape}."
            ).format(shape=first.shape)
        )
    descriptor, partial = tempfile.mkstemp(suffix=".mp4", prefix=f".{path.stem}-", dir=directory)
    os.close(descriptor)
    failure: BaseException | None = None
    writer: Any  # imageio's types know no append_data; its FFMPEG writer has it
    with imageio.get_writer(
        partial,
        format="FFMPEG",
        fps=fps,
        codec="libx264",
        macro_block_size=2,
        ffmpeg_log_level="error",
    ) as writer:
        # A failure is held until the writer has closed normally: leaving the `with` on an
        # exception makes imageio skip waiting for ffmpeg, which then writes the file later.
        try:
            writer.append_data(first.astype(np.uint8, copy=False))
            for index, frame in enumerate(stream, start=1):
                frame = np.asarray(frame)
                if frame.shape != first.shape:
                    raise ValueError(
                        gettext(
                            "All frames must have the same shape: frame 0 is {first}, "
                            "frame {index} is {shape}."
                        ).format(first=first.shape, index=index, shape=frame.shape)
                    )
                writer.append_data(frame.astype(np.uint8, copy=False))
        except BaseException as error:  # noqa: BLE001 (re-raised below, after clean-up)
            failure = error
    if failure is not None:
        os.remove(partial)
        raise failure
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(partial, 0o666 & ~umask)  # mkstemp makes files private; a video is not
    os.replace(partial, path)
    return path


def embed_mp4(path: str | os.PathLike, max_megabytes: float = DEFAULT_MAX_MEGABYTES):
    """Return an HTML ``<video>`` element that plays the mp4 inside the notebook."""
    from IPython.display import HTML

    path = Path(path)
    size = path.stat().st_size / 1e6
    if size > max_megabytes:
        raise ValueError(
            gettext(
                "{path} is {size} MB, more than the {limit} MB limit for embedding "
                "a video in a notebook. Record fewer episodes or steps, or raise max_megabytes."
            ).format(path=path, size=number(size, 1), limit=number(max_megabytes))
        )
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return HTML(
        '<video width="480" controls autoplay loop muted>'
        f'<source src="data:video/mp4;base64,{data}" type="video/mp4"></video>'
    )


def record_video(
    env: Any,
    policy: Any,
    path: str | os.PathLike,
    num_episodes: int = 3,
    fps: int = 30,
    max_steps_per_episode: int | None = None,
    max_megabytes: float = DEFAULT_MAX_MEGABYTES,
):
    """Record ``policy`` playing ``env``, save it to ``path`` and return a player for the notebook.

    In a lesson (the names come from its cells)::

            record_video("CartPole-v0", agent.policy, "trained_agent.mp4")
    """
    played = episode_frames(env, policy, num_episodes, max_steps_per_episode)
    return embed_mp4(write_mp4(played, path, fps), max_megabytes)
