"""Forgetting a scope id for good: a right-to-be-forgotten request.

Unlike a delete (a soft delete, undoable), this removes every row that holds
anything of the scope id from the brain file: its traces (deleted or not),
their vectors and archived vectors, their full-text entries, co-activation
edges, judgements and undo before-images, the inbox rows of its turns, the
proposals naming its traces (ledger rows and files), and its trace ids from
the retrieval log.  SQLite's ``secure_delete`` zeroes the freed pages, the
full-text index is merged and the write-ahead log truncated, so the words are
not left in the file either.  Only the ids of the deleted vectors stay in
the vector change log, for a while, so that every process drops them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import Connection, text

from memory_core.auth import DELETE, Identity, acting
from memory_core.brain.db import Brain
from memory_core.brain.schema import FTS_TABLE
from memory_core.errors import Forbidden, InvalidArgument
from memory_core.proposals import STATUSES
from memory_core.proposals.files import proposal_folder
from memory_core.settings import Settings
from memory_core.traces.model import check_scope
from memory_core.traces.store import fts_delete


@dataclass(frozen=True)
class Forgotten:
    """What forgetting one scope id removed."""

    scope: str | None
    scope_id: str
    traces: int
    vectors: int
    turns: int
    edges: int
    proposals: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def forget_scope_id(
    brain: Brain, settings: Settings, scope_id: str, *, scope: str | None = None, identity: Identity
) -> Forgotten:
    """Remove everything of ``scope_id`` (of ``scope`` only, when given) for good.

    An identity pinned to scope ids may forget only its own.
    """
    within = acting(identity, DELETE).within
    if not scope_id:
        raise InvalidArgument("scope_id: required")
    if scope is not None:
        check_scope(scope)
    if within is not None and scope_id not in within:
        raise Forbidden(f"may forget only scope ids {', '.join(sorted(within))}")
    with brain.transaction() as conn:
        if brain.dialect == "sqlite":  # PostgreSQL's VACUUM, below, does this
            conn.exec_driver_sql("PRAGMA secure_delete = ON")
        rows = conn.execute(
            text(
                "SELECT id, seq, content, tags, context FROM memory_traces "
                "WHERE scope_id = :sid AND (CAST(:scope AS TEXT) IS NULL OR scope = :scope)"
            ),
            {"sid": scope_id, "scope": scope},
        ).all()
        ids = [r.id for r in rows]
        for r in rows:
            fts_delete(conn, r.seq, r.content, r.tags, r.context)
        vectors = _count(conn, "trace_embeddings", "trace_id", ids)
        edges = _edges(conn, ids)
        for table in ("undo_log", "trace_judgements", "said_embeddings", "vector_archive"):
            _delete_in(conn, table, "trace_id", ids)
        _scrub_retrievals(conn, set(ids))
        proposal_ids = _proposals_naming(conn, set(ids))
        _delete_in(conn, "proposals", "id", proposal_ids)
        _delete_in(conn, "memory_traces", "id", ids)  # vectors and edges go with them
        turns = conn.execute(
            text(
                "DELETE FROM inbox_turns WHERE json_extract(payload, '$.scope_id') = :sid "
                "AND (CAST(:scope AS TEXT) IS NULL OR json_extract(payload, '$.scope') = :scope)"
            ),
            {"sid": scope_id, "scope": scope},
        ).rowcount
    for proposal_id in proposal_ids:
        for status in STATUSES:
            (proposal_folder(settings, status) / f"{proposal_id}.json").unlink(missing_ok=True)
    with brain.transaction() as conn:
        conn.execute(text(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('optimize')"))
    if brain.dialect == "sqlite":  # the erased pages leave the write-ahead log too
        with brain.engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    else:  # dead rows leave the table files
        with brain.engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT")
            for table in _ERASED_TABLES:
                conn.exec_driver_sql(f"VACUUM {table}")
    return Forgotten(scope, scope_id, len(ids), vectors, turns, edges, len(proposal_ids))


_ERASED_TABLES = (
    "memory_traces",
    "memory_traces_fts",
    "trace_embeddings",
    "vector_archive",
    "said_embeddings",
    "inbox_turns",
    "undo_log",
)


def _count(conn: Connection, table: str, column: str, values: list[str]) -> int:
    total = 0
    for chunk in _chunks(values):
        marks, params = _marks(chunk)
        total += int(
            conn.execute(
                text(f"SELECT count(*) FROM {table} WHERE {column} IN ({marks})"), params
            ).scalar_one()
        )
    return total


def _edges(conn: Connection, ids: list[str]) -> int:
    removed = 0
    for chunk in _chunks(ids):
        marks, params = _marks(chunk)
        removed += conn.execute(
            text(f"DELETE FROM coactivation_edges WHERE a IN ({marks}) OR b IN ({marks})"), params
        ).rowcount
    return removed


def _delete_in(conn: Connection, table: str, column: str, values: list[str]) -> None:
    for chunk in _chunks(values):
        marks, params = _marks(chunk)
        conn.execute(text(f"DELETE FROM {table} WHERE {column} IN ({marks})"), params)


def _scrub_retrievals(conn: Connection, ids: set[str]) -> None:
    """Drop the forgotten ids from the retrieval log (an event left empty goes)."""
    if not ids:
        return
    for event_id, raw in conn.execute(text("SELECT id, trace_ids FROM retrieval_events")).all():
        listed = json.loads(raw)
        kept = [t for t in listed if t not in ids]
        if len(kept) == len(listed):
            continue
        if kept:
            conn.execute(
                text("UPDATE retrieval_events SET trace_ids = :t WHERE id = :id"),
                {"t": json.dumps(kept), "id": event_id},
            )
        else:
            conn.execute(text("DELETE FROM retrieval_events WHERE id = :id"), {"id": event_id})


def _proposals_naming(conn: Connection, ids: set[str]) -> list[str]:
    if not ids:
        return []
    found = []
    for proposal_id, key in conn.execute(text("SELECT id, subject_key FROM proposals")).all():
        named = set(key.partition(":")[2].split(","))
        if named & ids:
            found.append(proposal_id)
    return found


def _chunks(values: list[str], size: int = 500) -> list[list[str]]:
    return [values[k : k + size] for k in range(0, len(values), size)]


def _marks(chunk: list[str]) -> tuple[str, dict[str, str]]:
    params = {f"v{k}": v for k, v in enumerate(chunk)}
    return ", ".join(f":{k}" for k in params), params
