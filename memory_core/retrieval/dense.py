"""The vector channel: the query's embedding against the brain's vectors.

Cosine is one matrix-vector product over the in-memory index
(:mod:`memory_core.retrieval.vector_index`), whose rows are smoothed with their stream
neighbours (``search_neighbour_smoothing``): the answer to a question is
often spread over two consecutive turns, and a turn that only says "yes,
last Tuesday" is found through the turn it answers.

A search starts the channel (:func:`start`: the index caught up, the query
embedding under way) before BM25 ranks, and finishes it after
(:meth:`VectorSearch.finish`).  Anything that keeps the channel from
answering is a :class:`~memory_core.errors.ChannelUnavailable`, and the
search goes on without it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection

from memory_core.brain.db import Brain, raw_cursor
from memory_core.errors import ChannelUnavailable
from memory_core.retrieval.approximate import (
    CANDIDATES_PER_RESULT,
    ApproximateScores,
    ApproximateSnapshot,
    Passing,
)
from memory_core.retrieval.query_embedding import QueryEmbedder, Vector
from memory_core.retrieval.vector_index import PRODUCT_THREADS, Snapshot, VectorIndexes

log = logging.getLogger(__name__)


class VectorScores(Protocol):
    """The vector channel's answer to one search, exact (:class:`DenseScores`) or from
    the approximate graph (:class:`~memory_core.retrieval.approximate.ApproximateScores`)."""

    @property
    def snapshot(self) -> Snapshot | ApproximateSnapshot: ...

    @property
    def query(self) -> npt.NDArray[np.float32]: ...

    def of(self, seq: int) -> float | None: ...

    def prepare(self, seqs: Sequence[int]) -> None:
        """Score ``seqs`` together ahead of :meth:`of` asking for each (where that saves)."""

    def vector(self, seq: int) -> npt.NDArray[np.float32] | None: ...

    def normalised(self, value: float) -> float: ...

    def restricted(self, rows: npt.NDArray[np.int64]) -> VectorScores: ...

    def best(self, k: int, floor: float = -1.0) -> list[tuple[int, float]]: ...

    def best_passing(
        self, k: int, floor: float, passing: Passing | None
    ) -> tuple[list[tuple[int, float]], bool]: ...


@dataclass(frozen=True)
class VectorSearch:
    """The vector channel of one search: started before BM25 ranks, finished after."""

    embedder: QueryEmbedder
    snapshot: Snapshot | ApproximateSnapshot
    pending: Future[Vector] | Vector
    indexes: VectorIndexes

    def finish(
        self, conn: Connection, where: str | None, params: dict[str, Any], selective: bool
    ) -> VectorScores:
        """Similarities of the traces passing the filters (``where`` over ``t``).

        A ``selective`` filter (a scope id) is applied first, so only its rows
        are multiplied; any other is checked on the best rows afterwards
        (:meth:`DenseScores.best` and :func:`allowed_rows`), as reading every
        trace it allows would cost more than the product.
        """
        vector = self.embedder.wait(self.pending)
        rows = allowed_rows(conn, self.snapshot, where, params) if where and selective else None
        if isinstance(self.snapshot, ApproximateSnapshot):
            return ApproximateScores(conn, self.snapshot, vector, rows)
        return score_all(self.snapshot, vector, rows, self.indexes.pool)


def start(
    conn: Connection, brain: Brain, embedder: QueryEmbedder, query: str
) -> VectorSearch | None:
    """Catch the index up and start embedding ``query``; None when no trace has a vector.

    Not inside a write transaction: the index would catch up with changes that
    may yet be rolled back, and never see what replaces them.
    """
    if brain.in_transaction():
        raise ChannelUnavailable("no vector search inside a write transaction")
    indexes = brain.state(VectorIndexes)
    snapshot = indexes.channel(conn, brain, embedder.name).snapshot(conn)
    if snapshot.empty:
        return None
    if snapshot.dim != embedder.dim:
        raise ChannelUnavailable(
            f"the brain's {embedder.name} vectors have {snapshot.dim} dimensions "
            f"and the embedder gives {embedder.dim}: run memctl embed-backfill"
        )
    pending = embedder.start(query)
    if isinstance(snapshot, ApproximateSnapshot):
        count = CANDIDATES_PER_RESULT * brain.settings.search_candidates
        # Not embedder.wait: a late embedding is counted once, by finish.
        snapshot.look_ahead(indexes.pool(), lambda: _waited(pending, embedder.timeout_s), count)
    return VectorSearch(embedder, snapshot, pending, indexes)


def _waited(pending: Future[Vector] | Vector, timeout_s: float) -> Vector:
    return pending.result(timeout=timeout_s) if isinstance(pending, Future) else pending


def allowed_rows(
    conn: Connection,
    snapshot: Snapshot | ApproximateSnapshot,
    where: str | None,
    params: dict[str, Any],
) -> npt.NDArray[np.int64]:
    """The snapshot's rows whose traces pass ``where`` (every valid row for None)."""
    if where is None:
        if isinstance(snapshot, ApproximateSnapshot):
            return np.flatnonzero(snapshot.links.has)
        return np.flatnonzero(snapshot.valid)
    with raw_cursor(conn) as cursor:
        cursor.execute(f"SELECT t.seq FROM memory_traces t WHERE {where}", params)
        seqs = np.fromiter((r[0] for r in cursor.fetchall()), dtype=np.int64)
    rows = snapshot.rows(seqs)
    return np.sort(rows[rows >= 0])


