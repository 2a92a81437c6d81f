"""Reading proposals: the ledger, a proposal's document, the review list, metrics."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection, text

from memory_core.auth import Identity, acting
from memory_core.brain.db import Brain
from memory_core.errors import InvalidArgument, NotFound
from memory_core.proposals.base import (
    KIND_CHOICES,
    KINDS,
    STATUSES,
    ProposalInfo,
    read_file,
    recover,
    subject_ids,
)
from memory_core.proposals.files import file_path, shown
from memory_core.settings import Settings


def list_proposals(
    brain: Brain,
    settings: Settings,
    status: str = "pending",
    *,
    identity: Identity,
    now: float | None = None,
) -> list[ProposalInfo]:
    """Proposals with this status (or ``"all"``), oldest first.

    An identity pinned to scope ids sees only proposals every one of whose
    traces it can see (the ledger's subject key names them, so an edited file
    cannot widen what is shown).
    """
    within = acting(identity).within
    if status != "all" and status not in STATUSES:
        raise InvalidArgument(f"status must be pending, accepted, rejected or all; got {status!r}")
    now = time.time() if now is None else now
    recover(brain, settings)
    which = "" if status == "all" else "WHERE status = :status "
    query = text(f"SELECT * FROM proposals {which}ORDER BY created_at, rowid")
    with brain.read() as conn:
        rows = conn.execute(query, {"status": status}).all()
        found = [
            ProposalInfo(
                r.id,
                r.kind,
                r.status,
                r.created_at,
                now - r.created_at,
                r.summary,
                r.pass_id,
                subject_ids(r.subject_key),
            )
            for r in rows
        ]
        if within is None:
            return found
        scopes = _scopes(conn, {i for p in found for i in p.trace_ids})
    return [p for p in found if all(i in scopes and within.admits(*scopes[i]) for i in p.trace_ids)]


def _scopes(conn: Connection, trace_ids: Iterable[str]) -> dict[str, tuple[str, str | None]]:
    """The scope and scope id of each of these traces that exists, deleted or not."""
    rows = conn.execute(
        text(
            "SELECT id, scope, scope_id FROM memory_traces "
            "WHERE id IN (SELECT value FROM json_each(:ids))"
        ),
        {"ids": json.dumps(sorted(trace_ids))},
    )
    return {r.id: (r.scope, r.scope_id) for r in rows}


def review(
    brain: Brain,
    settings: Settings,
    status: str = "pending",
    *,
    kind: str | None = None,
    identity: Identity,
    now: float | None = None,
) -> list[dict[str, Any]]:
    """Proposals as a person reviews them: each with its texts, reason and scores.

    A merge carries both traces' texts and the exact result; a prune its
    trace's text, importance and age.  ``kind`` keeps one kind (prune, merge).
    """
    if kind is not None and kind not in KINDS:
        raise InvalidArgument(f"kind must be {KIND_CHOICES}; got {kind!r}")
    now = time.time() if now is None else now
    items: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for info in list_proposals(brain, settings, status, now=now, identity=identity):
        if kind is not None and info.kind != kind:
            continue
        doc = get_proposal(brain, settings, info.id)
        item = info.to_dict()
        item.update(
            reason=doc.get("reason"),
            scores=doc.get("scores", {}),
            edited=doc.get("edited", False),
            traces=[
                {
                    k: t.get(k)
                    for k in ("id", "content", "type", "scope_id", "importance", "occurred_at")
                }
                for t in doc.get("traces", [])
            ],
            confidence=confidence(info.kind, doc.get("scores", {}), settings),
        )
        if info.kind == "merge":
            item["merged_content"] = doc.get("merged_content")
        if info.kind == "rewrite":
            item["rewritten_content"] = doc.get("rewritten_content")
        if info.kind == "conflict":
            item["superseded_id"] = doc.get("superseded_id")
            item["successor_id"] = doc.get("successor_id")
        item["stale"] = False
        items.append((item, doc.get("traces", [])))
    _mark_stale(brain, [(item, traces) for item, traces in items if item["status"] == "pending"])
    return [item for item, _ in items]


def _mark_stale(brain: Brain, pending: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> None:
    """Mark each pending proposal one of whose traces changed (or went) since it was
    made: accepting it would be refused, and a person should see that first."""
    ids = {str(t.get("id")) for _, traces in pending for t in traces}
    if not ids:
        return
    with brain.read() as conn:
        rows = conn.execute(
            text(
                "SELECT id, version FROM memory_traces WHERE deleted = 0 "
                "AND id IN (SELECT value FROM json_each(:ids))"
            ),
            {"ids": json.dumps(sorted(ids))},
        )
        current = {r.id: int(r.version) for r in rows}
    for item, traces in pending:
        item["stale"] = any(current.get(str(t.get("id"))) != t.get("version") for t in traces)


def confidence(kind: str, scores: dict[str, Any], settings: Settings) -> float | None:
    """How sure the pass was, 0 to 1, by the score each kind is decided on: a merge's
    cosine, a conflict's similarity, and for a prune how far below the threshold the
    trace's strength fell (0 at the threshold, 1 at nothing left)."""
    if kind == "merge" and "cosine" in scores:
        return round(float(scores["cosine"]), 4)
    if kind == "conflict" and "similarity" in scores:
        return round(float(scores["similarity"]), 4)
    if kind == "prune" and "strength" in scores and settings.dream_prune_threshold > 0:
        weak = 1.0 - float(scores["strength"]) / settings.dream_prune_threshold
        return round(min(1.0, max(0.0, weak)), 4)
    return None


def get_proposal(brain: Brain, settings: Settings, proposal_id: str) -> dict[str, Any]:
    """The proposal's document, with its status, its file (in the data folder) and whether
    it was edited."""
    recover(brain, settings)
    with brain.read() as conn:
        row = conn.execute(
            text("SELECT * FROM proposals WHERE id = :id"), {"id": proposal_id}
        ).first()
    if row is None:
        raise NotFound(f"no proposal {proposal_id}")
    path = file_path(settings, row.status, row.id)
    data = read_file(path)
    try:
        doc: dict[str, Any] = json.loads(data) if data is not None else {}
    except ValueError:  # edited into something that is not JSON
        doc = {}
    doc.update(
        id=row.id,
        kind=row.kind,
        status=row.status,
        decided_at=row.decided_at,
        file=shown(path),
        edited=data is None or hashlib.sha256(data).hexdigest() != row.file_sha256,
    )
    return doc


def pending_stats(brain: Brain, *, now: float | None = None) -> dict[str, Any]:
    """Pending proposals by kind and the age of the oldest, for metrics."""
    now = time.time() if now is None else now
    with brain.read() as conn:
        rows = conn.execute(
            text(
                "SELECT kind, count(*), min(created_at) FROM proposals "
                "WHERE status = 'pending' GROUP BY kind"
            )
        ).all()
    by_kind = dict.fromkeys(KINDS, 0) | {kind: int(n) for kind, n, _ in rows}
    oldest = min((float(t) for _, _, t in rows), default=None)
    return {
        "pending": sum(by_kind.values()),
        "by_kind": by_kind,
        "oldest_age_seconds": None if oldest is None else max(now - oldest, 0.0),
    }
