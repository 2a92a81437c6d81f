"""Proposals: the deletions and lossy merges a dream pass may not apply itself.

A pass files each one as a JSON document under ``DATA_DIR/proposals/pending/``
holding its evidence (the traces as they were, with content hashes and
versions), plus a row in the ``proposals`` ledger holding the file's SHA-256.
A person accepts or rejects it; accepting applies it with compare-and-set, so
a proposal whose traces changed since, or whose file was edited, is refused.

The ledger row is the truth and the file follows it.  A file is written under
a temporary name, the row is committed, then the file is renamed into place;
a decision is committed, then the file moves to ``accepted/`` or
``rejected/``.  :func:`recover` finishes whatever a crash interrupted, so a
proposal file is never visible without its row.  Called inside an outer
transaction, these functions leave file moves to the next :func:`recover`,
because until that transaction commits the rows they follow may still vanish.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import Connection, func, insert, literal_column, select, text, update

from memory_core.db import Brain
from memory_core.errors import BrainError, Conflict, InvalidArgument, NotFound
from memory_core.proposal_files import (
    TMP_SUFFIX,
    file_path,
    move_file,
    proposal_folder,
    sync_folder,
    tmp_file,
    write_synced,
)
from memory_core.schema import proposals as ledger
from memory_core.settings import Settings
from memory_core.trace_merge import merge_traces
from memory_core.traces import Trace, Within, delete_trace, get_trace
from memory_core.undo import changing, undo_unit

log = logging.getLogger(__name__)

KINDS = ("prune", "merge")
STATUSES = ("pending", "accepted", "rejected", "undone", "expired")
DAY = 86_400.0
# What a proposal file records of each trace: enough to judge it, and to refuse it if changed.
_EVIDENCE = (
    "id", "content", "content_hash", "version", "type", "scope", "scope_id", "tags",
    "retrieval_count", "strength",
)  # fmt: skip

Outcome = Literal[
    "applied", "rejected", "stale", "edited", "not_pending", "expired", "undone", "not_accepted"
]
# The deleted_reason an accepted prune leaves: such a trace does not stop the
# same text from being learnt again.
PRUNED_REASON = "pruned"
_DecideOne = Callable[[Brain, Settings, str, float], "Decision"]


@dataclass(frozen=True)
class ProposalDraft:
    """A change a pass wants made: ``trace_ids[0]`` survives a merge."""

    kind: str
    trace_ids: list[str]
    reason: str
    scores: dict[str, float]
    summary: str
    merged_content: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InvalidArgument(f"proposal kind must be prune or merge; got {self.kind!r}")
        ids = self.trace_ids
        if not ids or not all(isinstance(i, str) and i for i in ids) or len(set(ids)) != len(ids):
            raise InvalidArgument("a proposal needs distinct, non-empty trace ids")
        if self.kind == "merge" and len(ids) < 2:
            raise InvalidArgument("a merge proposal needs at least two trace ids")
        if not " ".join(self.summary.split()):
            raise InvalidArgument("a proposal needs a summary")
        if not all(isinstance(v, int | float) and math.isfinite(v) for v in self.scores.values()):
            raise InvalidArgument("proposal scores must be finite numbers")
        if self.merged_content is not None and not self.merged_content.strip():
            raise InvalidArgument("merged_content must not be empty")


@dataclass(frozen=True)
class ProposalInfo:
    """One ledger row, as listed."""

    id: str
    kind: str
    status: str
    created_at: float
    age_seconds: float
    summary: str
    pass_id: str | None
    trace_ids: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Decision:
    """What accepting or rejecting one proposal did, and why."""

    id: str
    outcome: Outcome
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Recovery:
    """What :func:`recover` finished: ids renamed, temporary files removed, files moved."""

    renamed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)


def subject_key(kind: str, trace_ids: Iterable[str]) -> str:
    """The change a proposal is about, whatever order its traces are named in."""
    return f"{kind}:{','.join(sorted(trace_ids))}"


def _subject_ids(key: str) -> list[str]:
    """The trace ids a :func:`subject_key` names (sorted)."""
    return [i for i in key.partition(":")[2].split(",") if i]


def recover(brain: Brain, settings: Settings) -> Recovery:
    """Finish file renames and moves a crash interrupted; remove orphan temp files.

    Runs under the brain's write lock, so a creator's temporary files (written
    while it holds that lock) are never mistaken for orphans.  Does nothing
    inside an outer transaction, whose rows are not committed yet.
    """
    done = Recovery()
    pending = proposal_folder(settings, "pending")
    if not pending.is_dir():
        return done
    with brain.transaction() as conn:
        if conn.in_nested_transaction():
            return done
        for tmp in sorted(pending.glob(f".prop_*{TMP_SUFFIX}")):
            pid = tmp.name[1 : -len(TMP_SUFFIX)]
            if _status(conn, pid) is None:
                tmp.unlink(missing_ok=True)
                done.removed.append(pid)
            elif move_file(tmp, file_path(settings, "pending", pid)):
                done.renamed.append(pid)
        for path in sorted(pending.glob("prop_*.json")):
            status = _status(conn, path.stem)
            if status in ("accepted", "rejected", "expired", "undone") and move_file(
                path, file_path(settings, status, path.stem)
            ):
                done.moved.append(path.stem)
        for path in sorted(proposal_folder(settings, "accepted").glob("prop_*.json")):
            if _status(conn, path.stem) == "undone" and move_file(
                path, file_path(settings, "undone", path.stem)
            ):
                done.moved.append(path.stem)
    if done.renamed or done.removed or done.moved:
        log.warning("proposals recovered: %s", done)
    return done


def _status(conn: Connection, proposal_id: str) -> str | None:
    return conn.execute(select(ledger.c.status).where(ledger.c.id == proposal_id)).scalar()


# -- creating ----------------------------------------------------------------


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
    rows = conn.execute(
        select(ledger.c.subject_key, ledger.c.status, ledger.c.decided_at, ledger.c.versions).where(
            ledger.c.subject_key.in_(keys),
            ledger.c.status.in_(("pending", "rejected", "undone")),
        )
    ).all()
    versions = _current_versions(conn, {i for r in rows for i in _subject_ids(r.subject_key)})
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
            select(func.count()).select_from(ledger).where(ledger.c.status == "pending")
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
    the one :func:`~memory_core.trace_merge.merge_traces` would keep.
    """
    if not drafts:
        return []
    now = time.time() if now is None else now
    recover(brain, settings)
    folder = proposal_folder(settings, "pending")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BrainError(f"cannot create {folder}: {e}") from e
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
                conn.execute(insert(ledger), rows)
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
            traces.append(get_trace(brain, trace_id))
        except NotFound:
            log.info("%s proposal dropped: trace %s is gone", draft.kind, trace_id)
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
        "traces": [{k: getattr(t, k) for k in _EVIDENCE} for t in traces],
    }
    if draft.kind == "merge":
        doc["survivor_id"] = traces[0].id
        doc["merged_content"] = draft.merged_content or traces[0].content
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


