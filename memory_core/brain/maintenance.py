"""Brain health: statistics for operators and the checks behind `memctl doctor`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import text

from memory_core.brain.db import Brain, current_revision, head_revision
from memory_core.brain.schema import FTS_TABLE, SCOPES, TRACE_TYPES
from memory_core.errors import BrainError
from memory_core.textutil import content_hash


def stats(brain: Brain) -> dict[str, Any]:
    """Counts by type, scope and deletion, embeddings, inbox, and file sizes."""
    with brain.read() as conn:

        def grouped(column: str) -> dict[str, int]:
            rows = conn.execute(
                text(
                    f"SELECT {column}, count(*) FROM memory_traces WHERE deleted = 0 "
                    f"GROUP BY {column} ORDER BY {column}"
                )
            ).all()
            return {str(k): int(n) for k, n in rows}

        total, deleted = conn.execute(
            text("SELECT count(*), coalesce(sum(deleted), 0) FROM memory_traces")
        ).one()
        embedded = conn.execute(
            text(
                "SELECT count(DISTINCT e.trace_id) FROM trace_embeddings e "
                "JOIN memory_traces t ON t.id = e.trace_id WHERE t.deleted = 0"
            )
        ).scalar_one()
        inbox: dict[str, int] = {
            str(status): int(n)
            for status, n in conn.execute(
                text("SELECT status, count(*) FROM inbox_turns GROUP BY status")
            ).all()
        }
        return {
            "brain": brain.where,
            "brain_id": brain.brain_id,
            "traces": {
                "active": int(total) - int(deleted),
                "deleted": int(deleted),
                "by_type": grouped("type"),
                "by_scope": grouped("scope"),
            },
            "embeddings": {"active_traces_embedded": int(embedded)},
            "inbox": inbox,
            "files": brain.file_sizes(),
            "schema_revision": current_revision(conn),
        }


@dataclass(frozen=True)
class Problem:
    check: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"check": self.check, "detail": self.detail}


MAX_LISTED = 20


def doctor(brain: Brain) -> list[Problem]:
    """Every problem found; an empty list means the brain is healthy.

    Checks SQLite's integrity and foreign keys (orphan embeddings, edges), the
    full-text index against the traces, the schema revision, stored hashes
    against contents, and that JSON columns and enums hold valid values.
    """
    problems: list[Problem] = []
    with brain.read() as conn:
        # PostgreSQL checks its own pages and enforces the foreign keys on every write.
        if brain.dialect == "sqlite":
            problems.extend(_check_file(conn))
        rev = current_revision(conn)
        if rev != head_revision():
            problems.append(Problem("schema", f"revision {rev}, expected {head_revision()}"))
        problems.extend(_check_rows(conn))
    problems.extend(_check_fts(brain))
    return problems


def _check_file(conn: Any) -> list[Problem]:
    problems = []
    for (msg,) in conn.execute(text("PRAGMA integrity_check")).all():
        if msg != "ok":
            problems.append(Problem("integrity", str(msg)))
    for row in conn.execute(text("PRAGMA foreign_key_check")).all()[:MAX_LISTED]:
        problems.append(
            Problem("orphans", f"{row[0]} row {row[1]} points at a missing {row[2]} row")
        )
    return problems


def _check_rows(conn: Any) -> list[Problem]:
    problems = []
    types = ", ".join(f"'{t}'" for t in TRACE_TYPES)
    scopes = ", ".join(f"'{s}'" for s in SCOPES)
    bad = conn.execute(
        text(
            "SELECT id FROM memory_traces WHERE "
            f"type NOT IN ({types}) OR scope NOT IN ({scopes}) OR "
            "json_valid(tags) = 0 OR json_type(tags) != 'array' OR "
            "json_valid(metadata) = 0 OR json_type(metadata) != 'object' OR "
            "json_valid(sources) = 0 OR json_type(sources) != 'array' "
            f"LIMIT {MAX_LISTED}"
        )
    ).all()
    problems += [
        Problem("rows", f"trace {r[0]} has an invalid type, scope or JSON column") for r in bad
    ]
    mismatched = 0
    for trace_id, content, stored in conn.execute(
        text("SELECT id, content, content_hash FROM memory_traces")
    ):
        if content_hash(content) != stored:
            mismatched += 1
            if mismatched <= MAX_LISTED:
                problems.append(Problem("hashes", f"trace {trace_id}: content_hash does not match"))
    return problems


def _check_fts(brain: Brain) -> list[Problem]:
    """FTS5's own integrity check, comparing the index with the traces table."""
    try:
        with brain.transaction() as conn:
            conn.execute(
                text(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rank) VALUES ('integrity-check', 1)")
            )
    except BrainError as e:
        if "malformed" not in str(e):
            raise
        return [Problem("fts", "full-text index does not match the traces (memctl reindex)")]
    return []


def rebuild_fts(brain: Brain) -> None:
    """Rebuild the full-text index from the traces table."""
    with brain.transaction() as conn:
        conn.execute(text(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')"))
