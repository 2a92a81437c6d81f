"""The vector channel: the query's embedding against the brain's vectors.

Cosine is one matrix-vector product over the in-memory index
(:mod:`memory_core.vector_index`).  A turn's similarity is smoothed with its
stream neighbours' (``search_neighbour_smoothing``): the answer to a question
is often spread over two consecutive turns, and a turn that only says "yes,
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
from dataclasses import dataclass

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
    """Smoothed cosine of every row of a snapshot, and its spread over the allowed rows."""

    snapshot: Snapshot
    scores: npt.NDArray[np.float32]
    allowed: npt.NDArray[np.bool_]  # valid rows passing the hard filters
    low: float
    high: float

    def of(self, seq: int) -> float | None:
        row = self.snapshot.row(seq)
        return None if row is None else float(self.scores[row])

    def normalised(self, value: float) -> float:
        """``value`` min-max scaled over the allowed rows, in [0, 1]."""
        spread = self.high - self.low
        if spread <= 0:
            return 1.0
        return min(max((value - self.low) / spread, 0.0), 1.0)

    def best(self, k: int, exclude: set[int] | None = None) -> list[tuple[int, float]]:
        """The ``k`` best allowed rows as (seq, score), best first."""
        candidates = np.flatnonzero(self.allowed)
        if exclude:
            keep = ~np.isin(self.snapshot.seqs[candidates], np.fromiter(exclude, dtype=np.int64))
            candidates = candidates[keep]
        if len(candidates) > k:
            part = np.argpartition(-self.scores[candidates], k - 1)[:k]
            candidates = candidates[part]
        order = candidates[np.argsort(-self.scores[candidates], kind="stable")]
        return [(int(self.snapshot.seqs[r]), float(self.scores[r])) for r in order]


def score_all(
    snapshot: Snapshot,
    query_vector: npt.NDArray[np.float32],
    allowed: npt.NDArray[np.bool_] | None,
    smoothing: float,
) -> DenseScores:
    """Cosine of the query with every row, smoothed over stream neighbours.

    A row's score becomes ``(cos + s * sum(neighbours' cos)) / (1 + s * n)``
    over its ``n`` neighbours that hold a vector (s = ``smoothing``).  Rows
    that hold no current vector, or fail the filters (``allowed`` False), are
    never returned; their neighbours still count.
    """
    cos = snapshot.matrix @ query_vector
    valid = snapshot.valid
    if smoothing > 0 and len(cos):
        total = cos.copy()
        count = np.ones(len(cos), dtype=np.float32)
        for links in (snapshot.prev_row, snapshot.next_row):
            has = links >= 0
            has[has] = valid[links[has]]
            total[has] += smoothing * cos[links[has]]
            count[has] += smoothing
        cos = total / count
    mask = valid if allowed is None else valid & allowed
    if mask.any():
        low, high = float(cos[mask].min()), float(cos[mask].max())
    else:
        low = high = 0.0
    return DenseScores(snapshot, cos, mask, low, high)