# -- reading -----------------------------------------------------------------


def list_proposals(
    brain: Brain,
    settings: Settings,
    status: str = "pending",
    *,
    now: float | None = None,
    within: Within = None,
) -> list[ProposalInfo]:
    """Proposals with this status (or ``"all"``), oldest first.

    ``within``: the scope ids the caller is confined to; only proposals every
    one of whose traces it can see are listed (the ledger's subject key names
    them, so an edited file cannot widen what is shown).
    """
    if status != "all" and status not in STATUSES:
        raise InvalidArgument(f"status must be pending, accepted, rejected or all; got {status!r}")
    now = time.time() if now is None else now
    recover(brain, settings)
    query = select(ledger).order_by(ledger.c.created_at, literal_column("rowid"))
    if status != "all":
        query = query.where(ledger.c.status == status)
    with brain.read() as conn:
        rows = conn.execute(query).all()
        found = [
            ProposalInfo(
                r.id,
                r.kind,
                r.status,
                r.created_at,
                now - r.created_at,
                r.summary,
                r.pass_id,
                _subject_ids(r.subject_key),
            )
            for r in rows
        ]
        if within is None:
            return found
        scope_ids = _scope_ids(conn, {i for p in found for i in p.trace_ids})
    return [p for p in found if all(scope_ids.get(i) in within for i in p.trace_ids)]


def _scope_ids(conn: Connection, trace_ids: Iterable[str]) -> dict[str, str | None]:
    """The scope id of each of these traces that exists, deleted or not."""
    rows = conn.execute(
        text(
            "SELECT id, scope_id FROM memory_traces WHERE id IN (SELECT value FROM json_each(:ids))"
        ),
        {"ids": json.dumps(sorted(trace_ids))},
    )
    return {r.id: r.scope_id for r in rows}


def get_proposal(brain: Brain, settings: Settings, proposal_id: str) -> dict[str, Any]:
    """The proposal's document, with its status, file path and whether it was edited."""
    recover(brain, settings)
    with brain.read() as conn:
        row = conn.execute(select(ledger).where(ledger.c.id == proposal_id)).first()
    if row is None:
        raise NotFound(f"no proposal {proposal_id}")
    path = file_path(settings, row.status, row.id)
    data = _read(path)
    try:
        doc: dict[str, Any] = json.loads(data) if data is not None else {}
    except ValueError:  # edited into something that is not JSON
        doc = {}
    doc.update(
        id=row.id,
        kind=row.kind,
        status=row.status,
        decided_at=row.decided_at,
        file=str(path),
        edited=data is None or hashlib.sha256(data).hexdigest() != row.file_sha256,
    )
    return doc


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise BrainError(f"cannot read proposal file {path}: {e}") from e


def pending_stats(brain: Brain, *, now: float | None = None) -> dict[str, Any]:
    """Pending proposals by kind and the age of the oldest, for metrics."""
    now = time.time() if now is None else now
    with brain.read() as conn:
        rows = conn.execute(
            select(ledger.c.kind, func.count(), func.min(ledger.c.created_at))
            .where(ledger.c.status == "pending")
            .group_by(ledger.c.kind)
        ).all()
    by_kind = dict.fromkeys(KINDS, 0) | {kind: int(n) for kind, n, _ in rows}
    oldest = min((float(t) for _, _, t in rows), default=None)
    return {
        "pending": sum(by_kind.values()),
        "by_kind": by_kind,
        "oldest_age_seconds": None if oldest is None else max(now - oldest, 0.0),
    }


