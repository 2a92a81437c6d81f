"""A wrong supersession undone, and remembered.

A reading can take a statement for the successor of one it does not replace ("I'm
learning Japanese" for a job).  A person undoes it: the earlier statement -- its turn
and the facts drawn from it -- holds again from when it was said, and the pair is
kept in ``supersession_refusals`` so that no later reading (on write, once embedded,
or in a pass) supersedes it by the same statement again.  The change is journaled as
an edit, so the memory's history shows it.
"""

from __future__ import annotations

import time
import uuid

from sqlalchemy import Connection, text

from memory_core.auth import WRITE, Identity, acting
from memory_core.brain.db import Brain
from memory_core.errors import Conflict
from memory_core.supersession.chain import with_facts
from memory_core.traces.journal import changing
from memory_core.traces.model import Trace
from memory_core.traces.store import active_trace, fetch_trace


def undo_supersession(
    brain: Brain, trace_id: str, *, identity: Identity, now: float | None = None
) -> Trace:
    """Make the superseded trace ``trace_id`` (and its statement's other traces) current
    again, and never superseded by the same successor; returns it.

    :class:`NotFound` when the id names no active trace ``identity`` sees;
    :class:`Conflict` when it is current (nothing superseded it).
    """
    acting(identity, WRITE)
    now = time.time() if now is None else now
    with brain.transaction() as conn:
        trace = active_trace(conn, trace_id, identity)
        if trace.superseded_by is None:
            raise Conflict(f"trace {trace_id} is current: nothing superseded it")
        successor = fetch_trace(conn, trace.superseded_by)
        earlier = with_facts(conn, _statement(trace))
        later = set(with_facts(conn, _statement(successor))) | {trace.superseded_by}
        marks = ", ".join(f":e{i}" for i in range(len(earlier)))
        params = {f"e{i}": t for i, t in enumerate(earlier)}
        rows = conn.execute(
            text(f"SELECT id, superseded_by FROM memory_traces WHERE id IN ({marks})"), params
        ).all()
        undone = [str(r.id) for r in rows if r.superseded_by in later]
        with changing(conn, f"edit_{uuid.uuid4().hex[:12]}", "supersession_undo", undone, now):
            _clear(conn, undone)
        _refuse(conn, earlier, sorted(later), now)
        found = fetch_trace(conn, trace_id)
    assert found is not None
    return found


def _statement(trace: Trace | None) -> list[str]:
    """The traces of the statement ``trace`` belongs to: its turn, when it is a fact
    drawn from one, and itself."""
    if trace is None:
        return []
    return list(dict.fromkeys([*trace.cited[:1], trace.id]))


def _clear(conn: Connection, ids: list[str]) -> None:
    for trace_id in ids:
        conn.execute(
            text(
                "UPDATE memory_traces SET valid_until = NULL, superseded_by = NULL WHERE id = :id"
            ),
            {"id": trace_id},
        )


def _refuse(conn: Connection, earlier: list[str], later: list[str], now: float) -> None:
    conn.execute(
        text(
            "INSERT INTO supersession_refusals (trace_id, successor_id, refused_at) "
            "VALUES (:t, :s, :at) ON CONFLICT (trace_id, successor_id) DO NOTHING"
        ),
        [{"t": t, "s": s, "at": now} for t in earlier for s in later],
    )
