"""Deciding proposals: accept with compare-and-set, reject, undo, expire."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Connection, Text, bindparam, text

from memory_core.auth import SYSTEM
from memory_core.brain.db import Brain
from memory_core.errors import Conflict, InvalidArgument, NotFound
from memory_core.proposals.base import (
    KIND_CHOICES,
    KINDS,
    PRUNED_REASON,
    Decision,
    read_file,
    recover,
    set_status,
    status_of,
)
from memory_core.proposals.files import file_path, move_file, shown
from memory_core.proposals.review import list_proposals
from memory_core.settings import Settings
from memory_core.supersession.chain import supersede
from memory_core.supersession.conflicts import statement_of
from memory_core.traces.merge import merge_traces
from memory_core.traces.model import Trace
from memory_core.traces.store import delete_trace, fetch_trace, get_trace, rewrite_trace
from memory_core.traces.undo import changing, undo_unit

_DecideOne = Callable[[Brain, Settings, str, float], Decision]


_KNOWN = text("SELECT id FROM proposals WHERE id IN :ids").bindparams(
    bindparam("ids", expanding=True, type_=Text)
)


def accept(
    brain: Brain, settings: Settings, ids: Sequence[str], now: float | None = None
) -> list[Decision]:
    """Apply each proposal in its own transaction, unless stale or edited.

    An unknown id raises :class:`NotFound` before anything is decided.
    """
    return _decide(brain, settings, ids, _accept_one, now)


def reject(
    brain: Brain, settings: Settings, ids: Sequence[str], now: float | None = None
) -> list[Decision]:
    """Record each rejection; the same change is not proposed again for the cooldown."""
    return _decide(brain, settings, ids, _reject_one, now)


def accept_all(
    brain: Brain, settings: Settings, now: float | None = None, *, kind: str | None = None
) -> list[Decision]:
    """Accept every pending proposal (of one ``kind``, if given), oldest first."""
    return accept(brain, settings, pending_ids(brain, settings, kind), now)


def pending_ids(brain: Brain, settings: Settings, kind: str | None = None) -> list[str]:
    """Pending proposals' ids, oldest first, of one kind if given."""
    if kind is not None and kind not in KINDS:
        raise InvalidArgument(f"kind must be {KIND_CHOICES}; got {kind!r}")
    found = list_proposals(brain, settings, identity=SYSTEM)
    return [p.id for p in found if kind is None or p.kind == kind]


def reject_all(
    brain: Brain, settings: Settings, now: float | None = None, *, kind: str | None = None
) -> list[Decision]:
    """Reject every pending proposal (of one ``kind``, if given), oldest first."""
    return reject(brain, settings, pending_ids(brain, settings, kind), now)


def _decide(
    brain: Brain, settings: Settings, ids: Sequence[str], one: _DecideOne, now: float | None
) -> list[Decision]:
    wanted = list(dict.fromkeys(ids))
    recover(brain, settings)
    with brain.read() as conn:
        known = set(conn.execute(_KNOWN, {"ids": wanted}).scalars())
    missing = [i for i in wanted if i not in known]
    if missing:
        raise NotFound(f"no proposal {missing[0]}; nothing was decided")
    now = time.time() if now is None else now
    return [one(brain, settings, pid, now) for pid in wanted]


def _reject_one(brain: Brain, settings: Settings, pid: str, now: float) -> Decision:
    with brain.transaction() as conn:
        status = status_of(conn, pid)
        if status != "pending":
            return Decision(pid, "not_pending", f"already {status}")
        set_status(conn, pid, "rejected", now)
        nested = conn.in_nested_transaction()
    if not nested and file_path(settings, "pending", pid).exists():
        move_file(file_path(settings, "pending", pid), file_path(settings, "rejected", pid))
    return Decision(pid, "rejected", "rejected")


def _accept_one(brain: Brain, settings: Settings, pid: str, now: float) -> Decision:
    path = file_path(settings, "pending", pid)
    with brain.transaction() as conn:
        row = conn.execute(text("SELECT * FROM proposals WHERE id = :id"), {"id": pid}).one()
        if row.status != "pending":
            return Decision(pid, "not_pending", f"already {row.status}")
        data = read_file(path)
        if data is None:
            return Decision(pid, "edited", f"its file {shown(path)} is missing")
        if hashlib.sha256(data).hexdigest() != row.file_sha256:
            return Decision(
                pid, "edited", f"its file {shown(path)} was edited since it was proposed"
            )
        doc = json.loads(data)
        why = _stale_reason(brain, doc)
        if why is not None:
            return Decision(pid, "stale", why)
        if row.expires_at is not None and row.expires_at <= now:
            return Decision(pid, "expired", "it expired before it was accepted")
        detail = _apply(conn, brain, pid, doc, now)
        set_status(conn, pid, "accepted", now)
        nested = conn.in_nested_transaction()
    if not nested:
        move_file(path, file_path(settings, "accepted", pid))
    return Decision(pid, "applied", detail)


