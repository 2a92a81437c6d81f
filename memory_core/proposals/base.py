"""What proposals are: drafts, ledger rows, decisions, and crash recovery of their files."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import Connection, text

from memory_core.brain.db import Brain
from memory_core.errors import BrainError, InvalidArgument
from memory_core.proposals.files import TMP_SUFFIX, file_path, move_file, proposal_folder, shown
from memory_core.settings import Settings
from memory_core.traces.model import PRUNED_PREFIX

log = logging.getLogger(__name__)

KINDS = ("prune", "merge", "conflict", "rewrite")
KIND_CHOICES = f"{', '.join(KINDS[:-1])} or {KINDS[-1]}"
STATUSES = ("pending", "accepted", "rejected", "undone", "expired")
DAY = 86_400.0
# What a proposal file records of each trace: enough to judge it, and to refuse it if changed.
EVIDENCE = (
    "id", "content", "content_hash", "version", "type", "scope", "scope_id", "tags",
    "retrieval_count", "strength", "importance", "occurred_at", "created_at",
)  # fmt: skip

Outcome = Literal[
    "applied", "rejected", "stale", "edited", "not_pending", "expired", "undone", "not_accepted"
]
# The deleted_reason an accepted prune leaves: such a trace does not stop the
# same text from being learnt again.
PRUNED_REASON = PRUNED_PREFIX


@dataclass(frozen=True)
class ProposalDraft:
    """A change a pass wants made: ``trace_ids[0]`` survives a merge."""

    kind: str
    trace_ids: list[str]
    reason: str
    scores: dict[str, float]
    summary: str
    merged_content: str | None = None
    rewritten_content: str | None = None  # a rewrite's new text of its one trace

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InvalidArgument(f"proposal kind must be {KIND_CHOICES}; got {self.kind!r}")
        ids = self.trace_ids
        if not ids or not all(isinstance(i, str) and i for i in ids) or len(set(ids)) != len(ids):
            raise InvalidArgument("a proposal needs distinct, non-empty trace ids")
        if self.kind == "merge" and len(ids) < 2:
            raise InvalidArgument("a merge proposal needs at least two trace ids")
        if self.kind == "conflict" and len(ids) != 2:
            raise InvalidArgument("a conflict proposal names two traces, the earlier first")
        if self.kind == "rewrite" and (len(ids) != 1 or not (self.rewritten_content or "").strip()):
            raise InvalidArgument("a rewrite proposal names one trace and its new text")
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


def subject_ids(key: str) -> list[str]:
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
            if status_of(conn, pid) is None:
                tmp.unlink(missing_ok=True)
                done.removed.append(pid)
            elif move_file(tmp, file_path(settings, "pending", pid)):
                done.renamed.append(pid)
        for path in sorted(pending.glob("prop_*.json")):
            status = status_of(conn, path.stem)
            if status in ("accepted", "rejected", "expired", "undone") and move_file(
                path, file_path(settings, status, path.stem)
            ):
                done.moved.append(path.stem)
        for path in sorted(proposal_folder(settings, "accepted").glob("prop_*.json")):
            if status_of(conn, path.stem) == "undone" and move_file(
                path, file_path(settings, "undone", path.stem)
            ):
                done.moved.append(path.stem)
    if done.renamed or done.removed or done.moved:
        log.warning("proposals recovered: %s", done)
    return done


def status_of(conn: Connection, proposal_id: str) -> str | None:
    found = conn.execute(text("SELECT status FROM proposals WHERE id = :id"), {"id": proposal_id})
    return found.scalar()


def set_status(conn: Connection, pid: str, status: str, now: float) -> None:
    conn.execute(
        text("UPDATE proposals SET status = :status, decided_at = :now WHERE id = :id"),
        {"status": status, "now": now, "id": pid},
    )


def read_file(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise BrainError(f"cannot read proposal file {shown(path)}: {e.strerror}") from e
