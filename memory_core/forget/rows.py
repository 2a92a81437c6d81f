"""Forgetting in the brain's tables: every row that holds a forgotten scope id's words.

Each function runs inside the one write transaction of
:func:`memory_core.forget.forget_scope_id`.  Rows about a forgotten trace go
(its vectors, archived vectors, judgements, said vectors, journal entries with
their before-images, supersession notes, edges, the trace itself); rows that
also hold other things lose only what names it (the retrieval log, the merge
step's carried pairs, the pass reports).  The vector change log is emptied, its
floor raised past every event, so that each process's vector index and graph
is rebuilt from what is left rather than catching up around the forgotten.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from sqlalchemy import Connection, text

from memory_core.brain.db import read_meta, write_meta
from memory_core.brain.schema import FTS_TABLE
from memory_core.consolidation.merge import BACKLOG_KEY, CARRY_KEY
from memory_core.forget.redact import names_any, redact_report
from memory_core.proposals.base import subject_ids
from memory_core.retrieval.events import EVENTS_FLOOR_KEY, last_event
from memory_core.traces.store import fts_delete

# Tables keyed by a trace's id that hold something of it (FKs cascade these too; the
# deletes are spelled out so that nothing rests on a backend's cascade).
_ABOUT_TRACE = (
    "trace_embeddings",
    "vector_archive",
    "trace_judgements",
    "said_embeddings",
    "supersession_pending",
    "supersession_refusals",
    "undo_log",
)
_REPORTS_AT_ONCE = 50


@dataclass(frozen=True)
class Removed:
    """What :func:`remove_traces` took out."""

    trace_ids: list[str]
    vectors: int
    edges: int


_OF_SCOPE_ID = "WHERE scope_id = :sid AND (CAST(:scope AS TEXT) IS NULL OR scope = :scope)"


def trace_ids(conn: Connection, scope_id: str, scope: str | None) -> list[str]:
    """The ids of the scope id's traces, deleted or not."""
    found = conn.execute(
        text(f"SELECT id FROM memory_traces {_OF_SCOPE_ID}"), {"sid": scope_id, "scope": scope}
    )
    return [str(r[0]) for r in found]


def remove_traces(conn: Connection, scope_id: str, scope: str | None) -> Removed:
    """The scope id's traces (deleted or not) and every row about them."""
    rows = conn.execute(
        text(f"SELECT id, seq, content, tags, context FROM memory_traces {_OF_SCOPE_ID}"),
        {"sid": scope_id, "scope": scope},
    ).all()
    ids = [r.id for r in rows]
    for r in rows:
        fts_delete(conn, r.seq, r.content, r.tags, r.context)
    vectors = _count(conn, "trace_embeddings", "trace_id", ids)
    edges = _delete_edges(conn, ids)
    for table in _ABOUT_TRACE:
        delete_in(conn, table, "trace_id", ids)
    _scrub_retrievals(conn, set(ids))
    delete_in(conn, "memory_traces", "id", ids)
    return Removed(ids, vectors, edges)


def remove_turns(conn: Connection, scope_id: str, scope: str | None) -> int:
    """The inbox rows of the scope id's turns, whatever their state."""
    return int(
        conn.execute(
            text(
                "DELETE FROM inbox_turns WHERE json_extract(payload, '$.scope_id') = :sid "
                "AND (CAST(:scope AS TEXT) IS NULL OR json_extract(payload, '$.scope') = :scope)"
            ),
            {"sid": scope_id, "scope": scope},
        ).rowcount
    )


def proposals_naming(conn: Connection, ids: Collection[str]) -> set[str]:
    """The ledger's proposals (any status) about one of ``ids``."""
    wanted = set(ids)
    if not wanted:
        return set()
    rows = conn.execute(text("SELECT id, subject_key FROM proposals")).all()
    return {str(r.id) for r in rows if wanted.intersection(subject_ids(r.subject_key))}


def redact_pass_reports(conn: Connection, ids: Collection[str]) -> int:
    """Drop from each pass report the brain keeps what names ``ids``; how many changed."""
    changed = 0
    after = ""
    while True:
        batch = conn.execute(
            text(
                "SELECT id, report FROM consolidation_log WHERE id > :after "
                "AND report IS NOT NULL ORDER BY id LIMIT :n"
            ),
            {"after": after, "n": _REPORTS_AT_ONCE},
        ).all()
        if not batch:
            return changed
        for pass_id, raw in batch:
            doc = json.loads(raw)
            if redact_report(doc, ids):
                conn.execute(
                    text("UPDATE consolidation_log SET report = :r WHERE id = :id"),
                    {"r": json.dumps(doc, ensure_ascii=False), "id": pass_id},
                )
                changed += 1
        after = str(batch[-1][0])


def scrub_merge_state(conn: Connection, ids: Collection[str]) -> None:
    """Drop forgotten traces from the pairs and backlog the merge step carries over."""
    for key in (CARRY_KEY, BACKLOG_KEY):
        raw = read_meta(conn, key)
        if raw is None:
            continue
        listed = json.loads(raw)
        kept = [v for v in listed if not names_any(v, ids)]
        if len(kept) < len(listed):
            write_meta(conn, key, json.dumps(kept))


def restart_vector_log(conn: Connection) -> None:
    """Empty the vector change log and raise its floor past every event: every vector
    index and saved graph made before is rebuilt, so none keeps a forgotten vector."""
    last = last_event(conn)
    conn.execute(text("DELETE FROM embedding_events"))
    if last:
        write_meta(conn, EVENTS_FLOOR_KEY, str(last))


def optimize_index(conn: Connection) -> None:
    """Merge the full-text index's segments: deleted entries leave its pages."""
    conn.execute(text(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('optimize')"))


def delete_in(conn: Connection, table: str, column: str, values: Iterable[str]) -> None:
    for chunk in _chunks(list(values)):
        marks, params = _marks(chunk)
        conn.execute(text(f"DELETE FROM {table} WHERE {column} IN ({marks})"), params)


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


def _delete_edges(conn: Connection, ids: list[str]) -> int:
    removed = 0
    for chunk in _chunks(ids):
        marks, params = _marks(chunk)
        removed += conn.execute(
            text(f"DELETE FROM coactivation_edges WHERE a IN ({marks}) OR b IN ({marks})"), params
        ).rowcount
    return removed


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


def _chunks(values: list[str], size: int = 500) -> list[list[str]]:
    return [values[k : k + size] for k in range(0, len(values), size)]


def _marks(chunk: list[str]) -> tuple[str, dict[str, str]]:
    params = {f"v{k}": v for k, v in enumerate(chunk)}
    return ", ".join(f":{k}" for k in params), params
