"""Retrieval feedback: what search returned, applied off the read path.

Search itself writes nothing; its caller enqueues :func:`record_retrieval`
with an event id.  Applying an event bumps each returned trace's retrieval
count and last access (which refreshes its decay) and strengthens the
co-activation edges between the traces returned together.  The event id is
recorded in the same transaction, so a redelivered job changes nothing.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from itertools import combinations

from sqlalchemy import text

from memory_core.db import Brain

# Only the first few results of a search co-activate: deeper ones are noise.
COACTIVATION_TOP = 5
EDGE_INCREMENT = 1.0


def new_event_id() -> str:
    return f"ret_{uuid.uuid4()}"


def record_retrieval(
    brain: Brain, event_id: str, trace_ids: Sequence[str], *, at: float | None = None
) -> bool:
    """Apply one retrieval event once.  Returns False if it was already applied."""
    at = time.time() if at is None else at
    ids = list(dict.fromkeys(trace_ids))
    with brain.transaction() as conn:
        inserted = conn.execute(
            text(
                "INSERT OR IGNORE INTO retrieval_events (id, trace_ids, at) VALUES (:id, :ids, :at)"
            ),
            {"id": event_id, "ids": json.dumps(ids), "at": at},
        ).rowcount
        if not inserted:
            return False
        for trace_id in ids:
            conn.execute(
                text(
                    "UPDATE memory_traces SET retrieval_count = retrieval_count + 1, "
                    "last_accessed = max(coalesce(last_accessed, 0), :at) "
                    "WHERE id = :id AND deleted = 0"
                ),
                {"at": at, "id": trace_id},
            )
        live = {
            r[0]
            for r in conn.execute(
                text(
                    "SELECT id FROM memory_traces WHERE deleted = 0 "
                    "AND id IN (SELECT value FROM json_each(:ids))"
                ),
                {"ids": json.dumps(ids[:COACTIVATION_TOP])},
            )
        }
        top = [t for t in ids[:COACTIVATION_TOP] if t in live]
        for a, b in combinations(sorted(top), 2):
            conn.execute(
                text(
                    "INSERT INTO coactivation_edges (a, b, weight, count, updated_at) "
                    "VALUES (:a, :b, :w, 1, :at) ON CONFLICT (a, b) DO UPDATE SET "
                    "weight = weight + :w, count = count + 1, updated_at = :at"
                ),
                {"a": a, "b": b, "w": EDGE_INCREMENT, "at": at},
            )
    return True
