"""Reverb where it installs, an in-process stand-in where it does not.

Lessons 02 and 03 replay experience through Reverb, and they import it from here::

    from course_helpers.replay import reverb, reverb_replay_buffer, reverb_utils

Where dm-reverb is importable (Python 3.11: Binder, a local install) these three names
*are* the real modules: ``reverb``, ``tf_agents.replay_buffers.reverb_replay_buffer`` and
``tf_agents.replay_buffers.reverb_utils``. Where it is not (today's Colab: Python 3.12+,
no Reverb wheels) they are small stand-ins with the part of the API the lessons use, so
the lesson code runs unchanged. ``COURSE_REPLAY=inprocess`` picks the stand-in even where
Reverb is installed (tests; instructors previewing Colab); ``COURSE_REPLAY=reverb``
insists on Reverb.

The stand-in keeps Reverb's ideas: a table stores *items* of ``sequence_length``
consecutive steps, samples them uniformly and evicts the oldest first, and the observer
writes exactly the items Reverb's ``ReverbAddTrajectoryObserver`` writes (one every
``stride_length`` steps, none across an episode boundary). What differs:

- no server process and no network port: a table is NumPy arrays in this process's
  memory, so only this process can write or sample it. ``Server.port`` is a number that
  names the server inside this process, so ``f"localhost:{server.port}"`` finds it;
- only the Uniform sampler and the Fifo remover;
- rate limiters: only the minimum size is honoured, and sampling below it raises an
  error instead of blocking (nothing else in one process could fill the table);
  ``SampleToInsertRatio``'s ratio is not enforced;
- ``as_dataset`` needs ``sample_batch_size`` and hands out whole items (``num_steps``
  None or equal to ``sequence_length``); ``TrajectoryDataset.from_table_signature``
  hands out single items, as Reverb's does;
- the ``SampleInfo`` beside each batch has the real structure, but ``key`` is the item's
  insertion number, ``priority`` is always 1 and ``times_sampled`` 0 (not tracked).

Importing this module does not import TensorFlow; the names resolve when first used.
"""

from __future__ import annotations

import collections
import functools
import importlib
import itertools
import importlib.util
import os
import threading
import types
import weakref
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

#: The environment variable that chooses the backend: ``reverb`` or ``inprocess``.
BACKEND_VARIABLE = "COURSE_REPLAY"
_BACKENDS = ("reverb", "inprocess")

# The real modules behind each name the lessons import.
_REAL_MODULES = {
    "reverb": "reverb",
    "reverb_replay_buffer": "tf_agents.replay_buffers.reverb_replay_buffer",
    "reverb_utils": "tf_agents.replay_buffers.reverb_utils",
}

_ELSEWHERE = ("The real Reverb supports it: run the lesson on Python 3.11 "
              "(Binder or a local install).")


@functools.cache
def reverb_available() -> bool:
    """True when dm-reverb can be imported here (looked up once, without importing it)."""
    return importlib.util.find_spec("reverb") is not None


def backend() -> str:
    """``"reverb"`` or ``"inprocess"``: what the lessons' replay names resolve to right now."""
    raw = os.environ.get(BACKEND_VARIABLE, "")
    choice = raw.strip().lower()
    if not choice:
        return "reverb" if reverb_available() else "inprocess"
    if choice not in _BACKENDS:
        raise ValueError(
            f"{BACKEND_VARIABLE}={raw!r} is not understood. Set it to 'reverb' or 'inprocess', "
            "or leave it unset to use Reverb where it is installed."
        )
    if choice == "reverb" and not reverb_available():
        raise ModuleNotFoundError(
            f"{BACKEND_VARIABLE}=reverb, but dm-reverb is not installed here (it installs only "
            "on Python 3.11 or older). Unset it to use the in-process stand-in."
        )
    return choice


