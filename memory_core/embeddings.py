"""Trace vectors in the brain: store, backfill and load.

Vectors live in ``trace_embeddings`` as little-endian float32 blobs, one row
per trace and embedder name, so vectors of two models never mix.  Embedding
happens outside any transaction (it may take seconds, or go over the
network); the write that follows re-checks each trace under the write lock
and stores a vector only if the trace is still active and its content hash is
still the one that was embedded.  A trace edited or deleted meanwhile is
skipped, never given a stale vector; the next backfill picks it up.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import cast

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, Text, bindparam, text

from memory_core.brain.db import Brain
from memory_core.embedders.base import Embedder, Vectors
from memory_core.embedders.turns import BatchTurns
from memory_core.errors import EmbedderError, InvalidArgument

log = logging.getLogger(__name__)

_ID_CHUNK = 500  # ids per IN (...) query, well under SQLite's variable limit
_DTYPE = np.dtype("<f4")

_UPSERT = text(
    "INSERT INTO trace_embeddings (trace_id, model, dim, vector, created_at) "
    "SELECT id, :model, :dim, :vector, :now FROM memory_traces "
    "WHERE id = :id AND deleted = 0 AND content_hash = :hash "
    "ON CONFLICT (trace_id, model) DO UPDATE SET "
    "dim = excluded.dim, vector = excluded.vector, created_at = excluded.created_at"
)

_MISSING = text(
    "SELECT t.seq, t.id FROM memory_traces t WHERE t.deleted = 0 AND t.seq > :after "
    "AND NOT EXISTS (SELECT 1 FROM trace_embeddings e "
    "WHERE e.trace_id = t.id AND e.model = :model) ORDER BY t.seq LIMIT :limit"
)

_COUNT_MISSING = text(
    "SELECT count(*) FROM memory_traces t WHERE t.deleted = 0 "
    "AND NOT EXISTS (SELECT 1 FROM trace_embeddings e "
    "WHERE e.trace_id = t.id AND e.model = :model)"
)

_TO_EMBED = text(
    "SELECT t.id, t.content, t.content_hash FROM memory_traces t "
    "WHERE t.id IN :ids AND t.deleted = 0 AND NOT EXISTS (SELECT 1 FROM trace_embeddings e "
    "WHERE e.trace_id = t.id AND e.model = :model)"
).bindparams(bindparam("ids", expanding=True, type_=Text))

_LOAD = text(
    "SELECT e.trace_id, e.dim, e.vector FROM trace_embeddings e "
    "JOIN memory_traces t ON t.id = e.trace_id "
    "WHERE e.model = :model AND t.deleted = 0 ORDER BY t.seq"
)


@dataclass(frozen=True)
class _Pending:
    id: str
    content: str
    content_hash: str


def to_blob(vector: npt.ArrayLike) -> bytes:
    """A vector as the little-endian float32 bytes the brain stores."""
    return np.ascontiguousarray(vector, dtype=_DTYPE).tobytes()


def from_blob(blob: bytes) -> npt.NDArray[np.float32]:
    """The float32 vector (native byte order) stored in a blob."""
    return np.frombuffer(blob, dtype=_DTYPE).astype(np.float32)


def store_vectors(
    brain: Brain,
    model: str,
    ids: Sequence[str],
    vectors: Vectors,
    *,
    content_hashes: Sequence[str],
    now: float | None = None,
) -> int:
    """Store one vector per id for ``model``, in one transaction; returns how many.

    ``content_hashes`` are the hashes of the contents that were embedded, as
    read before embedding.  An id whose trace is gone, deleted or now has
    another content hash is skipped.  An existing vector for the same trace
    and model is replaced.
    """
    matrix = np.asarray(vectors)
    if matrix.ndim != 2 or len(matrix) != len(ids) or len(content_hashes) != len(ids):
        raise InvalidArgument(
            f"store_vectors needs one vector and one content hash per id; got {len(ids)} ids, "
            f"vectors of shape {matrix.shape} and {len(content_hashes)} hashes"
        )
    if not np.isfinite(matrix).all():
        raise InvalidArgument("vectors must be finite")
    dim = int(matrix.shape[1])
    now = time.time() if now is None else now
    stored = 0
    with brain.transaction() as conn:
        for trace_id, row, digest in zip(ids, matrix, content_hashes, strict=True):
            result = conn.execute(
                _UPSERT,
                {
                    "model": model,
                    "dim": dim,
                    "vector": to_blob(row),
                    "now": now,
                    "id": trace_id,
                    "hash": digest,
                },
            )
            stored += result.rowcount
    skipped = len(ids) - stored
    if skipped:
        log.info("skipped %d of %d vectors: traces deleted or changed meanwhile", skipped, len(ids))
    return stored


def _missing_page(
    conn: Connection, model: str, after_seq: int, limit: int
) -> list[tuple[int, str]]:
    every = 2**62  # a negative limit: no limit (SQLite's -1, which PostgreSQL refuses)
    limit = limit if limit >= 0 else every
    rows = conn.execute(_MISSING, {"model": model, "after": after_seq, "limit": limit})
    return [(int(seq), str(trace_id)) for seq, trace_id in rows]


def traces_missing_embeddings(brain: Brain, model: str, limit: int | None = None) -> list[str]:
    """Ids of active traces with no vector for ``model``, oldest first."""
    with brain.read() as conn:
        return [tid for _, tid in _missing_page(conn, model, 0, -1 if limit is None else limit)]


def count_missing_embeddings(brain: Brain, model: str) -> int:
    """How many active traces have no vector for ``model`` (for metrics)."""
    with brain.read() as conn:
        return int(conn.execute(_COUNT_MISSING, {"model": model}).scalar_one())


def _read_pending(brain: Brain, model: str, ids: list[str]) -> list[_Pending]:
    found: dict[str, _Pending] = {}
    with brain.read() as conn:
        for lo in range(0, len(ids), _ID_CHUNK):
            chunk = ids[lo : lo + _ID_CHUNK]
            for tid, content, digest in conn.execute(_TO_EMBED, {"ids": chunk, "model": model}):
                found[tid] = _Pending(tid, content, digest)
    return [found[i] for i in ids if i in found]


def embed_traces(
    brain: Brain, embedder: Embedder, trace_ids: Sequence[str], *, batch_size: int | None = None
) -> int:
    """Embed and store the given traces that lack a vector for this embedder.

    Idempotent: deleted traces, unknown ids and traces already embedded for
    ``embedder.name`` are skipped without calling the embedder.  Each batch
    (``batch_size``, default ``embed_batch_size``) is stored in its own
    transaction, so an embedder failure keeps the batches before it.
    Returns the number of vectors stored.
    """
    size = batch_size or brain.settings.embed_batch_size
    pending = _read_pending(brain, embedder.name, list(dict.fromkeys(trace_ids)))
    stored = 0
    for lo in range(0, len(pending), size):
        batch = pending[lo : lo + size]
        with one_batch_at_a_time(embedder):
            vectors = embedder.embed([p.content for p in batch])
        if getattr(vectors, "shape", None) != (len(batch), embedder.dim):
            raise EmbedderError(
                f"embedder {embedder.name} returned shape {getattr(vectors, 'shape', None)} "
                f"for {len(batch)} texts of dimension {embedder.dim}"
            )
        stored += store_vectors(
            brain,
            embedder.name,
            [p.id for p in batch],
            vectors,
            content_hashes=[p.content_hash for p in batch],
        )
    return stored


def one_batch_at_a_time(
    embedder: Embedder, *, urgent: bool = True
) -> AbstractContextManager[object]:
    """The embedder's ``batch_lock`` if it has one: a model that runs on this machine's
    cores embeds one batch at a time, since two at once share the cores and each runs
    slower than one after the other (``python -m bench.ingest --parts embed``).  A
    query's embedding does not take it, so a search never waits for a batch.

    A batch that is not ``urgent`` (what supersession embeds, not a trace's own
    vector) lets waiting urgent ones go first, where the lock tells them apart
    (:class:`~memory_core.embedders.turns.BatchTurns`).
    """
    lock = getattr(embedder, "batch_lock", None)
    if lock is None:
        return nullcontext()
    if not urgent and isinstance(lock, BatchTurns):
        return lock.later()
    return cast(AbstractContextManager[object], lock)


def embed_missing(
    brain: Brain,
    embedder: Embedder,
    batch_size: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Backfill: embed every active trace lacking a vector for this embedder.

    Walks the traces once in insertion order, so it ends even while writers
    keep adding or editing traces; what it skips or misses, the next run
    picks up.  Returns the number of vectors stored; ``progress(n)`` hears of
    each page of ``n`` traces done.
    """
    size = batch_size or brain.settings.embed_batch_size
    after = 0
    stored = 0
    while True:
        with brain.read() as conn:
            page = _missing_page(conn, embedder.name, after, size)
        if not page:
            return stored
        after = page[-1][0]
        stored += embed_traces(brain, embedder, [tid for _, tid in page], batch_size=size)
        if progress is not None:
            progress(len(page))


