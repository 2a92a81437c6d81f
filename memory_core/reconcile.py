"""Reconcile: find the work the queue lost.

The brain is the truth and the queue only an accelerator: turns still pending
after a timeout and traces lacking embeddings are found here, and the caller
re-enqueues them.  Losing Redis (a flush, a restart, a worker killed with -9)
therefore loses no turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from memory_core.db import Brain
from memory_core.embedders.base import Embedder
from memory_core.ingest import stale_pending
from memory_core.settings import Settings


@dataclass(frozen=True)
class ReconcilePlan:
    turn_ids: list[str] = field(default_factory=list)
    unembedded_ids: list[str] = field(default_factory=list)


def plan(
    brain: Brain,
    settings: Settings,
    embedder: Embedder | None,
    *,
    limit: int = 10_000,
    older_than: float | None = None,
) -> ReconcilePlan:
    """Pending turns older than ``reconcile_after_s`` and traces without vectors."""
    turns = stale_pending(
        brain,
        older_than=settings.reconcile_after_s if older_than is None else older_than,
        limit=limit,
    )
    missing: list[str] = []
    if embedder is not None:
        from memory_core.embeddings import traces_missing_embeddings

        missing = traces_missing_embeddings(brain, embedder.name, limit)
    return ReconcilePlan(turns, missing)


class JobSender(Protocol):
    """Where reconcile's work goes: the queue's ingest and embed jobs."""

    def ingest(self, turn_ids: Sequence[str]) -> None: ...

    def embed(self, trace_ids: Sequence[str]) -> None: ...

    def embed_backlog(self) -> int:
        """Embed jobs waiting in the queue."""
        ...


INGEST_BATCH = 64  # turns an ingest job re-enqueued by reconcile takes


def dispatch(found: ReconcilePlan, jobs: JobSender) -> None:
    """Re-enqueue what :func:`plan` found: its turns in batches and, when no embed job
    is waiting, its traces without vectors (those behind a backlog are not lost; only
    an empty queue with traces still lacking vectors means messages went missing)."""
    for start in range(0, len(found.turn_ids), INGEST_BATCH):
        jobs.ingest(found.turn_ids[start : start + INGEST_BATCH])
    if found.unembedded_ids and jobs.embed_backlog() == 0:
        jobs.embed(found.unembedded_ids)
