"""The vector channel's in-memory index: one matrix per brain and model.

Every vector of one embedding model is held as a row of a float32 matrix,
loaded once and then kept current incrementally: triggers on
``trace_embeddings`` append one row per change to ``embedding_events``, and
each search first reads the events after the last one it saw (an indexed
range scan that finds nothing most of the time) and re-reads only the traces
they name.  Vectors written by other processes -- the embed workers -- thus
appear in the next search without a reload.

Soft-deleted traces keep their rows (as-of searches may need them); the hard
filters of a search, applied by the caller, decide what may be returned.
Each row also knows its stream neighbours (the previous and next turn of its
conversation), for neighbour smoothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, bindparam, text

from memory_core.db import Brain

log = logging.getLogger(__name__)

_DTYPE = np.dtype("<f4")
_ID_CHUNK = 500
_INITIAL_CAPACITY = 1_024

_LAST_EVENT = text("SELECT coalesce(max(id), 0) FROM embedding_events")
_EVENTS = text(
    "SELECT id, trace_id FROM embedding_events WHERE id > :after AND model = :model ORDER BY id"
)
_LOAD_ALL = text(
    "SELECT t.id, t.seq, t.prev_seq, e.vector FROM trace_embeddings e "
    "JOIN memory_traces t ON t.id = e.trace_id WHERE e.model = :model ORDER BY t.seq"
)
_LOAD_SOME = text(
    "SELECT t.id, t.seq, t.prev_seq, e.vector FROM memory_traces t "
    "JOIN trace_embeddings e ON e.trace_id = t.id AND e.model = :model WHERE t.id IN :ids"
).bindparams(bindparam("ids", expanding=True))


@dataclass(frozen=True)
class Snapshot:
    """A consistent view of the index for one search (arrays are not copied)."""

    seqs: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]
    valid: npt.NDArray[np.bool_]
    prev_row: npt.NDArray[np.int64]
    next_row: npt.NDArray[np.int64]
    row_of_seq: Mapping[int, int]

    def __len__(self) -> int:
        return len(self.seqs)

    def row(self, seq: int) -> int | None:
        """The row holding a current vector for ``seq``, if any."""
        row = self.row_of_seq.get(seq)
        if row is None or row >= len(self.seqs) or not self.valid[row]:
            return None
        return row


class VectorIndex:
    """Every vector of ``model`` in one brain, as rows of a growing matrix."""

    def __init__(self, model: str) -> None:
        self.model = model
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._loaded = False
        self._last_event = 0
        self._n = 0
        self._dim = 0
        self._seqs = np.empty(0, dtype=np.int64)
        self._matrix = np.empty((0, 0), dtype=np.float32)
        self._valid = np.empty(0, dtype=np.bool_)
        self._prev = np.empty(0, dtype=np.int64)
        self._next = np.empty(0, dtype=np.int64)
        self._row_of_id: dict[str, int] = {}
        self._row_of_seq: dict[int, int] = {}
        self._waiting_next: dict[int, int] = {}  # prev seq -> row whose prev has no row yet

    def snapshot(self, conn: Connection) -> Snapshot:
        """Catch up with the brain on ``conn``'s snapshot, then a view of the rows."""
        with self._lock:
            if not self._loaded:
                self._load(conn)
            else:
                self._catch_up(conn)
            n = self._n
            return Snapshot(
                self._seqs[:n],
                self._matrix[:n],
                self._valid[:n],
                self._prev[:n],
                self._next[:n],
                self._row_of_seq,
            )

    # -- loading and catching up -------------------------------------------

    def _load(self, conn: Connection) -> None:
        self._reset()
        self._last_event = int(conn.execute(_LAST_EVENT).scalar_one())
        for trace_id, seq, prev_seq, blob in conn.execute(_LOAD_ALL, {"model": self.model}):
            self._put(str(trace_id), int(seq), prev_seq, blob)
        self._loaded = True
        log.info("vector index %s: loaded %d vectors", self.model, self._n)

    def _catch_up(self, conn: Connection) -> None:
        last = int(conn.execute(_LAST_EVENT).scalar_one())
        if last == self._last_event:
            return
        if last < self._last_event:  # the brain file was replaced by an older copy
            self._load(conn)
            return
        events = conn.execute(_EVENTS, {"after": self._last_event, "model": self.model}).all()
        self._last_event = last
        changed = list(dict.fromkeys(str(trace_id) for _, trace_id in events))
        present: set[str] = set()
        for lo in range(0, len(changed), _ID_CHUNK):
            chunk = changed[lo : lo + _ID_CHUNK]
            for trace_id, seq, prev_seq, blob in conn.execute(
                _LOAD_SOME, {"model": self.model, "ids": chunk}
            ):
                present.add(str(trace_id))
                self._put(str(trace_id), int(seq), prev_seq, blob)
        for trace_id in changed:
            if trace_id not in present and (row := self._row_of_id.get(trace_id)) is not None:
                self._valid[row] = False

    def _put(self, trace_id: str, seq: int, prev_seq: int | None, blob: bytes) -> None:
        vector = np.frombuffer(blob, dtype=_DTYPE)
        if self._dim == 0:
            self._dim = len(vector)
            self._matrix = np.empty((0, self._dim), dtype=np.float32)
        if len(vector) != self._dim:
            log.warning(
                "vector index %s: skipped a vector of dimension %d", self.model, len(vector)
            )
            return
        row = self._row_of_id.get(trace_id)
        if row is None:
            row = self._append(trace_id, seq, prev_seq)
        self._matrix[row] = vector
        self._valid[row] = True

    def _append(self, trace_id: str, seq: int, prev_seq: int | None) -> int:
        if self._n == len(self._seqs):
            self._grow(max(_INITIAL_CAPACITY, 2 * len(self._seqs)))
        row = self._n
        self._n += 1
        self._seqs[row] = seq
        self._prev[row] = self._next[row] = -1
        self._row_of_id[trace_id] = row
        self._row_of_seq[seq] = row
        if prev_seq is not None:
            prev_row = self._row_of_seq.get(int(prev_seq))
            if prev_row is None:
                self._waiting_next[int(prev_seq)] = row
            else:
                self._prev[row] = prev_row
                self._next[prev_row] = row
        later = self._waiting_next.pop(seq, None)
        if later is not None:
            self._prev[later] = row
            self._next[row] = later
        return row

    def _grow(self, capacity: int) -> None:
        """New, larger arrays; snapshots holding the old ones stay valid."""

        def grown(old: npt.NDArray[Any], shape: tuple[int, ...], dtype: type) -> npt.NDArray[Any]:
            new: npt.NDArray[Any] = np.zeros(shape, dtype=dtype)
            new[: self._n] = old[: self._n]
            return new

        self._seqs = grown(self._seqs, (capacity,), np.int64)
        self._matrix = grown(self._matrix, (capacity, self._dim), np.float32)
        self._valid = grown(self._valid, (capacity,), np.bool_)
        self._prev = grown(self._prev, (capacity,), np.int64)
        self._next = grown(self._next, (capacity,), np.int64)


class _Registry:
    """One index per (brain, model) in this process, keyed by brain id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._indexes: dict[tuple[str, str], VectorIndex] = {}

    def get(self, brain: Brain, model: str) -> VectorIndex:
        key = (brain.brain_id, model)
        with self._lock:
            index = self._indexes.get(key)
            if index is None:
                index = self._indexes[key] = VectorIndex(model)
            return index

    def clear(self) -> None:
        with self._lock:
            self._indexes.clear()


registry = _Registry()


def index_for(brain: Brain, model: str) -> VectorIndex:
    """This process's index of ``model`` vectors in ``brain``."""
    return registry.get(brain, model)
