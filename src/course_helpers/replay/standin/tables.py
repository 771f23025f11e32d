"""The stand-in for ``reverb``: selectors, rate limiters, tables, the server and datasets."""

from __future__ import annotations

import datetime
import itertools
import os
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from course_helpers.i18n import gettext

#: Where an unsupported feature can be used instead.
ELSEWHERE = (
    "The real Reverb supports it: run the lesson on Python 3.11 (Binder or a local install)."
)


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

    def __init__(
        self,
        samples_per_insert: float,
        min_size_to_sample: int,
        error_buffer: float | tuple[float, float],
    ) -> None:
        super().__init__(min_size_to_sample)
        self.samples_per_insert = samples_per_insert
        self.error_buffer = error_buffer


class Items:
    """A table's memory: one NumPy array per field, one row per item, used as a ring.

    New items overwrite the oldest (Reverb's Fifo remover) and samples are drawn uniformly
    from the rows in use (its Uniform sampler). tf.data samples in background threads
    while the observer writes, so a lock keeps every item whole.
    """

    def __init__(self, step_spec: Any, sequence_length: int, max_size: int) -> None:
        import tensorflow as tf

        self.sequence_length, self.max_size = sequence_length, max_size
        self.spec = tf.nest.map_structure(
            lambda s: tf.TensorSpec([sequence_length, *s.shape], s.dtype), step_spec
        )
        self.fields = [
            np.zeros([max_size, *s.shape], s.dtype.as_numpy_dtype)
            for s in tf.nest.flatten(self.spec)
        ]
        self.written = 0  # items ever written; the newest sits in row (written - 1) % max_size
        self.lock = threading.Lock()

    def size(self) -> int:
        return min(self.written, self.max_size)

    def snapshot(self) -> tuple[int, int, list[np.ndarray]]:
        """What a checkpoint keeps: the item length, the items ever written, the rows."""
        with self.lock:
            return self.sequence_length, self.written, [field.copy() for field in self.fields]

    def restore(
        self, sequence_length: int, written: int, fields: list[np.ndarray], table_name: str
    ) -> None:
        """Put a checkpoint's rows back; they must be shaped as this table's items are."""
        shapes = [field.shape for field in self.fields]
        if sequence_length != self.sequence_length or [f.shape for f in fields] != shapes:
            raise ValueError(
                gettext(
                    "The checkpoint of table {table} holds items of another shape than the "
                    "table's, so it cannot be loaded. Start the run afresh in a new folder."
                ).format(table=repr(table_name))
            )
        with self.lock:
            for field, stored in zip(self.fields, fields):
                field[...] = stored
            self.written = written

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
                    gettext(
                        "The table {table} holds {size} items, but its rate limiter needs at "
                        "least {min_size} before sampling. Collect more steps first (Reverb "
                        "would wait forever here: nothing else in this process can add them)."
                    ).format(table=repr(table_name), size=size, min_size=min_size)
                )
            keys = self.written - size + (uniform * size).astype(np.int64)
            return [field[keys % self.max_size] for field in self.fields] + [keys, np.int64(size)]

    def sample(
        self, batch_size: int, min_size: int, table_name: str, per_step: bool = True
    ) -> tuple[Any, SampleInfo]:
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
            lambda u: self._gather(u, min_size, table_name),
            [uniform],
            [s.dtype for s in flat_spec] + [tf.int64, tf.int64],
            stateful=True,
        )
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

    def __init__(
        self,
        name: str,
        sampler: _Selector,
        remover: _Selector,
        max_size: int,
        rate_limiter: MinSize,
        max_times_sampled: int = 0,
        extensions: Sequence[Any] = (),
        signature: Any = None,
    ) -> None:
        if not isinstance(sampler, Uniform) or not isinstance(remover, Fifo):
            raise NotImplementedError(
                f"The in-process stand-in for Reverb supports sampler=Uniform() with "
                f"remover=Fifo() only, not sampler={sampler!r}, remover={remover!r}. {ELSEWHERE}"
            )
        if max_times_sampled or extensions:
            raise NotImplementedError(
                f"The in-process stand-in for Reverb supports neither max_times_sampled nor "
                f"table extensions. {ELSEWHERE}"
            )
        if not isinstance(rate_limiter, MinSize):
            raise NotImplementedError(
                f"The in-process stand-in supports the MinSize and SampleToInsertRatio rate "
                f"limiters, not {rate_limiter!r}. {ELSEWHERE}"
            )
        self.name = name
        self.max_size = int(max_size)
        self.sampler, self.remover = sampler, remover
        self.rate_limiter = rate_limiter
        self.signature = signature
        self._items: Items | None = None
        # A checkpoint's rows, put into the table's memory when it is first opened.
        self._restored: tuple[int, int, list[np.ndarray]] | None = None

    def _open(self, sequence_length: int, step_spec: Any) -> Items:
        """The table's memory, made on first use for items of ``sequence_length`` steps.

        Steps are shaped by the table's signature (less its outer dimension) when it has
        one, otherwise by ``step_spec``.
        """
        if self._items is None:
            if self.signature is not None:
                import tensorflow as tf

                step_spec = tf.nest.map_structure(
                    lambda s: tf.TensorSpec(s.shape[1:], s.dtype), self.signature
                )
            self._items = Items(step_spec, sequence_length, self.max_size)
            if self._restored is not None:
                self._items.restore(*self._restored, table_name=self.name)
                self._restored = None
        elif self._items.sequence_length != sequence_length:
            raise ValueError(
                gettext(
                    "Table {table} holds items of {stored} steps; the in-process stand-in "
                    "cannot also store items of {asked} steps."
                ).format(
                    table=repr(self.name), stored=self._items.sequence_length, asked=sequence_length
                )
            )
        return self._items

    def __repr__(self) -> str:
        return f"Table(name={self.name!r}, max_size={self.max_size}) (in-process stand-in)"


