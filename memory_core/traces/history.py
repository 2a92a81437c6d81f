"""One trace's story: where it came from, what it replaced, what changed it since.

Read for a person reviewing what an agent knows: the traces and the turn it was
taken from, the traces an insight cites and those citing it, the statement it
superseded and the one that superseded it, every change journaled in
``undo_log`` (a pass's merge, an accepted proposal, a person's edit) with the words
it had before, and the proposals that name it.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection, text

from memory_core.auth import Identity, acting
from memory_core.brain.db import Brain
from memory_core.errors import NotFound
from memory_core.traces.model import Trace
from memory_core.traces.store import fetch_trace, visible

# What a related trace is shown by: enough to name it and open it.
_BRIEF = ("id", "type", "content", "scope_id", "occurred_at", "deleted")


def _brief(trace: Trace) -> dict[str, Any]:
    return {k: getattr(trace, k) for k in _BRIEF}


def _unit_kind(unit: str) -> str:
    """Who made a journaled change, by its unit's name: a pass, a proposal, an edit."""
    for prefix, kind in (("dream_", "pass"), ("prop_", "proposal"), ("edit_", "edit")):
        if unit.startswith(prefix):
            return kind
    return "other"


def trace_history(brain: Brain, trace_id: str, *, identity: Identity) -> dict[str, Any]:
    """The trace (deleted ones too) with its sources, supersession, changes and proposals.

    :class:`NotFound` for an id ``identity`` does not see; related traces it does
    not see are left out.
    """
    acting(identity)
    with brain.read() as conn:
        trace = fetch_trace(conn, trace_id)
        if trace is None or not visible(trace, identity):
            raise NotFound(f"no trace {trace_id}")

        def seen(ids: list[str]) -> list[dict[str, Any]]:
            found = (fetch_trace(conn, i) for i in dict.fromkeys(ids))
            return [_brief(t) for t in found if t is not None and visible(t, identity)]

        sources = [s for s in trace.sources if isinstance(s, dict)]
        cited = [str(s["trace"]) for s in sources if "trace" in s]
        replaced = conn.execute(
            text("SELECT id FROM memory_traces WHERE superseded_by = :id ORDER BY occurred_at"),
            {"id": trace_id},
        ).scalars()
        return {
            "trace": trace.to_dict(),
            "turns": [str(s["turn"]) for s in sources if "turn" in s],
            "sources": seen(cited),
            "cited_by": seen(_citing(conn, trace_id)),
            "replaced": seen([str(r) for r in replaced]),
            "replaced_by": seen([trace.superseded_by] if trace.superseded_by else []),
            "changes": _changes(conn, trace_id),
            "proposals": _proposals(conn, trace_id),
        }


def _citing(conn: Connection, trace_id: str) -> list[str]:
    """Traces whose sources name this one (insights built from it, facts of an episode)."""
    rows = conn.execute(
        text(
            "SELECT id, sources FROM memory_traces WHERE sources LIKE :pattern "
            "ORDER BY seq LIMIT 200"
        ),
        {"pattern": f"%{trace_id}%"},
    )
    return [
        str(r.id)
        for r in rows
        if any(isinstance(s, dict) and s.get("trace") == trace_id for s in json.loads(r.sources))
    ]


def _changes(conn: Connection, trace_id: str) -> list[dict[str, Any]]:
    """Every journaled change of the trace, oldest first, with the words it had before."""
    rows = conn.execute(
        text(
            "SELECT unit, step, before, after_version, at, undone_at FROM undo_log "
            "WHERE trace_id = :id ORDER BY id"
        ),
        {"id": trace_id},
    ).all()
    changes = []
    for r in rows:
        before = json.loads(r.before) if r.before is not None else None
        changes.append(
            {
                "at": r.at,
                "unit": r.unit,
                "by": _unit_kind(r.unit),
                "step": r.step,
                "created": before is None,
                "content_before": None if before is None else before["content"],
                "tags_before": None if before is None else json.loads(before["tags"]),
                "version_after": r.after_version,
                "undone_at": r.undone_at,
            }
        )
    return changes


def _proposals(conn: Connection, trace_id: str) -> list[dict[str, Any]]:
    """The proposals naming the trace, newest first."""
    rows = conn.execute(
        text(
            "SELECT id, kind, status, summary, created_at, decided_at, pass_id FROM proposals "
            "WHERE subject_key LIKE :pattern ORDER BY created_at DESC"
        ),
        {"pattern": f"%{trace_id}%"},
    ).all()
    return [dict(r._mapping) for r in rows]
