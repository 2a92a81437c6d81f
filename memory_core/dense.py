"""The vector channel: the query's embedding against the brain's vectors.

Cosine is one matrix-vector product over the in-memory index
(:mod:`memory_core.vector_index`), whose rows are smoothed with their stream
neighbours (``search_neighbour_smoothing``): the answer to a question is
often spread over two consecutive turns, and a turn that only says "yes,
last Tuesday" is found through the turn it answers.

Query embeddings are cached (agents repeat queries), and an embedder that
fails is not asked again for ``search_embed_retry_s``: a search meanwhile
answers from the other channels at once instead of waiting for a timeout.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_core.embedders.base import Embedder
from memory_core.errors import EmbedderError
from memory_core.vector_index import Snapshot

log = logging.getLogger(__name__)

_CACHE_SIZE = 512


class QueryEmbedder:
    """An embedder for queries: cached, and skipped for a while after a failure."""

    def __init__(self, embedder: Embedder, retry_after_s: float) -> None:
        self.embedder = embedder
        self.retry_after_s = retry_after_s
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._failed_at: float | None = None

    @property
    def name(self) -> str:
        return self.embedder.name

    def embed(self, query: str) -> npt.NDArray[np.float32]:
        """The query's unit vector; :class:`EmbedderError` when unavailable."""
        with self._lock:
            cached = self._cache.get(query)
            if cached is not None:
                self._cache.move_to_end(query)
                return cached
            failed_at = self._failed_at
        if failed_at is not None and time.monotonic() - failed_at < self.retry_after_s:
            raise EmbedderError(f"embedder {self.name} failed recently; retrying later")
        try:
            vectors = self.embedder.embed([query])
            vector = np.asarray(vectors, dtype=np.float32).reshape(-1)
            if vector.shape != (self.embedder.dim,) or not np.isfinite(vector).all():
                raise EmbedderError(f"embedder {self.name} returned an unusable query vector")
        except EmbedderError:
            with self._lock:
                self._failed_at = time.monotonic()
            raise
        with self._lock:
            self._failed_at = None
            self._cache[query] = vector
            if len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return vector


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
        return float(self.snapshot.matrix[row] @ self.query)

    def normalised(self, value: float) -> float:
        """``value`` min-max scaled over the allowed rows, in [0, 1]."""
        spread = self.high - self.low
        if spread <= 0:
            return 1.0
        return min(max((value - self.low) / spread, 0.0), 1.0)

    def best(self, k: int, floor: float = -1.0) -> list[tuple[int, float]]:
        """The ``k`` best allowed rows scoring at least ``floor``, as (seq, score), best first."""
        pick = np.flatnonzero(self.scores >= floor)
        if len(pick) > k:
            pick = pick[np.argpartition(-self.scores[pick], k - 1)[:k]]
        pick = pick[np.argsort(-self.scores[pick], kind="stable")]
        seqs = self.snapshot.seqs[self.rows[pick]]
        return [(int(q), float(v)) for q, v in zip(seqs, self.scores[pick], strict=True)]


# Rows up to which one product is cheaper than splitting it across the pool.
_SPLIT_ROWS = 20_000


def score_all(
    snapshot: Snapshot,
    query_vector: npt.NDArray[np.float32],
    allowed_rows: npt.NDArray[np.int64] | None,
) -> DenseScores:
    """Similarity of the query with every allowed row (rows are neighbour-smoothed).

    ``allowed_rows`` None means every row; rows without a current vector are
    dropped either way.  A filter that allows few rows multiplies only those.
    A large product is split across the pool's threads, each on one BLAS
    thread: the product is bound by memory bandwidth, and BLAS's own threads
    keep spinning after it, beside the embedder's (measured: the query
    embedding took 3 ms alone and 12-15 ms after a two-thread BLAS product).
    """
    valid = snapshot.valid
    if allowed_rows is None:
        rows = np.flatnonzero(valid)
        scores = _product(snapshot.matrix, query_vector)[rows]
    else:
        rows = allowed_rows[valid[allowed_rows]]
        rows.sort()
        if len(rows) * 4 < len(snapshot):
            scores = _product(snapshot.matrix[rows], query_vector)
        else:
            scores = _product(snapshot.matrix, query_vector)[rows]
    if len(scores):
        low, high = float(scores.min()), float(scores.max())
    else:
        low = high = 0.0
    return DenseScores(snapshot, rows, scores, low, high, query_vector)


def _product(matrix: npt.NDArray[np.float32], vector: npt.NDArray[np.float32]) -> Any:
    with _blas_one_thread():
        if len(matrix) < _SPLIT_ROWS:
            return matrix @ vector
        parts = np.array_split(np.arange(len(matrix)), _WORKERS)
        bounds = [(int(p[0]), int(p[-1]) + 1) for p in parts if len(p)]
        futures = [pool().submit(np.matmul, matrix[a:b], vector) for a, b in bounds]
        return np.concatenate([f.result() for f in futures])


_WORKERS = 2
_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_controller: Any = None


def pool() -> ThreadPoolExecutor:
    """The threads search hands work to (query embedding, parts of the product)."""
    global _pool  # noqa: PLW0603 -- one pool per process, made on first use
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=2 * _WORKERS, thread_name_prefix="search")
    return _pool


def _blas_one_thread() -> Any:
    """A context limiting BLAS to one thread (threadpoolctl, looked up once)."""
    global _controller  # noqa: PLW0603 -- one lookup of the loaded BLAS libraries
    if _controller is None:
        with _pool_lock:
            if _controller is None:
                from threadpoolctl import ThreadpoolController

                _controller = ThreadpoolController()
    return _controller.limit(limits=1, user_api="blas")