class DefaultCheckpointer:
    """Where a server saves its tables when a client asks (``reverb.checkpointers``).

    As Reverb's, a server given one loads the newest checkpoint in ``path`` when it
    starts, and only the newest checkpoint is kept. The stand-in writes one NumPy
    ``.npz`` file per checkpoint, completely or not at all.
    """

    def __init__(self, path: str | os.PathLike[str], group: str = "") -> None:
        self.path = Path(path)

    def latest(self) -> Path | None:
        found = sorted(self.path.glob("*.npz")) if self.path.is_dir() else []
        return found[-1] if found else None

    def save(self, tables: Sequence[Table]) -> str:
        self.path.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, np.ndarray] = {}
        for table in tables:
            # A table restored but not yet opened still holds its checkpoint's rows.
            state = table._items.snapshot() if table._items is not None else table._restored
            if state is not None:
                length, written, fields = state
                arrays[f"{table.name}/meta"] = np.array([length, written], np.int64)
                arrays.update({f"{table.name}/{i}": field for i, field in enumerate(fields)})
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H-%M-%S.%f")
        target = self.path / f"{stamp}.npz"
        partial = self.path / f"{stamp}.npz.partial"
        with open(partial, "wb") as file:
            np.savez(file, **arrays)
        os.replace(partial, target)
        for older in self.path.glob("*.npz"):
            if older != target:
                older.unlink()
        return str(target)

    def load(self, tables: Sequence[Table]) -> None:
        latest = self.latest()
        if latest is None:
            return
        with np.load(latest) as stored:
            for table in tables:
                if f"{table.name}/meta" in stored.files:
                    length, written = (int(v) for v in stored[f"{table.name}/meta"])
                    count = sum(name.startswith(f"{table.name}/") for name in stored.files) - 1
                    table._restored = (
                        length,
                        written,
                        [stored[f"{table.name}/{i}"] for i in range(count)],
                    )


# In-process servers by the made-up port that names them, so that a dataset given
# f"localhost:{server.port}" finds its server as it would over the network.
_servers: weakref.WeakValueDictionary[int, Server] = weakref.WeakValueDictionary()
_port_numbers = itertools.count(1)