@dataclass(frozen=True)
class DenseScores:
    """Similarity of the query to the allowed rows of a snapshot, and their spread."""

    snapshot: Snapshot
    rows: npt.NDArray[np.int64]  # the allowed rows holding a current vector
    scores: npt.NDArray[np.float32]  # one per entry of ``rows``
    low: float
    high: float
    query: npt.NDArray[np.float32]

    def of(self, seq: int) -> float | None:
        """The similarity of ``seq``'s trace, if it has a current vector (allowed or not)."""
        row = self.snapshot.row(seq)
        if row is None:
            return None
        at = int(np.searchsorted(self.rows, row))  # rows are sorted
        if at < len(self.rows) and self.rows[at] == row:
            return float(self.scores[at])  # scored already
        return float(self.snapshot.matrix[row] @ self.query)

    def prepare(self, seqs: Sequence[int]) -> None:
        """Nothing to do: every row is in memory."""

    def vector(self, seq: int) -> npt.NDArray[np.float32] | None:
        """``seq``'s (smoothed) vector, if it has a current one."""
        row = self.snapshot.row(seq)
        return None if row is None else self.snapshot.matrix[row]

    def normalised(self, value: float) -> float:
        """``value`` min-max scaled over the allowed rows, in [0, 1]."""
        spread = self.high - self.low
        if spread <= 0:
            return 1.0
        return min(max((value - self.low) / spread, 0.0), 1.0)

    def restricted(self, rows: npt.NDArray[np.int64]) -> DenseScores:
        """The same scores over ``rows`` only (a subset of this one's, sorted)."""
        keep = np.isin(self.rows, rows, assume_unique=True)
        scores = self.scores[keep]
        low, high = (float(scores.min()), float(scores.max())) if len(scores) else (0.0, 0.0)
        return DenseScores(self.snapshot, self.rows[keep], scores, low, high, self.query)

    def best(self, k: int, floor: float = -1.0) -> list[tuple[int, float]]:
        """The ``k`` best allowed rows scoring at least ``floor``, as (seq, score), best first."""
        pick = np.flatnonzero(self.scores >= floor)
        if len(pick) > k:
            pick = pick[np.argpartition(-self.scores[pick], k - 1)[:k]]
        pick = pick[np.argsort(-self.scores[pick], kind="stable")]
        seqs = self.snapshot.seqs[self.rows[pick]]
        return [(int(q), float(v)) for q, v in zip(seqs, self.scores[pick], strict=True)]

    def best_passing(
        self, k: int, floor: float, passing: Passing | None
    ) -> tuple[list[tuple[int, float]], bool]:
        """Of the ``k`` best, those ``passing`` keeps (all for None), and whether no
        other row is left to look at."""
        ranked = self.best(k, floor)
        if passing is not None:
            kept = passing([seq for seq, _ in ranked])
            return [(q, v) for q, v in ranked if q in kept], len(ranked) < k
        return ranked, len(ranked) < k


# Rows up to which one product is cheaper than splitting it across the pool.
_SPLIT_ROWS = 20_000


def score_all(
    snapshot: Snapshot,
    query_vector: npt.NDArray[np.float32],
    allowed_rows: npt.NDArray[np.int64] | None,
    pool: Callable[[], ThreadPoolExecutor] | None = None,
) -> DenseScores:
    """Similarity of the query with every allowed row (rows are neighbour-smoothed).

    ``allowed_rows`` None means every row; rows without a current vector are
    dropped either way.  A filter that allows few rows multiplies only those.
    A large product is split across the threads ``pool`` gives (the brain's), each on one BLAS
    thread: the product is bound by memory bandwidth, and BLAS's own threads
    keep spinning after it, beside the embedder's (measured: the query
    embedding took 3 ms alone and 12-15 ms after a two-thread BLAS product).
    """
    valid = snapshot.valid
    if allowed_rows is None:
        rows = np.flatnonzero(valid)
        scores = _product(snapshot.matrix, query_vector, pool)[rows]
    else:
        rows = allowed_rows[valid[allowed_rows]]
        rows.sort()
        if len(rows) * 4 < len(snapshot):
            scores = _product(snapshot.matrix[rows], query_vector, pool)
        else:
            scores = _product(snapshot.matrix, query_vector, pool)[rows]
    if len(scores):
        low, high = float(scores.min()), float(scores.max())
    else:
        low = high = 0.0
    return DenseScores(snapshot, rows, scores, low, high, query_vector)


def _product(
    matrix: npt.NDArray[np.float32],
    vector: npt.NDArray[np.float32],
    pool_of: Callable[[], ThreadPoolExecutor] | None,
) -> Any:
    with _one_blas_thread:
        if len(matrix) < _SPLIT_ROWS or pool_of is None:
            return matrix @ vector
        pool = pool_of()
        parts = np.array_split(np.arange(len(matrix)), PRODUCT_THREADS)
        bounds = [(int(p[0]), int(p[-1]) + 1) for p in parts if len(p)]
        futures = [pool.submit(np.matmul, matrix[a:b], vector) for a, b in bounds]
        return np.concatenate([f.result() for f in futures])


class _OneBlasThread:
    """BLAS limited to one thread while any search multiplies, restored after the last.

    threadpoolctl's limit is process-wide, so overlapping searches share one
    limit, counted, rather than each saving and restoring the others' setting.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._controller: Any = None
        self._limit: Any = None

    def __enter__(self) -> None:
        with self._lock:
            if self._users == 0:
                if self._controller is None:
                    from threadpoolctl import ThreadpoolController

                    self._controller = ThreadpoolController()
                self._limit = self._controller.limit(limits=1, user_api="blas")
            self._users += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._users -= 1
            if self._users == 0 and self._limit is not None:
                self._limit.restore_original_limits()
                self._limit = None


_one_blas_thread = _OneBlasThread()
