"""Undo: every accepted proposal and every pass's unattended changes, reversed as a unit.

Whatever changes traces on a unit's behalf records each trace's row as it was
before in ``undo_log`` (:mod:`memory_core.traces.journal`).  Undoing the unit
puts every row back as it was -- content, tags, counts, deletion, the full-text
entry and the vectors (kept in ``vector_archive`` by the delete and rewrite
paths) -- newest change first, in one transaction; a trace created by the unit
is removed.  When any of those traces changed since (its version is no longer
the one the unit left) the whole undo is refused with the reason, and nothing
is changed.

:func:`restore_trace` undeletes one trace, whoever deleted it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, text

from memory_core.brain.db import Brain
from memory_core.brain.schema import memory_traces
from memory_core.embeddings import archive_vectors, unarchive_vectors
from memory_core.errors import Conflict, NotFound
from memory_core.traces.journal import changing, created
from memory_core.traces.model import dumps
from memory_core.traces.store import fetch_trace, fts_delete, fts_insert, tags_rewritten

# Columns an undo writes back (everything but the row's identity).
_RESTORED = [c.name for c in memory_traces.columns if c.name not in ("seq", "id")]


__all__ = ["UndoResult", "changing", "created", "has_changes", "restore_trace", "undo_unit"]


@dataclass(frozen=True)
class UndoResult:
    """What undoing one unit did."""

    unit: str
    restored: list[str]
    removed: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"unit": self.unit, "restored": self.restored, "removed": self.removed}


def has_changes(brain: Brain, unit: str) -> bool:
    """Whether the unit recorded changes that are not undone yet."""
    with brain.read() as conn:
        return (
            conn.execute(
                text("SELECT 1 FROM undo_log WHERE unit = :u AND undone_at IS NULL LIMIT 1"),
                {"u": unit},
            ).first()
            is not None
        )


def undo_unit(brain: Brain, unit: str, *, now: float | None = None) -> UndoResult:
    """Reverse every change the unit recorded, newest first, in one transaction.

    :class:`NotFound` when the unit recorded nothing left to undo;
    :class:`Conflict`, changing nothing, when a trace changed since.
    """
    now = time.time() if now is None else now
    with brain.transaction() as conn:
        entries = conn.execute(
            text(
                "SELECT id, trace_id, before, after_version FROM undo_log "
                "WHERE unit = :u AND undone_at IS NULL ORDER BY id DESC"
            ),
            {"u": unit},
        ).all()
        if not entries:
            raise NotFound(f"nothing to undo for {unit}")
        _check_unchanged(conn, unit, entries)
        restored: list[str] = []
        removed: list[str] = []
        for entry in entries:
            if entry.before is None:
                if _remove(conn, entry.trace_id):
                    removed.append(entry.trace_id)
            else:
                _restore_row(conn, json.loads(entry.before))
                restored.append(entry.trace_id)
        conn.execute(
            text("UPDATE undo_log SET undone_at = :now WHERE unit = :u AND undone_at IS NULL"),
            {"now": now, "u": unit},
        )
    return UndoResult(unit, list(dict.fromkeys(restored)), removed)


def _check_unchanged(conn: Connection, unit: str, entries: Sequence[Any]) -> None:
    # The newest entry of each trace holds the version the unit left it at.
    latest: dict[str, int | None] = {}
    for entry in entries:
        latest.setdefault(entry.trace_id, entry.after_version)
    for trace_id, version in latest.items():
        current = fetch_trace(conn, trace_id)
        if current is None:
            raise Conflict(f"cannot undo {unit}: trace {trace_id} no longer exists")
        if current.version != version:
            raise Conflict(
                f"cannot undo {unit}: trace {trace_id} changed since "
                f"(version {current.version}, {unit} left version {version})"
            )


def _restore_row(conn: Connection, before: dict[str, Any]) -> None:
    current = fetch_trace(conn, before["id"])
    assert current is not None  # checked by _check_unchanged
    fts_delete(conn, current.seq, current.content, dumps(current.tags), current.context)
    if current.content_hash != before["content_hash"] and not current.deleted:
        archive_vectors(conn, current.id, current.content_hash)
    conn.execute(
        text(
            "UPDATE memory_traces SET "
            + ", ".join(f"{c} = :{c}" for c in _RESTORED)
            + " WHERE id = :id"
        ),
        {c: before[c] for c in [*_RESTORED, "id"]},
    )
    fts_insert(conn, before["seq"], before["content"], before["tags"], before["context"])
    if before["tags"] != dumps(current.tags):
        tags_rewritten(conn)
    if not before["deleted"]:
        unarchive_vectors(conn, before["id"], before["content_hash"])


def _remove(conn: Connection, trace_id: str) -> bool:
    """Remove a trace the unit created: its row, full-text entry and vectors."""
    current = fetch_trace(conn, trace_id)
    if current is None:
        return False
    fts_delete(conn, current.seq, current.content, dumps(current.tags), current.context)
    conn.execute(text("DELETE FROM trace_embeddings WHERE trace_id = :id"), {"id": trace_id})
    conn.execute(text("DELETE FROM memory_traces WHERE id = :id"), {"id": trace_id})
    return True


def restore_trace(brain: Brain, trace_id: str, *, now: float | None = None) -> None:
    """Undelete one trace (pruned, merged away or deleted): active again, vectors back.

    :class:`NotFound` for an unknown id; :class:`Conflict` when it is not deleted.
    """
    now = time.time() if now is None else now
    with brain.transaction() as conn:
        trace = fetch_trace(conn, trace_id)
        if trace is None:
            raise NotFound(f"no trace {trace_id}")
        if not trace.deleted:
            raise Conflict(f"trace {trace_id} is not deleted")
        with changing(conn, f"restore_{trace_id}_{int(now)}", "restore", [trace_id], now):
            conn.execute(
                text(
                    "UPDATE memory_traces SET deleted = 0, deleted_reason = NULL, "
                    "deleted_at = NULL, updated_at = :now, version = version + 1 WHERE id = :id"
                ),
                {"now": now, "id": trace_id},
            )
            unarchive_vectors(conn, trace_id, trace.content_hash)
