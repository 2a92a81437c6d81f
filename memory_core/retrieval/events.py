"""The vector change log both vector indexes catch up from.

Triggers on ``trace_embeddings`` append one ``embedding_events`` row per
change; an index remembers the last id it took in and, at the next search,
reads which traces changed since.  Pruning the log records the highest id it
dropped, so an index that had not seen those changes rebuilds instead.
"""

from __future__ import annotations

from sqlalchemy import Connection, text

# The highest event id pruned from the log (see vector_index.prune_events).
EVENTS_FLOOR_KEY = "embedding_events_floor"

_LAST = text("SELECT coalesce(max(id), 0) FROM embedding_events")
_FLOOR = text(f"SELECT value FROM brain_meta WHERE key = '{EVENTS_FLOOR_KEY}'")
_CHANGED = text(
    "SELECT DISTINCT trace_id FROM embedding_events WHERE id > :after AND id <= :last "
    "AND model = :model"
)


def last_event(conn: Connection) -> int:
    """The newest event's id (0: none)."""
    return int(conn.execute(_LAST).scalar_one())


def events_floor(conn: Connection) -> int:
    """The highest event id pruned from the log (0: none was)."""
    return int(conn.execute(_FLOOR).scalar() or 0)


def changed_traces(conn: Connection, after: int, last: int, model: str) -> list[str]:
    """The ids of the traces whose ``model`` vector changed in events ``(after, last]``."""
    params = {"after": after, "last": last, "model": model}
    return [str(r[0]) for r in conn.execute(_CHANGED, params)]
