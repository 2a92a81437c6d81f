"""Retrieval feedback: what search returned and what the caller used, applied off the
read path.

Search itself writes nothing; its caller enqueues :func:`record_retrieval` with an
event id.  Applying an event bumps each returned trace's retrieval count and last
access (which refreshes its decay, at once) and keeps the event, from which the
next dream pass's strengthen step learns co-activation edges and stability.  The
event id is the key, so a redelivered job changes nothing.

A retrieval counts when a result was used, and asking the same thing again is no
new use: an event with a ``query_key`` (a digest of the query, its filters and who
asked, :func:`query_key`) that another counted event shares within the feedback
window is kept but counts nothing and teaches strengthen nothing.  A caller that
reports which results it read or cited (``POST /v1/feedback``) adds one count to
each, once per search (:func:`used_event_id`); results used for one search were used
together, which strengthen learns more from than from being returned together.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Sequence

from sqlalchemy import text

from memory_core.brain.db import Brain


def new_event_id() -> str:
    return f"ret_{uuid.uuid4()}"


USED = "use_"


def used_event_id(query_id: str, trace_id: str) -> str:
    """The event of one result of the search ``query_id`` reported used: once each.  The
    events of one search share their first part (:func:`used_search`)."""
    search = hashlib.sha256(query_id.encode()).hexdigest()[:16]
    return f"{USED}{search}_{hashlib.sha256(trace_id.encode()).hexdigest()[:16]}"


def used_search(event_id: str) -> str | None:
    """The search whose result the event ``event_id`` reported used; None for any other
    event."""
    if not event_id.startswith(USED):
        return None
    search, sep, _ = event_id.removeprefix(USED).partition("_")
    return search if sep else None


def query_key(*parts: object) -> str:
    """A digest of what a search asked: its words (case and spacing aside), filters and
    caller."""
    words = [" ".join(str(p).lower().split()) if isinstance(p, str) else repr(p) for p in parts]
    return hashlib.sha256("\x1f".join(words).encode()).hexdigest()[:32]


def record_retrieval(
    brain: Brain,
    event_id: str,
    trace_ids: Sequence[str],
    *,
    at: float | None = None,
    query_key: str | None = None,
    window_s: float = 0.0,
) -> bool:
    """Apply one retrieval event once.  Returns False if it was already applied, or if
    it repeats a counted search of the same ``query_key`` less than ``window_s``
    before it (kept, counting nothing)."""
    at = time.time() if at is None else at
    ids = list(dict.fromkeys(trace_ids))
    with brain.transaction() as conn:
        repeated = (
            query_key is not None
            and window_s > 0
            and conn.execute(
                text(
                    "SELECT 1 FROM retrieval_events WHERE query_key = :k AND id != :id "
                    "AND at > :since AND at <= :at AND trace_ids != '[]' LIMIT 1"
                ),
                {"k": query_key, "id": event_id, "since": at - window_s, "at": at},
            ).first()
            is not None
        )
        inserted = conn.execute(
            text(
                "INSERT INTO retrieval_events (id, trace_ids, at, consolidated, "
                "query_key) VALUES (:id, :ids, :at, :done, :k) ON CONFLICT DO NOTHING"
            ),
            {
                "id": event_id,
                # A repeat names nothing: it neither counts nor teaches co-activation.
                "ids": "[]" if repeated else json.dumps(ids),
                "at": at,
                "done": int(repeated),
                "k": query_key,
            },
        ).rowcount
        if not inserted or repeated:
            return False
        for trace_id in ids:
            conn.execute(
                text(
                    "UPDATE memory_traces SET retrieval_count = retrieval_count + 1, "
                    "last_accessed = CASE WHEN coalesce(last_accessed, 0) > :at THEN last_accessed "
                    "ELSE :at END "
                    "WHERE id = :id AND deleted = 0"
                ),
                {"at": at, "id": trace_id},
            )
    return True