def __getattr__(name: str) -> Any:
    """Resolve ``reverb``, ``reverb_replay_buffer`` and ``reverb_utils`` on each access (PEP 562).

    Nothing is cached, so changing ``COURSE_REPLAY`` takes effect at the next import.
    """
    if name not in _REAL_MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if backend() == "reverb":
        return importlib.import_module(_REAL_MODULES[name])
    return _STAND_INS[name]


def __dir__() -> list[str]:
    return sorted([*globals(), *_REAL_MODULES])


# ---------------------------------------------------------------------------------------
# The stand-in for `reverb`: selectors, rate limiters, Table, Server, SampleInfo.


class SampleInfo(NamedTuple):
    """Reverb's details about a sampled item; same fields and dtypes as ``reverb.SampleInfo``."""

    key: Any  # tf.uint64: here the item's insertion number
    probability: Any  # tf.float64: 1 / table size, as uniform sampling gives
    table_size: Any  # tf.int64
    priority: Any  # tf.float64: always 1 (uniform sampling ignores priorities)
    times_sampled: Any  # tf.int32: always 0, not tracked


class ReplaySample(NamedTuple):
    """One sampled item as ``reverb.TrajectoryDataset`` yields it: its info, then its data."""

    info: SampleInfo
    data: Any


class _Selector:
    """Names how a table picks items; the stand-in implements Uniform sampling and Fifo removal."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args, self.kwargs = args, kwargs

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Uniform(_Selector):
    """Sample every item with the same probability."""


class Fifo(_Selector):
    """Remove (or sample) the oldest item first."""


class Lifo(_Selector):
    """Newest first; accepted by name only, so the error can say what is supported."""


class Prioritized(_Selector):
    """Sample in proportion to priority; accepted by name only."""


class MaxHeap(_Selector):
    """Highest priority first; accepted by name only."""


class MinHeap(_Selector):
    """Lowest priority first; accepted by name only."""


class MinSize:
    """Allow sampling once the table holds ``min_size_to_sample`` items."""

    def __init__(self, min_size_to_sample: int) -> None:
        if min_size_to_sample < 1:
            raise ValueError(f"min_size_to_sample must be at least 1, got {min_size_to_sample}.")
        self.min_size_to_sample = int(min_size_to_sample)


class SampleToInsertRatio(MinSize):
    """Reverb keeps samples per insert near a ratio; the stand-in honours only the min size."""

    def __init__(self, samples_per_insert: float, min_size_to_sample: int,
                 error_buffer: float | tuple[float, float]) -> None:
        super().__init__(min_size_to_sample)
        self.samples_per_insert = samples_per_insert
        self.error_buffer = error_buffer


class _Items:
    """A table's memory: one NumPy array per field, one row per item, used as a ring.

    New items overwrite the oldest (Reverb's Fifo remover) and samples are drawn uniformly
    from the rows in use (its Uniform sampler). tf.data samples in background threads
    while the observer writes, so a lock keeps every item whole.
    """

    def __init__(self, step_spec: Any, sequence_length: int, max_size: int) -> None:
        import tensorflow as tf

        self.sequence_length, self.max_size = sequence_length, max_size
        self.spec = tf.nest.map_structure(
            lambda s: tf.TensorSpec([sequence_length, *s.shape], s.dtype), step_spec)
        self.fields = [np.zeros([max_size, *s.shape], s.dtype.as_numpy_dtype)
                       for s in tf.nest.flatten(self.spec)]
        self.written = 0  # items ever written; the newest sits in row (written - 1) % max_size
        self.lock = threading.Lock()

    def size(self) -> int:
        return min(self.written, self.max_size)

    def add(self, steps: Sequence[Sequence[Any]]) -> None:
        """Store one item: ``sequence_length`` steps, each a flattened Trajectory."""
        with self.lock:
            row = self.written % self.max_size
            for field, values in zip(self.fields, zip(*steps)):
                field[row] = values
            self.written += 1

    def _gather(self, uniform: np.ndarray, min_size: int, table_name: str) -> list[np.ndarray]:
        with self.lock:
            size = self.size()
            if size < min_size:
                raise ValueError(
                    f"The table {table_name!r} holds {size} items, but its rate limiter needs at "
                    f"least {min_size} before sampling. Collect more steps first (Reverb would "
                    "wait forever here: nothing else in this process can add them).")
            keys = self.written - size + (uniform * size).astype(np.int64)
            return [field[keys % self.max_size] for field in self.fields] + [keys, np.int64(size)]

    def sample(self, batch_size: int, min_size: int, table_name: str,
               per_step: bool = True) -> tuple[Any, SampleInfo]:
        """A batch of items ``[batch_size, sequence_length, ...]`` and their SampleInfo.

        The info is repeated for every step (``[batch_size, sequence_length]``), as
        TF-Agents' ``as_dataset`` gives it, or given once per item (``per_step=False``),
        as Reverb's own ``TrajectoryDataset`` does.
        """
        import tensorflow as tf

        flat_spec = tf.nest.flatten(self.spec)
        # Drawn by TensorFlow, so tf.random.set_seed governs sampling as it does elsewhere.
        uniform = tf.random.uniform([batch_size], dtype=tf.float64)
        *flat, keys, size = tf.numpy_function(
            lambda u: self._gather(u, min_size, table_name), [uniform],
            [s.dtype for s in flat_spec] + [tf.int64, tf.int64], stateful=True)
        for tensor, spec in zip(flat, flat_spec):
            tensor.set_shape([batch_size, *spec.shape])
        keys.set_shape([batch_size])
        size.set_shape([])
        shape = [batch_size, self.sequence_length] if per_step else [batch_size]
        keys = tf.cast(keys, tf.uint64)
        return tf.nest.pack_sequence_as(self.spec, flat), SampleInfo(
            key=tf.broadcast_to(keys[:, None], shape) if per_step else keys,
            probability=tf.fill(shape, 1.0 / tf.cast(size, tf.float64)),
            table_size=tf.fill(shape, size),
            priority=tf.ones(shape, tf.float64),
            times_sampled=tf.zeros(shape, tf.int32),
        )


class Table:
    """A named store of items with a sampler, a remover, a maximum size and a rate limiter."""

    def __init__(self, name: str, sampler: _Selector, remover: _Selector, max_size: int,
                 rate_limiter: MinSize, max_times_sampled: int = 0,
                 extensions: Sequence[Any] = (), signature: Any = None) -> None:
        if not isinstance(sampler, Uniform) or not isinstance(remover, Fifo):
            raise NotImplementedError(
                f"The in-process stand-in for Reverb supports sampler=Uniform() with "
                f"remover=Fifo() only, not sampler={sampler!r}, remover={remover!r}. {_ELSEWHERE}")
        if max_times_sampled or extensions:
            raise NotImplementedError(
                f"The in-process stand-in for Reverb supports neither max_times_sampled nor "
                f"table extensions. {_ELSEWHERE}")
        if not isinstance(rate_limiter, MinSize):
            raise NotImplementedError(
                f"The in-process stand-in supports the MinSize and SampleToInsertRatio rate "
                f"limiters, not {rate_limiter!r}. {_ELSEWHERE}")
        self.name = name
        self.max_size = int(max_size)
        self.sampler, self.remover = sampler, remover
        self.rate_limiter = rate_limiter
        self.signature = signature
        self._items: _Items | None = None

    def _open(self, sequence_length: int, step_spec: Any) -> _Items:
        """The table's memory, made on first use for items of ``sequence_length`` steps.

        Steps are shaped by the table's signature (less its outer dimension) when it has
        one, otherwise by ``step_spec``.
        """
        if self._items is None:
            if self.signature is not None:
                import tensorflow as tf

                step_spec = tf.nest.map_structure(
                    lambda s: tf.TensorSpec(s.shape[1:], s.dtype), self.signature)
            self._items = _Items(step_spec, sequence_length, self.max_size)
        elif self._items.sequence_length != sequence_length:
            raise ValueError(
                f"Table '{self.name}' holds items of {self._items.sequence_length} steps; the "
                f"in-process stand-in cannot also store items of {sequence_length} steps.")
        return self._items

    def __repr__(self) -> str:
        return f"Table(name={self.name!r}, max_size={self.max_size}) (in-process stand-in)"


# In-process servers by the made-up port that names them, so that a dataset given
# f"localhost:{server.port}" finds its server as it would over the network.
_servers: "weakref.WeakValueDictionary[int, Server]" = weakref.WeakValueDictionary()
_port_numbers = itertools.count(1)


class Server:
    """Holds the tables. In-process: no server runs and nothing listens.

    ``port`` is a number unique in this process, not a network port: it lets
    ``TrajectoryDataset`` find the server from the address ``f"localhost:{port}"``.
    """

    def __init__(self, tables: Sequence[Table] | None = None, port: int | None = None,
                 checkpointer: Any = None) -> None:
        names = [table.name for table in tables or ()]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(
                f"Multiple items in tables have the same name: {', '.join(duplicates)}")
        self._tables = {table.name: table for table in tables or ()}
        self.port = next(_port_numbers)
        _servers[self.port] = self
        self._stopped = False

    def _table(self, name: str) -> Table:
        if self._stopped:
            raise RuntimeError("This in-process Reverb server was stopped.")
        if name not in self._tables:
            known = ", ".join(map(repr, self._tables))
            raise KeyError(f"No table named {name!r}. Known tables: {known}.")
        return self._tables[name]

    def stop(self) -> None:
        """Forget the tables; their memory is freed once nothing else holds them."""
        self._tables, self._stopped = {}, True

    @staticmethod
    def _at(server_address: str) -> "Server":
        """The in-process server that ``"localhost:<port>"`` names."""
        host, _, port = str(server_address).rpartition(":")
        server = _servers.get(int(port)) if port.isdigit() and host in ("localhost", "127.0.0.1") else None
        if server is None:
            raise ValueError(
                f"No in-process Reverb server at {server_address!r}. The stand-in finds a "
                "server by f\"localhost:{server.port}\" of a Server created in this process.")
        return server


class TrajectoryDataset:
    """Reverb's own sampling dataset: single items, to be batched with ``.batch``.

    Only ``from_table_signature`` is provided: the items' shapes come from the table's
    signature (or from what a ``ReverbReplayBuffer`` opened it with).
    """

    @staticmethod
    def from_table_signature(server_address: str, table: str, max_in_flight_samples_per_worker: int,
                             num_workers_per_iterator: int = -1, max_samples_per_stream: int = -1,
                             rate_limiter_timeout_ms: int = -1,
                             get_signature_timeout_secs: int | None = None,
                             max_samples: int = -1) -> Any:
        """Endless ``ReplaySample(info, data)`` items, each shaped ``[sequence_length, ...]``.

        Items are drawn ``max_in_flight_samples_per_worker`` at a time (one NumPy call
        per chunk, not per item), then handed out one by one. The other options are
        Reverb's tuning knobs and have no effect here, except ``max_samples``.
        """
        import tensorflow as tf

        chosen = Server._at(server_address)._table(table)
        if chosen._items is None:
            length = None
            if chosen.signature is not None:
                length = tf.nest.flatten(chosen.signature)[0].shape[0]
            if length is None:
                raise ValueError(
                    f"Table {table!r} has no signature with a fixed sequence length, and nothing "
                    "opened it yet: give reverb.Table a signature such as "
                    "tensor_spec.add_outer_dim(spec, 2), or create the ReverbReplayBuffer first.")
            chosen._open(int(length), None)
        items = chosen._items
        chunk = max(1, int(max_in_flight_samples_per_worker))
        min_size = chosen.rate_limiter.min_size_to_sample

        def sample(_: Any) -> ReplaySample:
            data, info = items.sample(chunk, min_size, table, per_step=False)
            return ReplaySample(info=info, data=data)

        dataset = tf.data.Dataset.counter().map(sample).unbatch()
        return dataset.take(max_samples) if max_samples > 0 else dataset


class _Client:
    """What ``ReverbReplayBuffer.py_client`` hands the observer: a way to the server's tables."""

    def __init__(self, server: Server) -> None:
        self._server = server

    def _table(self, name: str) -> Table:
        return self._server._table(name)


# ---------------------------------------------------------------------------------------
# The stand-ins for tf_agents' reverb_replay_buffer and reverb_utils.


class ReverbReplayBuffer:
    """Samples a table's items as a ``tf.data.Dataset``, like TF-Agents' ``ReverbReplayBuffer``."""

    def __init__(self, data_spec: Any, table_name: str, sequence_length: int,
                 server_address: str | None = None, local_server: Server | None = None,
                 dataset_buffer_size: int | None = None, max_cycle_length: int = 32,
                 num_workers_per_iterator: int = -1, max_samples_per_stream: int = -1,
                 rate_limiter_timeout_ms: int = -1) -> None:
        """Reverb's tuning options after ``local_server`` are accepted and have no effect."""
        if server_address is not None or local_server is None:
            raise NotImplementedError(
                "The in-process stand-in has no network: pass local_server=<the Server> "
                f"instead of server_address. {_ELSEWHERE}")
        if not sequence_length:
            raise NotImplementedError(
                f"The in-process stand-in needs a fixed sequence_length. {_ELSEWHERE}")
        self.data_spec = data_spec
        self._table_name = table_name
        self._sequence_length = sequence_length
        self._local_server = local_server
        self._py_client = _Client(local_server)
        self._table = self._py_client._table(table_name)
        self._table._open(sequence_length, data_spec)
        self.capacity = self._table.max_size

    @property
    def py_client(self) -> _Client:
        return self._py_client

    @property
    def local_server(self) -> Server:
        return self._local_server

    def num_frames(self) -> int:
        """The number of items in the table (as Reverb's ``current_size``; not steps)."""
        return self._table._open(self._sequence_length, self.data_spec).size()

    def as_dataset(self, sample_batch_size: int | None = None, num_steps: int | None = None,
                   num_parallel_calls: int | None = None, sequence_preprocess_fn: Any = None,
                   single_deterministic_pass: bool = False) -> Any:
        """Endless ``(items, SampleInfo)`` batches, each shaped ``[B, sequence_length, ...]``."""
        import tensorflow as tf

        if single_deterministic_pass:
            raise ValueError(
                "Unable to perform a single deterministic pass over a table with a Uniform "
                "sampler (Reverb refuses this too).")
        if num_steps is not None and num_steps != self._sequence_length:
            raise ValueError(
                f"The in-process stand-in hands out whole items: num_steps must be None or the "
                f"sequence_length the items were written with ({self._sequence_length}), "
                f"not {num_steps}.")
        if sample_batch_size is None:
            raise ValueError(
                "The in-process stand-in needs sample_batch_size (for example 64): it samples "
                "batches of items, not single items.")
        if num_parallel_calls and num_parallel_calls > sample_batch_size:
            raise ValueError(
                f"num_parallel_calls cannot be bigger than sample_batch_size "
                f"{num_parallel_calls} > {sample_batch_size}")
        if sequence_preprocess_fn is not None:
            raise NotImplementedError(
                f"The in-process stand-in does not support sequence_preprocess_fn. {_ELSEWHERE}")
        items = self._table._open(self._sequence_length, self.data_spec)
        min_size = self._table.rate_limiter.min_size_to_sample

        def sample(_: Any) -> tuple[Any, SampleInfo]:
            return items.sample(sample_batch_size, min_size, self._table_name)

        return tf.data.Dataset.counter().map(sample, num_parallel_calls=num_parallel_calls)

    def add_batch(self, items: Any) -> None:
        raise NotImplementedError(
            "ReverbReplayBuffer does not support `add_batch`; write through "
            "reverb_utils.ReverbAddTrajectoryObserver.")

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

    def __init__(self, py_client: _Client, table_name: str | Sequence[str], sequence_length: int,
                 stride_length: int = 1, priority: float = 1, pad_end_of_episodes: bool = False,
                 tile_end_of_episodes: bool = False) -> None:
        if pad_end_of_episodes or tile_end_of_episodes:
            raise NotImplementedError(
                f"The in-process stand-in does not pad the ends of episodes. {_ELSEWHERE}")
        names = [table_name] if isinstance(table_name, str) else list(table_name)
        self._tables = [py_client._table(name) for name in names]
        self._py_client = py_client
        self._sequence_length = sequence_length
        self._stride_length = stride_length
        self._priority = priority  # kept for the API; uniform sampling ignores it
        self._cache: collections.deque[list[Any]] = collections.deque(maxlen=sequence_length)
        self._cached_steps = 0
        self._items: list[_Items] | None = None
        self._closed = False

    @property
    def py_client(self) -> _Client:
        return self._py_client

    def __call__(self, trajectory: Any) -> None:
        """Cache one unbatched step; write an item when the count says so."""
        import tensorflow as tf

        if self._closed:
            raise ValueError("This observer was closed; call open() before writing again.")
        if self._items is None:
            step_spec = tf.nest.map_structure(
                lambda x: tf.TensorSpec(np.shape(x), np.asarray(x).dtype), trajectory)
            self._items = [table._open(self._sequence_length, step_spec) for table in self._tables]
        self._cache.append(tf.nest.flatten(trajectory))
        self._cached_steps += 1
        self._write_cached_steps()
        if trajectory.is_boundary():
            self.reset(write_cached_steps=False)

    def _sequence_lengths_reached(self) -> bool:
        return (self._cached_steps >= self._sequence_length
                and (self._cached_steps - self._sequence_length) % self._stride_length == 0)

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
                    "enabling pad_end_of_episodes.")
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


