"""Filing proposals: which drafts are new, and the file plus ledger row of each."""

from __future__ import annotations

import hashlib
import json
import logging
import time
import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Text, bindparam, text

from memory_core.auth import SYSTEM
from memory_core.brain.db import Brain
from memory_core.errors import BrainError, NotFound
from memory_core.proposals.base import (
    DAY,
    EVIDENCE,
    ProposalDraft,
    recover,
    subject_ids,
    subject_key,
)
from memory_core.proposals.files import (
    file_path,
    move_file,
    proposal_folder,
    shown,
    sync_folder,
    tmp_file,
    write_synced,
)
from memory_core.settings import Settings
from memory_core.traces.model import Trace
from memory_core.traces.store import get_trace

log = logging.getLogger(__name__)


_SUBJECTS = text(
    "SELECT subject_key, status, decided_at, versions FROM proposals "
    "WHERE subject_key IN :keys AND status IN ('pending', 'rejected', 'undone')"
).bindparams(bindparam("keys", expanding=True, type_=Text))
_INSERT = text(
    "INSERT INTO proposals (id, kind, status, pass_id, subject_key, file_sha256, summary, "
    "created_at, versions, expires_at) VALUES (:id, :kind, :status, :pass_id, :subject_key, "
    ":file_sha256, :summary, :created_at, :versions, :expires_at)"
)


def filter_new(
    brain: Brain, settings: Settings, drafts: Sequence[ProposalDraft], now: float | None = None
) -> list[ProposalDraft]:
    """Drop drafts already pending, rejected within the cooldown, or repeated."""
    with brain.read() as conn:
        return _filter_new(conn, settings, drafts, time.time() if now is None else now)


def _filter_new(
    conn: Connection, settings: Settings, drafts: Sequence[ProposalDraft], now: float
) -> list[ProposalDraft]:
    """Drop drafts pending already, or refused (rejected, undone) while their traces are
    unchanged since -- and, once changed, until the cooldown has passed."""
    keys = {subject_key(d.kind, d.trace_ids) for d in drafts}
    if not keys:
        return []
    cutoff = now - settings.proposal_reject_cooldown_days * DAY
    rows = conn.execute(_SUBJECTS, {"keys": sorted(keys)}).all()
    versions = _current_versions(conn, {i for r in rows for i in subject_ids(r.subject_key)})
    blocked = set()
    for r in rows:
        if r.status == "pending":
            blocked.add(r.subject_key)
            continue
        then = json.loads(r.versions) if r.versions else None
        unchanged = then is not None and all(versions.get(t) == v for t, v in then.items())
        if unchanged or (r.decided_at is not None and r.decided_at > cutoff):
            blocked.add(r.subject_key)
    kept = []
    for d in drafts:
        key = subject_key(d.kind, d.trace_ids)
        if key not in blocked:
            blocked.add(key)  # the same change twice in one batch: keep the first
            kept.append(d)
    return kept


def _current_versions(conn: Connection, trace_ids: Iterable[str]) -> dict[str, int]:
    rows = conn.execute(
        text(
            "SELECT id, version FROM memory_traces WHERE deleted = 0 "
            "AND id IN (SELECT value FROM json_each(:ids))"
        ),
        {"ids": json.dumps(sorted(trace_ids))},
    )
    return {r.id: int(r.version) for r in rows}


def pending_room(brain: Brain, settings: Settings) -> int:
    """How many more proposals may be pending (``REVERIE_DREAM_MAX_PENDING``)."""
    with brain.read() as conn:
        pending = conn.execute(
            text("SELECT count(*) FROM proposals WHERE status = 'pending'")
        ).scalar_one()
    return max(settings.dream_max_pending - int(pending), 0)


