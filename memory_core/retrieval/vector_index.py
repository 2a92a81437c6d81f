"""The vector channel's in-memory index: one matrix per brain and model.

Every vector of one embedding model is held as a row of a float32 matrix,
loaded once and then kept current incrementally: triggers on
``trace_embeddings`` append one row per change to ``embedding_events``, and
each search first reads the newest event id (one indexed lookup) and, when
it moved, re-reads only the traces the new events name.  Vectors written by
other processes -- the embed workers -- thus appear in the next search
without a reload.

The matrix holds each row already smoothed with its stream neighbours (the
previous and next turn of its conversation): since cosine is linear in the
vector, ``(v + s * (v_prev + v_next)) / (1 + 2s)`` against the query is the
smoothed similarity, so a search costs one matrix-vector product.  The raw
vectors are kept at half precision only to recompute the rows a change
touches.

Soft-deleted traces keep their rows (as-of searches may need them); the hard
filters of a search, applied by the caller, decide what may be returned.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, Text, bindparam, text

from memory_core.brain.db import Brain, write_meta
from memory_core.errors import ChannelUnavailable
from memory_core.retrieval.approximate import ApproximateIndex, count_vectors
from memory_core.retrieval.events import (
    EVENTS_FLOOR_KEY,
    changed_traces,
    events_floor,
    last_event,
)

log = logging.getLogger(__name__)

_DTYPE = np.dtype("<f4")
_ID_CHUNK = 500
_INITIAL_CAPACITY = 1_024

# Events kept when the log is pruned: an index further behind reloads.
KEEP_EVENTS = 100_000
_LOAD_ALL = text(
    "SELECT t.id, t.seq, t.prev_seq, e.vector FROM trace_embeddings e "
    "JOIN memory_traces t ON t.id = e.trace_id WHERE e.model = :model ORDER BY t.seq"
)
_LOAD_SOME = text(
    "SELECT t.id, t.seq, t.prev_seq, e.vector FROM memory_traces t "
    "JOIN trace_embeddings e ON e.trace_id = t.id AND e.model = :model WHERE t.id IN :ids"
).bindparams(bindparam("ids", expanding=True, type_=Text))


@dataclass(frozen=True)
class Snapshot:
    """A consistent view of the index for one search (arrays are not copied)."""

    seqs: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]  # smoothed rows
    valid: npt.NDArray[np.bool_]
    row_by_seq: npt.NDArray[np.int64]  # -1 where a seq has no row

    def __len__(self) -> int:
        return len(self.seqs)

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def rows(self, seqs: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """Row of each seq, -1 where the index holds no current vector for it."""
        wanted = np.asarray(seqs, dtype=np.int64)
        out = np.full(len(wanted), -1, dtype=np.int64)
        inside = np.flatnonzero((wanted >= 0) & (wanted < len(self.row_by_seq)))
        found = self.row_by_seq[wanted[inside]]
        ok = (found >= 0) & (found < len(self.seqs))
        ok[ok] = self.valid[found[ok]]
        out[inside[ok]] = found[ok]
        return out

    @property
    def empty(self) -> bool:
        """No row holds a current vector."""
        return not self.valid.any()

    def row(self, seq: int) -> int | None:
        """The row of ``seq`` holding a current vector, or None."""
        found = int(self.rows([seq])[0])
        return None if found < 0 else found


class VectorIndex:
    """Every vector of ``model`` in one brain, smoothed, as rows of a growing matrix."""

    def __init__(self, model: str, smoothing: float) -> None:
        self.model = model
        self.smoothing = smoothing
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._loaded = False
        self._last_event = 0
        self._n = 0
        self._dim = 0
        self._seqs = np.empty(0, dtype=np.int64)
        self._smoothed = np.empty((0, 0), dtype=np.float32)
        self._raw = np.empty((0, 0), dtype=np.float16)
        self._valid = np.empty(0, dtype=np.bool_)
        self._prev = np.empty(0, dtype=np.int64)
        self._next = np.empty(0, dtype=np.int64)
        self._row_by_seq = np.full(_INITIAL_CAPACITY, -1, dtype=np.int64)
        self._row_of_id: dict[str, int] = {}
        self._waiting_next: dict[int, int] = {}  # prev seq -> row whose prev has no row yet

    def __len__(self) -> int:
        return self._n

    @property
    def loaded(self) -> bool:
        return self._loaded

    def snapshot(self, conn: Connection) -> Snapshot:
        """Catch up with the brain on ``conn``'s snapshot, then a view of the rows.

        The first call loads every vector; a search arriving meanwhile gets
        :class:`ChannelUnavailable` at once rather than waiting for it.
        """
        if not self._lock.acquire(blocking=self._loaded):
            raise ChannelUnavailable(f"the {self.model} vectors are still being loaded")
        try:
            last = last_event(conn)
            if not self._loaded or last < self._last_event:  # new, or the file was replaced
                self._load(conn, last)
            elif last > self._last_event:
                floor = events_floor(conn)
                if floor > self._last_event:  # events it has not seen were pruned
                    self._load(conn, last)
                else:
                    self._catch_up(conn, last)
            n = self._n
            return Snapshot(self._seqs[:n], self._smoothed[:n], self._valid[:n], self._row_by_seq)
        except BaseException:
            self._loaded = False  # half caught up: the next search loads afresh
            raise
        finally:
            self._lock.release()

    # -- loading and catching up -------------------------------------------

    def _load(self, conn: Connection, last: int) -> None:
        """Every vector at once, into arrays built whole (no per-row Python work)."""
        self._reset()
        rows = conn.execute(_LOAD_ALL, {"model": self.model}).all()
        if rows:
            self._dim = len(rows[0][3]) // _DTYPE.itemsize
            kept = [r for r in rows if len(r[3]) == self._dim * _DTYPE.itemsize]
            if len(kept) < len(rows):
                log.warning(
                    "vector index %s: skipped %d vectors not of dimension %d",
                    self.model,
                    len(rows) - len(kept),
                    self._dim,
                )
            self._fill([str(r[0]) for r in kept], kept)
        self._smooth(range(self._n))
        self._last_event = last
        self._loaded = True
        log.info("vector index %s: loaded %d vectors", self.model, self._n)

    def _fill(self, ids: list[str], rows: list[Any]) -> None:
        n = len(rows)
        self._grow(max(_INITIAL_CAPACITY, n))
        self._n = n
        matrix = np.frombuffer(b"".join(r[3] for r in rows), dtype=_DTYPE).reshape(n, self._dim)
        self._raw[:n] = matrix
        self._smoothed[:n] = matrix
        self._valid[:n] = True
        seqs = np.fromiter((r[1] for r in rows), dtype=np.int64, count=n)
        prev_seqs = np.fromiter((-1 if r[2] is None else r[2] for r in rows), np.int64, count=n)
        self._seqs[:n] = seqs
        top = int(max(seqs.max(), prev_seqs.max())) + 1
        self._row_by_seq = np.full(max(_INITIAL_CAPACITY, 2 * top), -1, dtype=np.int64)
        self._row_by_seq[seqs] = np.arange(n)
        self._row_of_id = dict(zip(ids, range(n), strict=True))
        linked = prev_seqs >= 0
        prev_rows = np.full(n, -1, dtype=np.int64)
        prev_rows[linked] = self._row_by_seq[prev_seqs[linked]]
        self._prev[:n] = prev_rows
        self._next[:n] = -1
        has = prev_rows >= 0
        self._next[prev_rows[has]] = np.flatnonzero(has)
        for row in np.flatnonzero(linked & ~has):  # their previous turn has no vector yet
            self._waiting_next[int(prev_seqs[row])] = int(row)

    def _catch_up(self, conn: Connection, last: int) -> None:
        changed = changed_traces(conn, self._last_event, last, self.model)
        touched: set[int] = set()
        present: set[str] = set()
        for lo in range(0, len(changed), _ID_CHUNK):
            chunk = changed[lo : lo + _ID_CHUNK]
            for trace_id, seq, prev_seq, blob in conn.execute(
                _LOAD_SOME, {"model": self.model, "ids": chunk}
            ):
                row = self._put(str(trace_id), int(seq), prev_seq, blob)
                if row is not None:
                    present.add(str(trace_id))
                    touched.add(row)
        for trace_id in changed:
            if trace_id not in present and (row := self._row_of_id.get(trace_id)) is not None:
                self._valid[row] = False
                touched.add(row)
        around = {int(r) for row in touched for r in (self._prev[row], self._next[row]) if r >= 0}
        self._smooth(sorted(touched | around))
        self._last_event = last

    def _put(self, trace_id: str, seq: int, prev_seq: int | None, blob: bytes) -> int | None:
        vector = np.frombuffer(blob, dtype=_DTYPE)
        if self._dim == 0:
            self._dim = len(vector)
            self._smoothed = np.empty((0, self._dim), dtype=np.float32)
            self._raw = np.empty((0, self._dim), dtype=np.float16)
        if len(vector) != self._dim:
            log.warning(
                "vector index %s: skipped a vector of dimension %d", self.model, len(vector)
            )
            return None
        row = self._row_of_id.get(trace_id)
        if row is None:
            row = self._append(trace_id, seq, prev_seq)
        self._raw[row] = vector
        self._smoothed[row] = vector
        self._valid[row] = True
        return row

    def _append(self, trace_id: str, seq: int, prev_seq: int | None) -> int:
        if self._n == len(self._seqs):
            self._grow(max(_INITIAL_CAPACITY, 2 * len(self._seqs)))
        if seq >= len(self._row_by_seq):
            bigger = np.full(max(2 * len(self._row_by_seq), seq + 1), -1, dtype=np.int64)
            bigger[: len(self._row_by_seq)] = self._row_by_seq
            self._row_by_seq = bigger
        row = self._n
        self._n += 1
        self._seqs[row] = seq
        self._prev[row] = self._next[row] = -1
        self._row_of_id[trace_id] = row
        self._row_by_seq[seq] = row
        if prev_seq is not None:
            prev_row = int(self._row_by_seq[prev_seq]) if prev_seq < len(self._row_by_seq) else -1
            if prev_row < 0:
                self._waiting_next[int(prev_seq)] = row
            else:
                self._prev[row] = prev_row
                self._next[prev_row] = row
        later = self._waiting_next.pop(seq, None)
        if later is not None:
            self._prev[later] = row
            self._next[row] = later
        return row

    def _smooth(self, rows: Iterable[int]) -> None:
        """Recompute the smoothed rows of ``rows`` from the raw vectors."""
        idx = np.fromiter(rows, dtype=np.int64)
        if self.smoothing <= 0 or not len(idx):
            return
        total = self._raw[idx].astype(np.float32)
        weight = np.ones(len(idx), dtype=np.float32)
        for links in (self._prev[idx], self._next[idx]):
            has = links >= 0
            has[has] = self._valid[links[has]]
            total[has] += self.smoothing * self._raw[links[has]].astype(np.float32)
            weight[has] += self.smoothing
        self._smoothed[idx] = total / weight[:, None]

    def _grow(self, capacity: int) -> None:
        """New, larger arrays; snapshots holding the old ones stay valid."""

        def grown(old: npt.NDArray[Any], shape: tuple[int, ...], dtype: Any) -> npt.NDArray[Any]:
            new: npt.NDArray[Any] = np.zeros(shape, dtype=dtype)
            if self._n:
                new[: self._n] = old[: self._n]
            return new

        self._seqs = grown(self._seqs, (capacity,), np.int64)
        self._smoothed = grown(self._smoothed, (capacity, self._dim), np.float32)
        self._raw = grown(self._raw, (capacity, self._dim), np.float16)
        self._valid = grown(self._valid, (capacity,), np.bool_)
        self._prev = grown(self._prev, (capacity,), np.int64)
        self._next = grown(self._next, (capacity,), np.int64)


def prune_events(conn: Connection, keep: int = KEEP_EVENTS) -> int:
    """Drop all but the newest ``keep`` embedding events; returns how many went.

    Records the highest id dropped, so an index that had not seen them reloads
    instead of missing a change.  ``conn`` must be in a write transaction.
    """
    floor = last_event(conn) - keep
    if floor <= 0:
        return 0
    gone = conn.execute(text("DELETE FROM embedding_events WHERE id <= :f"), {"f": floor})
    if gone.rowcount:
        write_meta(conn, EVENTS_FLOOR_KEY, str(floor))
    return int(gone.rowcount)


class VectorIndexes:
    """One brain's indexes (its :meth:`~memory_core.brain.db.Brain.state`), one per model and
    smoothing, and the threads that multiply them.

    Held by the brain object, never by the module: an exported copy keeps the
    brain's id, and two files must never share vectors.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._indexes: dict[tuple[str, float], VectorIndex] = {}
        self._graphs: dict[tuple[str, float], ApproximateIndex] = {}
        self._pool: ThreadPoolExecutor | None = None

    def channel(self, conn: Connection, brain: Brain, model: str) -> VectorIndex | ApproximateIndex:
        """The index a search of ``model`` vectors uses: the exact one, or past
        ``search_approximate_from`` vectors the graph (and the exact index is let go)."""
        smoothing = brain.settings.search_neighbour_smoothing
        key = (model, smoothing)
        with self._lock:
            graph = self._graphs.get(key)
            exact = self._indexes.get(key)
            if graph is not None and (graph.ready or exact is None or not exact.loaded):
                self._indexes.pop(key, None)  # the graph took over
                return graph
        if graph is not None:  # being built; the exact index serves meanwhile
            graph.prepare()
            return exact if exact is not None else graph
        threshold = brain.settings.search_approximate_from
        if threshold:
            size = len(exact) if exact is not None and exact.loaded else None
            if size is None:
                size = count_vectors(conn, model)
            if size >= threshold:
                with self._lock:
                    graph = self._graphs.get(key)
                    if graph is None:
                        graph = self._graphs[key] = ApproximateIndex(brain, model, smoothing)
                graph.prepare()
                if exact is not None and exact.loaded:
                    return exact
                return graph
        return self.get(model, smoothing)

    def get(self, model: str, smoothing: float) -> VectorIndex:
        """The index, made on first use."""
        with self._lock:
            index = self._indexes.get((model, smoothing))
            if index is None:
                index = self._indexes[(model, smoothing)] = VectorIndex(model, smoothing)
            return index

    def pool(self) -> ThreadPoolExecutor:
        """Threads that split a large product (made on first use)."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(PRODUCT_THREADS, thread_name_prefix="vector")
            return self._pool

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
            self._indexes.clear()
            self._graphs.clear()
        if pool is not None:
            pool.shutdown(wait=False)


# Threads of one brain's vector products.
PRODUCT_THREADS = 2


def index_for(brain: Brain, model: str) -> VectorIndex:
    """``brain``'s exact index of ``model`` vectors, smoothed as its settings say."""
    return brain.state(VectorIndexes).get(model, brain.settings.search_neighbour_smoothing)