def _module(name: str, doc: str, **members: Any) -> types.ModuleType:
    module = types.ModuleType(f"{__name__}.{name}", doc)
    module.__dict__.update(members)
    return module


_STAND_INS: dict[str, types.ModuleType] = {
    "reverb": _module(
        "reverb", "In-process stand-in for the parts of dm-reverb the lessons use.",
        Table=Table, Server=Server, SampleInfo=SampleInfo, ReplaySample=ReplaySample,
        TrajectoryDataset=TrajectoryDataset,
        selectors=_module("reverb.selectors", "Item selectors (Uniform and Fifo work).",
                          Uniform=Uniform, Fifo=Fifo, Lifo=Lifo, Prioritized=Prioritized,
                          MaxHeap=MaxHeap, MinHeap=MinHeap),
        rate_limiters=_module("reverb.rate_limiters", "Rate limiters (min size honoured).",
                              MinSize=MinSize, SampleToInsertRatio=SampleToInsertRatio),
    ),
    "reverb_replay_buffer": _module(
        "reverb_replay_buffer", "In-process stand-in for tf_agents' reverb_replay_buffer.",
        ReverbReplayBuffer=ReverbReplayBuffer, DEFAULT_TABLE="experience"),
    "reverb_utils": _module(
        "reverb_utils", "In-process stand-in for tf_agents' reverb_utils.",
        ReverbAddTrajectoryObserver=ReverbAddTrajectoryObserver),
}

__all__ = ["BACKEND_VARIABLE", "backend", "reverb_available", *_REAL_MODULES]
