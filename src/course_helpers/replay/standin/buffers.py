"""The stand-ins for TF-Agents' ``reverb_replay_buffer`` and ``reverb_utils``."""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any

import numpy as np

from course_helpers.replay.standin.tables import ELSEWHERE, Client, Items, SampleInfo, Server


class ReverbReplayBuffer:
    """Samples a table's items as a ``tf.data.Dataset``, like TF-Agents' ``ReverbReplayBuffer``."""

    def __init__(
        self,
        data_spec: Any,
        table_name: str,
        sequence_length: int,
        server_address: str | None = None,
        local_server: Server | None = None,
        dataset_buffer_size: int | None = None,
        max_cycle_length: int = 32,
        num_workers_per_iterator: int = -1,
        max_samples_per_stream: int = -1,
        rate_limiter_timeout_ms: int = -1,
    ) -> None:
        """Reverb's tuning options after ``local_server`` are accepted and have no effect."""
        if server_address is not None or local_server is None:
            raise NotImplementedError(
                "The in-process stand-in has no network: pass local_server=<the Server> "
                f"instead of server_address. {ELSEWHERE}"
            )
        if not sequence_length:
            raise NotImplementedError(
                f"The in-process stand-in needs a fixed sequence_length. {ELSEWHERE}"
            )
        self.data_spec = data_spec
        self._table_name = table_name
        self._sequence_length = sequence_length
        self._local_server = local_server
        self._py_client = Client(local_server)
        self._table = self._py_client._table(table_name)
        self._table._open(sequence_length, data_spec)
        self.capacity = self._table.max_size

    @property
    def py_client(self) -> Client:
        return self._py_client

    @property
    def local_server(self) -> Server:
        return self._local_server

    def num_frames(self) -> int:
        """The number of items in the table (as Reverb's ``current_size``; not steps)."""
        return self._table._open(self._sequence_length, self.data_spec).size()

    def as_dataset(
        self,
        sample_batch_size: int | None = None,
        num_steps: int | None = None,
        num_parallel_calls: int | None = None,
        sequence_preprocess_fn: Any = None,
        single_deterministic_pass: bool = False,
    ) -> Any:
        """Endless ``(items, SampleInfo)`` batches, each shaped ``[B, sequence_length, ...]``."""
        import tensorflow as tf

        if single_deterministic_pass:
            raise ValueError(
                "Unable to perform a single deterministic pass over a table with a Uniform "
                "sampler (Reverb refuses this too)."
            )
        if num_steps is not None and num_steps != self._sequence_length:
            raise ValueError(
                f"The in-process stand-in hands out whole items: num_steps must be None or the "
                f"sequence_length the items were written with ({self._sequence_length}), "
                f"not {num_steps}."
            )
        if sample_batch_size is None:
            raise ValueError(
                "The in-process stand-in needs sample_batch_size (for example 64): it samples "
                "batches of items, not single items."
            )
        if num_parallel_calls and num_parallel_calls > sample_batch_size:
            raise ValueError(
                f"num_parallel_calls cannot be bigger than sample_batch_size "
                f"{num_parallel_calls} > {sample_batch_size}"
            )
        if sequence_preprocess_fn is not None:
            raise NotImplementedError(
                f"The in-process stand-in does not support sequence_preprocess_fn. {ELSEWHERE}"
            )
        items = self._table._open(self._sequence_length, self.data_spec)
        min_size = self._table.rate_limiter.min_size_to_sample

        def sample(_: Any) -> tuple[Any, SampleInfo]:
            return items.sample(sample_batch_size, min_size, self._table_name)

        return tf.data.Dataset.counter().map(sample, num_parallel_calls=num_parallel_calls)

    def add_batch(self, items: Any) -> None:
        raise NotImplementedError(
            "ReverbReplayBuffer does not support `add_batch`; write through "
            "reverb_utils.ReverbAddTrajectoryObserver."
        )

    def get_next(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("ReverbReplayBuffer does not support `get_next`.")

    def gather_all(self) -> None:
        raise NotImplementedError("ReverbReplayBuffer does not support `gather_all`.")


class ReverbAddTrajectoryObserver:
    """Writes the last ``sequence_length`` steps as one item every ``stride_length`` steps.

    Mirrors TF-Agents' observer step for step: the count of cached steps restarts after
    each boundary step (LAST -> FIRST), so no item spans two episodes; the boundary step
    can end an item but never sits inside one.
    """

    def __init__(
        self,
        py_client: Client,
        table_name: str | Sequence[str],
        sequence_length: int,
        stride_length: int = 1,
        priority: float = 1,
        pad_end_of_episodes: bool = False,
        tile_end_of_episodes: bool = False,
    ) -> None:
        if pad_end_of_episodes or tile_end_of_episodes:
            raise NotImplementedError(
                f"The in-process stand-in does not pad the ends of episodes. {ELSEWHERE}"
            )
        names = [table_name] if isinstance(table_name, str) else list(table_name)
        self._tables = [py_client._table(name) for name in names]
        self._py_client = py_client
        self._sequence_length = sequence_length
        self._stride_length = stride_length
        self._priority = priority  # kept for the API; uniform sampling ignores it
        self._cache: collections.deque[list[Any]] = collections.deque(maxlen=sequence_length)
        self._cached_steps = 0
        self._items: list[Items] | None = None
        self._closed = False

    @property
    def py_client(self) -> Client:
        return self._py_client

    def __call__(self, trajectory: Any) -> None:
        """Cache one unbatched step; write an item when the count says so."""
        import tensorflow as tf

        if self._closed:
            raise ValueError("This observer was closed; call open() before writing again.")
        if self._items is None:
            step_spec = tf.nest.map_structure(
                lambda x: tf.TensorSpec(np.shape(x), np.asarray(x).dtype), trajectory
            )
            self._items = [table._open(self._sequence_length, step_spec) for table in self._tables]
        self._cache.append(tf.nest.flatten(trajectory))
        self._cached_steps += 1
        self._write_cached_steps()
        if trajectory.is_boundary():
            self.reset(write_cached_steps=False)

    def _sequence_lengths_reached(self) -> bool:
        return (
            self._cached_steps >= self._sequence_length
            and (self._cached_steps - self._sequence_length) % self._stride_length == 0
        )

    def _write_cached_steps(self) -> None:
        if not self._sequence_lengths_reached():
            return
        for items in self._items or ():
            items.add(self._cache)

    def flush(self) -> None:
        """Nothing to do: items are in the table as soon as they are written."""

    def reset(self, write_cached_steps: bool = True) -> None:
        """Drop the cached steps, as the real observer does between episodes.

        Like the real one (without padding), ``write_cached_steps=True`` writes the last
        item again if the count allows it and raises ValueError otherwise.
        """
        if write_cached_steps and self._cached_steps:
            if not self._sequence_lengths_reached():
                raise ValueError(
                    "write_cached_steps is True, but not enough steps remain in the cache to "
                    f"write an item with sequence_length={self._sequence_length}, consider "
                    "enabling pad_end_of_episodes."
                )
            self._write_cached_steps()
        self._cache.clear()
        self._cached_steps = 0
        self._closed = False

    def open(self) -> None:
        self._closed = False

    def close(self) -> None:
        """Drop the cached steps and stop accepting new ones (until ``open()``)."""
        self._cache.clear()
        self._cached_steps = 0
        self._closed = True
