"""Reconcile: find the work the queue lost.

The brain is the truth and the queue only an accelerator: turns still pending
after a timeout and traces lacking embeddings are found here, and the caller
re-enqueues them.  Losing Redis (a flush, a restart, a worker killed with -9)
therefore loses no turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