# -- deciding ----------------------------------------------------------------


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


def accept_all(brain: Brain, settings: Settings, now: float | None = None) -> list[Decision]:
    """Accept every pending proposal, oldest first."""
    return accept(brain, settings, [p.id for p in list_proposals(brain, settings)], now)


def reject_all(brain: Brain, settings: Settings, now: float | None = None) -> list[Decision]:
    """Reject every pending proposal, oldest first."""
    return reject(brain, settings, [p.id for p in list_proposals(brain, settings)], now)


def _decide(
    brain: Brain, settings: Settings, ids: Sequence[str], one: _DecideOne, now: float | None
) -> list[Decision]:
    wanted = list(dict.fromkeys(ids))
    recover(brain, settings)
    with brain.read() as conn:
        known = set(conn.execute(select(ledger.c.id).where(ledger.c.id.in_(wanted))).scalars())
    missing = [i for i in wanted if i not in known]
    if missing:
        raise NotFound(f"no proposal {missing[0]}; nothing was decided")
    now = time.time() if now is None else now
    return [one(brain, settings, pid, now) for pid in wanted]


def _reject_one(brain: Brain, settings: Settings, pid: str, now: float) -> Decision:
    with brain.transaction() as conn:
        status = _status(conn, pid)
        if status != "pending":
            return Decision(pid, "not_pending", f"already {status}")
        _set_status(conn, pid, "rejected", now)
        nested = conn.in_nested_transaction()
    if not nested and file_path(settings, "pending", pid).exists():
        move_file(file_path(settings, "pending", pid), file_path(settings, "rejected", pid))
    return Decision(pid, "rejected", "rejected")


def _accept_one(brain: Brain, settings: Settings, pid: str, now: float) -> Decision:
    path = file_path(settings, "pending", pid)
    with brain.transaction() as conn:
        row = conn.execute(select(ledger).where(ledger.c.id == pid)).one()
        if row.status != "pending":
            return Decision(pid, "not_pending", f"already {row.status}")
        data = _read(path)
        if data is None:
            return Decision(pid, "edited", f"its file {path} is missing")
        if hashlib.sha256(data).hexdigest() != row.file_sha256:
            return Decision(pid, "edited", f"its file {path} was edited since it was proposed")
        doc = json.loads(data)
        why = _stale_reason(brain, doc)
        if why is not None:
            return Decision(pid, "stale", why)
        if row.expires_at is not None and row.expires_at <= now:
            return Decision(pid, "expired", "it expired before it was accepted")
        detail = _apply(conn, brain, pid, doc, now)
        _set_status(conn, pid, "accepted", now)
        nested = conn.in_nested_transaction()
    if not nested:
        move_file(path, file_path(settings, "accepted", pid))
    return Decision(pid, "applied", detail)


def _set_status(conn: Connection, pid: str, status: str, now: float) -> None:
    conn.execute(update(ledger).where(ledger.c.id == pid).values(status=status, decided_at=now))


def _stale_reason(brain: Brain, doc: dict[str, Any]) -> str | None:
    """Why the proposal no longer describes the brain, or None when it still does."""
    current: list[Trace] = []
    for then in doc["traces"]:
        tid = then["id"]
        try:
            cur = get_trace(brain, tid, include_deleted=True)
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
    return None


def _apply(conn: Connection, brain: Brain, pid: str, doc: dict[str, Any], now: float) -> str:
    """Apply an accepted proposal, recording what it changed for :func:`undo`."""
    ids = [t["id"] for t in doc["traces"]]
    with changing(conn, pid, doc["kind"], ids, now):
        if doc["kind"] == "prune":
            for tid in ids:
                delete_trace(
                    brain, tid, reason=f"{PRUNED_REASON}: proposal {pid} accepted", now=now
                )
            return f"soft-deleted {', '.join(ids)}"
        result = merge_traces(brain, ids, merged_content=doc["merged_content"], now=now)
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
        status = _status(conn, pid)
        if status != "accepted":
            return Decision(pid, "not_accepted", f"it is {status}, not accepted")
        try:
            result = undo_unit(brain, pid, now=now)
        except (Conflict, NotFound) as e:
            return Decision(pid, "stale", str(e))
        _set_status(conn, pid, "undone", now)
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
                select(ledger.c.id).where(
                    ledger.c.status == "pending",
                    ledger.c.expires_at.is_not(None),
                    ledger.c.expires_at <= now,
                )
            ).scalars()
        )
        for pid in ids:
            _set_status(conn, pid, "expired", now)
        nested = conn.in_nested_transaction()
    if not nested:
        for pid in ids:
            if file_path(settings, "pending", pid).exists():
                move_file(file_path(settings, "pending", pid), file_path(settings, "expired", pid))
    return ids