def load_vectors(
    brain: Brain, model: str, dim: int | None = None
) -> tuple[list[str], npt.NDArray[np.float32]]:
    """Ids and an ``(n, dim)`` float32 matrix of every active trace's ``model`` vector.

    Rows of another dimension than ``dim`` (default: the first row's) are
    skipped with a warning; they can only come from a model that changed its
    dimension under the same name.
    """
    ids: list[str] = []
    blobs: list[bytes] = []
    bad = 0
    with brain.read() as conn:
        for trace_id, row_dim, blob in conn.execute(_LOAD, {"model": model}):
            if dim is None:
                dim = int(row_dim)
            if row_dim != dim or len(blob) != dim * _DTYPE.itemsize:
                bad += 1
                continue
            ids.append(trace_id)
            blobs.append(blob)
    if bad:
        log.warning("skipped %d %s vectors whose dimension is not %s", bad, model, dim)
    matrix = from_blob(b"".join(blobs)).reshape(len(ids), dim or 0)
    return ids, matrix


# -- the archive: vectors of deleted or rewritten traces, for restoring them --


def archive_vectors(conn: Connection, trace_id: str, digest: str) -> None:
    """Move the trace's vectors to the archive, keyed by the content they embed."""
    conn.execute(
        text(
            "INSERT INTO vector_archive "
            "(trace_id, model, content_hash, dim, vector, created_at) "
            "SELECT trace_id, model, :digest, dim, vector, created_at FROM trace_embeddings "
            "WHERE trace_id = :id ON CONFLICT (trace_id, model, content_hash) DO UPDATE SET "
            "dim = excluded.dim, vector = excluded.vector, created_at = excluded.created_at"
        ),
        {"id": trace_id, "digest": digest},
    )
    conn.execute(text("DELETE FROM trace_embeddings WHERE trace_id = :id"), {"id": trace_id})


def unarchive_vectors(conn: Connection, trace_id: str, digest: str) -> int:
    """Bring back the archived vectors of this trace's content; returns how many."""
    moved = conn.execute(
        text(
            "INSERT INTO trace_embeddings (trace_id, model, dim, vector, created_at) "
            "SELECT trace_id, model, dim, vector, created_at FROM vector_archive "
            "WHERE trace_id = :id AND content_hash = :digest ON CONFLICT DO NOTHING"
        ),
        {"id": trace_id, "digest": digest},
    ).rowcount
    conn.execute(
        text("DELETE FROM vector_archive WHERE trace_id = :id AND content_hash = :digest"),
        {"id": trace_id, "digest": digest},
    )
    return int(moved)
