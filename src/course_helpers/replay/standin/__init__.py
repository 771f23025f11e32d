"""An in-process stand-in for the parts of Reverb the lessons use.

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
- checkpoints are NumPy files, written when a client calls ``checkpoint()`` and loaded
  when a server with a ``DefaultCheckpointer`` starts, as Reverb's are;
- the ``SampleInfo`` beside each batch has the real structure, but ``key`` is the item's
  insertion number, ``priority`` is always 1 and ``times_sampled`` 0 (not tracked).

It is two modules, one per side of Reverb's API: :mod:`~course_helpers.replay.standin.tables`
(``reverb``: tables, the server, datasets) and :mod:`~course_helpers.replay.standin.buffers`
(TF-Agents' ``reverb_replay_buffer`` and ``reverb_utils``). TensorFlow is imported only
when a table first holds data.
"""

from __future__ import annotations

import types
from typing import Any

from course_helpers.replay.standin.buffers import ReverbAddTrajectoryObserver, ReverbReplayBuffer
from course_helpers.replay.standin.tables import (
    DefaultCheckpointer,
    Fifo,
    Lifo,
    MaxHeap,
    MinHeap,
    MinSize,
    Prioritized,
    ReplaySample,
    SampleInfo,
    SampleToInsertRatio,
    Server,
    Table,
    TrajectoryDataset,
    Uniform,
)


def _module(name: str, doc: str, **members: Any) -> types.ModuleType:
    module = types.ModuleType(f"course_helpers.replay.{name}", doc)
    module.__dict__.update(members)
    return module


STAND_INS: dict[str, types.ModuleType] = {
    "reverb": _module(
        "reverb",
        "In-process stand-in for the parts of dm-reverb the lessons use.",
        Table=Table,
        Server=Server,
        SampleInfo=SampleInfo,
        ReplaySample=ReplaySample,
        TrajectoryDataset=TrajectoryDataset,
        selectors=_module(
            "reverb.selectors",
            "Item selectors (Uniform and Fifo work).",
            Uniform=Uniform,
            Fifo=Fifo,
            Lifo=Lifo,
            Prioritized=Prioritized,
            MaxHeap=MaxHeap,
            MinHeap=MinHeap,
        ),
        rate_limiters=_module(
            "reverb.rate_limiters",
            "Rate limiters (min size honoured).",
            MinSize=MinSize,
            SampleToInsertRatio=SampleToInsertRatio,
        ),
        checkpointers=_module(
            "reverb.checkpointers",
            "Checkpointers (the newest checkpoint loaded at start, one kept).",
            DefaultCheckpointer=DefaultCheckpointer,
        ),
    ),
    "reverb_replay_buffer": _module(
        "reverb_replay_buffer",
        "In-process stand-in for tf_agents' reverb_replay_buffer.",
        ReverbReplayBuffer=ReverbReplayBuffer,
        DEFAULT_TABLE="experience",
    ),
    "reverb_utils": _module(
        "reverb_utils",
        "In-process stand-in for tf_agents' reverb_utils.",
        ReverbAddTrajectoryObserver=ReverbAddTrajectoryObserver,
    ),
}