class Server:
    """Holds the tables. In-process: no server runs and nothing listens.

    ``port`` is a number unique in this process, not a network port: it lets
    ``TrajectoryDataset`` find the server from the address ``f"localhost:{port}"``.
    """

    def __init__(
        self,
        tables: Sequence[Table] | None = None,
        port: int | None = None,
        checkpointer: Any = None,
    ) -> None:
        names = [table.name for table in tables or ()]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(
                f"Multiple items in tables have the same name: {', '.join(duplicates)}"
            )
        self._tables = {table.name: table for table in tables or ()}
        self._checkpointer = checkpointer
        if checkpointer is not None:
            checkpointer.load(list(self._tables.values()))
        self.port = next(_port_numbers)
        _servers[self.port] = self
        self._stopped = False

    def _table(self, name: str) -> Table:
        if self._stopped:
            raise RuntimeError(gettext("This in-process Reverb server was stopped."))
        if name not in self._tables:
            known = ", ".join(map(repr, self._tables))
            raise KeyError(f"No table named {name!r}. Known tables: {known}.")
        return self._tables[name]

    def stop(self) -> None:
        """Forget the tables; their memory is freed once nothing else holds them."""
        self._tables, self._stopped = {}, True

    @staticmethod
    def _at(server_address: str) -> Server:
        """The in-process server that ``"localhost:<port>"`` names."""
        host, _, port = str(server_address).rpartition(":")
        server = (
            _servers.get(int(port))
            if port.isdigit() and host in ("localhost", "127.0.0.1")
            else None
        )
        if server is None:
            raise ValueError(
                gettext(
                    "No in-process Reverb server at {address}. The stand-in finds a server by "
                    "the address {example} of a Server created in this process."
                ).format(address=repr(server_address), example='f"localhost:{server.port}"')
            )
        return server


class TrajectoryDataset:
    """Reverb's own sampling dataset: single items, to be batched with ``.batch``.

    Only ``from_table_signature`` is provided: the items' shapes come from the table's
    signature (or from what a ``ReverbReplayBuffer`` opened it with).
    """

    @staticmethod
    def from_table_signature(
        server_address: str,
        table: str,
        max_in_flight_samples_per_worker: int,
        num_workers_per_iterator: int = -1,
        max_samples_per_stream: int = -1,
        rate_limiter_timeout_ms: int = -1,
        get_signature_timeout_secs: int | None = None,
        max_samples: int = -1,
    ) -> Any:
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
                    gettext(
                        "Table {table} has no signature with a fixed sequence length, and "
                        "nothing opened it yet: give reverb.Table a signature such as {example}, "
                        "or create the ReverbReplayBuffer first."
                    ).format(table=repr(table), example="tensor_spec.add_outer_dim(spec, 2)")
                )
            chosen._open(int(length), None)
        items = chosen._items
        assert items is not None  # _open() made them
        chunk = max(1, int(max_in_flight_samples_per_worker))
        min_size = chosen.rate_limiter.min_size_to_sample

        def sample(_: Any) -> ReplaySample:
            data, info = items.sample(chunk, min_size, table, per_step=False)
            return ReplaySample(info=info, data=data)

        dataset = tf.data.Dataset.counter().map(sample).unbatch()
        return dataset.take(max_samples) if max_samples > 0 else dataset


class Client:
    """What ``ReverbReplayBuffer.py_client`` hands the observer: a way to the server's tables."""

    def __init__(self, server: Server) -> None:
        self._server = server

    def _table(self, name: str) -> Table:
        return self._server._table(name)

    def checkpoint(self) -> str:
        """Save the server's tables with its checkpointer; return the checkpoint's path."""
        server = self._server
        if server._checkpointer is None:
            raise RuntimeError(
                gettext(
                    "This Reverb server has no checkpointer, so it cannot save its tables. "
                    "Create it with checkpointer=reverb.checkpointers.DefaultCheckpointer(path)."
                )
            )
        return str(server._checkpointer.save(list(server._tables.values())))