def create_proposals(
    brain: Brain,
    settings: Settings,
    drafts: Sequence[ProposalDraft],
    pass_id: str | None,
    now: float | None = None,
) -> list[str]:
    """File each new draft as a proposal; returns the new proposal ids.

    Drafts :func:`filter_new` would drop are dropped, and so is any draft that
    names a missing or deleted trace, or a merge whose first trace is no longer
    the one :func:`~memory_core.traces.merge.merge_traces` would keep.
    """
    if not drafts:
        return []
    now = time.time() if now is None else now
    recover(brain, settings)
    folder = proposal_folder(settings, "pending")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BrainError(f"cannot create {shown(folder)}: {e.strerror}") from e
    written: list[tuple[str, Path]] = []
    try:
        with brain.transaction() as conn:
            nested = conn.in_nested_transaction()
            rows = []
            for draft in _filter_new(conn, settings, drafts, now):
                traces = _evidence(brain, draft)
                if traces is None:
                    continue
                pid = f"prop_{uuid.uuid4()}"
                data = _document_bytes(pid, draft, traces, pass_id, now)
                written.append((pid, tmp_file(settings, pid)))
                write_synced(written[-1][1], data)
                rows.append(_ledger_row(pid, draft, traces, pass_id, data, now, settings))
            if rows:
                sync_folder(folder)  # the temporary names outlive a crash after the commit
                conn.execute(_INSERT, rows)
    except BaseException:
        for _, tmp in written:  # the rows were rolled back: no row, no file
            tmp.unlink(missing_ok=True)
        raise
    if not nested:
        for pid, tmp in written:
            move_file(tmp, file_path(settings, "pending", pid))
    return [pid for pid, _ in written]


def _evidence(brain: Brain, draft: ProposalDraft) -> list[Trace] | None:
    traces = []
    for trace_id in draft.trace_ids:
        try:
            traces.append(get_trace(brain, trace_id, identity=SYSTEM))
        except NotFound:
            log.info("%s proposal dropped: trace %s is gone", draft.kind, trace_id)
            return None
    if draft.kind == "conflict" and not traces[0].occurred_at < traces[1].occurred_at:
        log.warning("conflict proposal dropped: %s was not said first", traces[0].id)
        return None
    if draft.kind == "merge" and max(traces, key=lambda t: t.retrieval_count) is not traces[0]:
        log.warning("merge proposal dropped: %s is not its most retrieved trace", traces[0].id)
        return None
    return traces


def _document_bytes(
    pid: str, draft: ProposalDraft, traces: list[Trace], pass_id: str | None, now: float
) -> bytes:
    doc: dict[str, Any] = {
        "id": pid,
        "kind": draft.kind,
        "created_at": datetime.fromtimestamp(now, UTC).isoformat(),
        "pass_id": pass_id,
        "summary": " ".join(draft.summary.split()),
        "reason": draft.reason,
        "scores": {k: float(v) for k, v in draft.scores.items()},
        "subject_key": subject_key(draft.kind, draft.trace_ids),
        "traces": [{k: getattr(t, k) for k in EVIDENCE} for t in traces],
    }
    if draft.kind == "merge":
        doc["survivor_id"] = traces[0].id
        doc["merged_content"] = draft.merged_content or traces[0].content
    if draft.kind == "conflict":
        doc["superseded_id"], doc["successor_id"] = traces[0].id, traces[1].id
    if draft.kind == "rewrite":
        doc["rewritten_content"] = draft.rewritten_content
    doc["how_to_decide"] = (
        f"memctl proposals accept {pid}  or  memctl proposals reject {pid}; "
        "do not edit this file (an edited proposal is refused)"
    )
    return (json.dumps(doc, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode()


def _ledger_row(
    pid: str,
    draft: ProposalDraft,
    traces: list[Trace],
    pass_id: str | None,
    data: bytes,
    now: float,
    settings: Settings,
) -> dict[str, Any]:
    return {
        "versions": json.dumps({t.id: t.version for t in traces}),
        "expires_at": now + settings.proposal_expire_days * DAY,
        "id": pid,
        "kind": draft.kind,
        "status": "pending",
        "pass_id": pass_id,
        "subject_key": subject_key(draft.kind, draft.trace_ids),
        "file_sha256": hashlib.sha256(data).hexdigest(),
        "summary": " ".join(draft.summary.split()),
        "created_at": now,
    }
