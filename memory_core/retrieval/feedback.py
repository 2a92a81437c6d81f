"""Retrieval feedback: what search returned, applied off the read path.

Search itself writes nothing; its caller enqueues :func:`record_retrieval`
with an event id.  Applying an event bumps each returned trace's retrieval
count and last access (which refreshes its decay, at once) and keeps the
event, from which the next dream pass's strengthen step learns co-activation
edges and stability.  The event id is the key, so a redelivered job changes
nothing.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence

from sqlalchemy import text

from memory_core.brain.db import Brain


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
    return True
