"""Supersession by meaning as work of its own, which a lost message does not lose.

A trace is searchable by meaning once its vector is stored; supersession by
meaning (:func:`memory_core.supersession.semantic.follow`) then embeds what was
said and compares it with earlier statements.  The two are separate jobs, so
the second never holds up the first: the embed job :func:`note`s its traces
before it embeds them and sends a follow job once they are stored; that job
(:func:`follow_noted`) clears them.  Traces noted longer ago than the reconcile
timeout (:func:`overdue`) are work a lost message left, sent again by reconcile.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from sqlalchemy import bindparam, text

from memory_core.brain.db import Brain
from memory_core.embedders.base import Embedder
from memory_core.supersession import semantic

# Only statements are followed (semantic.follow reads no other type), so only they
# are noted.
_NOTE = text(
    "INSERT INTO supersession_pending (trace_id, noted_at) "
    "SELECT id, :at FROM memory_traces WHERE id = :id "
    f"AND type IN {semantic.STATEMENT_TYPES!r} "
    "ON CONFLICT (trace_id) DO NOTHING"
)
_CLEAR = text("DELETE FROM supersession_pending WHERE trace_id IN :ids").bindparams(
    bindparam("ids", expanding=True)
)


def note(brain: Brain, trace_ids: Sequence[str], *, at: float | None = None) -> None:
    """Note ``trace_ids`` (the statements among them) as waiting to be followed."""
    if not trace_ids:
        return
    at = time.time() if at is None else at
    with brain.transaction() as conn:
        conn.execute(_NOTE, [{"id": trace_id, "at": at} for trace_id in trace_ids])


def follow_noted(brain: Brain, embedder: Embedder | None, trace_ids: Sequence[str]) -> int:
    """Follow ``trace_ids`` (with ``embedder``; without one there is nothing to
    follow by meaning) and clear their notes.  Returns how many traces they
    superseded.  Idempotent: following a trace twice supersedes nothing more."""
    superseded = 0 if embedder is None else semantic.follow(brain, embedder, trace_ids)
    if trace_ids:
        with brain.transaction() as conn:
            conn.execute(_CLEAR, {"ids": list(trace_ids)})
    return superseded


def overdue(brain: Brain, older_than: float, *, limit: int, now: float | None = None) -> list[str]:
    """Traces noted more than ``older_than`` seconds ago, oldest first."""
    now = time.time() if now is None else now
    with brain.read() as conn:
        rows = conn.execute(
            text(
                "SELECT trace_id FROM supersession_pending WHERE noted_at < :before "
                "ORDER BY noted_at, trace_id LIMIT :limit"
            ),
            {"before": now - older_than, "limit": limit},
        ).all()
    return [str(r.trace_id) for r in rows]