def _stale_reason(brain: Brain, doc: dict[str, Any]) -> str | None:
    """Why the proposal no longer describes the brain, or None when it still does."""
    current: list[Trace] = []
    for then in doc["traces"]:
        tid = then["id"]
        try:
            cur = get_trace(brain, tid, include_deleted=True, identity=SYSTEM)
        except NotFound:
            return f"trace {tid} no longer exists"
        if cur.deleted:
            return f"trace {tid} was deleted since it was proposed"
        if cur.content_hash != then["content_hash"]:
            return f"trace {tid} changed since it was proposed (content hash differs)"
        if cur.version != then["version"]:
            return (
                f"trace {tid} changed since it was proposed "
                f"(version {cur.version}, was {then['version']})"
            )
        if doc["kind"] == "prune" and cur.retrieval_count > then["retrieval_count"]:
            return f"trace {tid} was retrieved since it was proposed"
        current.append(cur)
    if doc["kind"] == "merge" and max(current, key=lambda t: t.retrieval_count) is not current[0]:
        return f"trace {current[0].id} is no longer the most retrieved, so it would not survive"
    if doc["kind"] == "conflict" and current[0].superseded_by is not None:
        return f"trace {current[0].id} was superseded by {current[0].superseded_by} since"
    return None


def _apply(conn: Connection, brain: Brain, pid: str, doc: dict[str, Any], now: float) -> str:
    """Apply an accepted proposal, recording what it changed for :func:`undo`."""
    ids = [t["id"] for t in doc["traces"]]
    if doc["kind"] == "conflict":
        older, successor = doc["superseded_id"], doc["successor_id"]
        statement = statement_of(conn, older)
        at = float(doc["traces"][1]["occurred_at"])  # the evidence, checked unchanged
        with changing(conn, pid, doc["kind"], statement, now):
            supersede(conn, statement, successor, at=at)
        return f"{', '.join(statement)} superseded by {successor}"
    if doc["kind"] == "rewrite":
        (old,) = (fetch_trace(conn, tid) for tid in ids)
        assert old is not None  # checked unchanged by _stale_reason
        with changing(conn, pid, doc["kind"], ids, now):
            rewrite_trace(conn, old, doc["rewritten_content"], None, now)
        return f"rewrote {old.id}"
    with changing(conn, pid, doc["kind"], ids, now):
        if doc["kind"] == "prune":
            for tid in ids:
                delete_trace(
                    brain,
                    tid,
                    reason=f"{PRUNED_REASON}: proposal {pid} accepted",
                    now=now,
                    identity=SYSTEM,
                )
            return f"soft-deleted {', '.join(ids)}"
        result = merge_traces(
            brain, ids, merged_content=doc["merged_content"], now=now, identity=SYSTEM
        )
    return f"merged {', '.join(result.deleted_ids)} into {result.survivor_id}"


def undo(
    brain: Brain, settings: Settings, ids: Sequence[str], now: float | None = None
) -> list[Decision]:
    """Reverse accepted proposals: their traces, vectors and index entries as they were.

    One refused (a trace changed since, or not accepted) says why and changes nothing.
    """
    return _decide(brain, settings, ids, _undo_one, now)


def _undo_one(brain: Brain, settings: Settings, pid: str, now: float) -> Decision:
    with brain.transaction() as conn:
        status = status_of(conn, pid)
        if status != "accepted":
            return Decision(pid, "not_accepted", f"it is {status}, not accepted")
        try:
            result = undo_unit(brain, pid, now=now)
        except (Conflict, NotFound) as e:
            return Decision(pid, "stale", str(e))
        set_status(conn, pid, "undone", now)
        nested = conn.in_nested_transaction()
    if not nested and file_path(settings, "accepted", pid).exists():
        move_file(file_path(settings, "accepted", pid), file_path(settings, "undone", pid))
    return Decision(pid, "undone", f"restored {', '.join(result.restored)}")


def expire(brain: Brain, settings: Settings, now: float | None = None) -> list[str]:
    """Move pending proposals past their expiry aside (status expired); never applied."""
    now = time.time() if now is None else now
    with brain.transaction() as conn:
        ids = list(
            conn.execute(
                text(
                    "SELECT id FROM proposals WHERE status = 'pending' "
                    "AND expires_at IS NOT NULL AND expires_at <= :now"
                ),
                {"now": now},
            ).scalars()
        )
        for pid in ids:
            set_status(conn, pid, "expired", now)
        nested = conn.in_nested_transaction()
    if not nested:
        for pid in ids:
            if file_path(settings, "pending", pid).exists():
                move_file(file_path(settings, "pending", pid), file_path(settings, "expired", pid))
    return ids
