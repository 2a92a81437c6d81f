"""The journal of changes to traces: each change's before-image, in ``undo_log``.

Whatever changes traces on a unit's behalf (an accepted proposal, a dream pass,
a person's edit) records each trace's row as it was before (nothing, for a trace
it created) and the version the change left, in the same transaction as the
change.  :mod:`memory_core.traces.undo` reverses a unit from it; a trace's
history (:mod:`memory_core.traces.history`) reads it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, text

_ROW = text("SELECT * FROM memory_traces WHERE id = :id")


def _row(conn: Connection, trace_id: str) -> dict[str, Any] | None:
    found = conn.execute(_ROW, {"id": trace_id}).first()
    return None if found is None else dict(found._mapping)


def _log(conn: Connection, unit: str, step: str, trace_id: str, before: Any, at: float) -> None:
    after = conn.execute(
        text("SELECT version FROM memory_traces WHERE id = :id"), {"id": trace_id}
    ).scalar()
    conn.execute(
        text(
            "INSERT INTO undo_log (unit, trace_id, step, before, after_version, at) "
            "VALUES (:unit, :id, :step, :before, :after, :at)"
        ),
        {
            "unit": unit,
            "id": trace_id,
            "step": step,
            "before": None if before is None else json.dumps(before),
            "after": after,
            "at": at,
        },
    )


@contextmanager
def changing(
    conn: Connection, unit: str, step: str, trace_ids: Iterable[str], now: float
) -> Iterator[None]:
    """Record the before-image of these traces around a change made inside the block.

    Use inside the transaction (or savepoint) that makes the change: if the
    block raises, nothing is recorded and the savepoint rolls back with it.
    """
    before = {tid: _row(conn, tid) for tid in dict.fromkeys(trace_ids)}
    yield
    for tid, row in before.items():
        if row is not None:
            _log(conn, unit, step, tid, row, now)


def created(conn: Connection, unit: str, step: str, trace_ids: Iterable[str], now: float) -> None:
    """Record traces the unit created: undoing it removes them."""
    for tid in trace_ids:
        _log(conn, unit, step, tid, None, now)
