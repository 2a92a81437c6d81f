"""A brain copied to another backend (SQLite to PostgreSQL and back), resumable.

Every table a brain keeps is copied row for row -- traces with their sequence
numbers, vectors and the vectors archived for undo, judgements, edges, the
undo log, the inbox, the consolidation log, the proposals' ledger, retrieval
events, tokens and the brain's own id -- in chunks, each committed with a mark
of how far it got, so a copy cut off (a crash, Ctrl-C, a lost connection) goes
on from its last chunk when run again.  What a brain derives is not copied
but made anew on the target: the full-text index and its vocabulary (rebuilt
at the end), the vector change log (written by the target's triggers as the
vectors land), leases (held by running processes of the source alone), and the
judgement cache (asked again when needed).

:func:`digest` hashes what a brain holds, backend-neutrally (numbers by column
type, rows sorted by key), so a copy can be checked against its source.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Float, Integer, LargeBinary, Table, and_, or_, select, text
from sqlalchemy.sql.elements import ColumnElement

from memory_core.brain import schema
from memory_core.brain.db import Brain, read_meta, write_meta
from memory_core.errors import BrainError

CHUNK = 2000  # rows a chunk: one read of the source, one transaction of the target

# The tables copied, parents before children; each read in the order of its key
# (the inbox and the proposals in the order they were written).
COPIED: tuple[Table, ...] = (
    schema.memory_traces,
    schema.trace_embeddings,
    schema.vector_archive,
    schema.trace_judgements,
    schema.said_embeddings,
    schema.supersession_pending,
    schema.supersession_refusals,
    schema.coactivation_edges,
    schema.undo_log,
    schema.inbox_turns,
    schema.consolidation_log,
    schema.proposals,
    schema.retrieval_events,
    schema.tokens,
    schema.tag_predicates,
)
_WRITTEN_ORDER = {"inbox_turns", "proposals"}
# Keys of brain_meta that belong to one brain's running state, not to what it knows.
_OWN_META = ("copy.", "ready.")  # a copy, and readiness's probe write

Progress = Callable[[str, int, int], None]  # (table, rows copied so far, rows in all)


@dataclass
class CopyResult:
    source: str
    target: str
    rows: dict[str, int] = field(default_factory=dict)  # copied now, by table
    resumed: bool = False


def copy_brain(source: Brain, target: Brain, *, progress: Progress | None = None) -> CopyResult:
    """Copy everything ``source`` holds into ``target``, an empty brain (or one this
    copy began), and rebuild the target's full-text index."""
    result = CopyResult(source.where, target.where)
    result.resumed = _claim(source, target)
    totals = sizes(source)
    for table in COPIED:
        done = int(_mark(target, table.name, "rows") or 0)
        if progress:
            progress(table.name, done, totals[table.name])
        for rows, last in _chunks(source, table, _mark(target, table.name, "last")):
            with target.transaction() as conn:
                conn.execute(table.insert(), rows)
                done += len(rows)
                write_meta(conn, f"copy.{table.name}.last", json.dumps(last))
                write_meta(conn, f"copy.{table.name}.rows", str(done))
            result.rows[table.name] = result.rows.get(table.name, 0) + len(rows)
            if progress:
                progress(table.name, done, totals[table.name])
    _finish(source, target)
    return result


def sizes(brain: Brain) -> dict[str, int]:
    """Rows of each copied table: what a copy of ``brain`` has to move."""
    with brain.read() as conn:
        return {t.name: _count(conn, t) for t in COPIED}


def _claim(source: Brain, target: Brain) -> bool:
    """Make ``target`` this copy's (True: it already was, the copy resumes)."""
    with target.transaction() as conn:
        began = read_meta(conn, "copy.source")
        if began is not None and began != source.brain_id:
            raise BrainError(
                f"{target.where} holds an unfinished copy of another brain ({began}); "
                "copy into an empty brain"
            )
        if began is None:
            holding = [t.name for t in COPIED if _count(conn, t)]
            if holding:
                raise BrainError(
                    f"{target.where} is not empty ({', '.join(holding)}); copy into an empty brain"
                )
            write_meta(conn, "copy.source", source.brain_id)
        elif read_meta(conn, "copy.done") is not None:
            raise BrainError(f"{target.where} already holds a finished copy of this brain")
        return began is not None


def _finish(source: Brain, target: Brain) -> None:
    with source.read() as conn:
        meta = [
            (k, v)
            for k, v in conn.execute(text("SELECT key, value FROM brain_meta")).all()
            if not str(k).startswith(_OWN_META)
        ]
    with target.transaction() as conn:
        for key, value in meta:  # the brain id among them: the copy is the same brain
            write_meta(conn, str(key), str(value))
        conn.execute(text(f"INSERT INTO {schema.FTS_TABLE}({schema.FTS_TABLE}) VALUES ('rebuild')"))
        if target.dialect == "postgresql":  # rows came with their numbers: go on after them
            for table, column in (("memory_traces", "seq"), ("undo_log", "id")):
                conn.execute(
                    text(
                        f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                        f"coalesce((SELECT max({column}) FROM {table}), 0) + 1, false)"
                    )
                )
        conn.execute(text("DELETE FROM brain_meta WHERE key LIKE 'copy.%'"))
    target.brain_id = source.brain_id


def _mark(brain: Brain, table: str, what: str) -> Any:
    with brain.read() as conn:
        value = read_meta(conn, f"copy.{table}.{what}")
    if value is None:
        return None
    return json.loads(value) if what == "last" else value


def _count(conn: Connection, table: Table) -> int:
    return int(conn.execute(text(f"SELECT count(*) FROM {table.name}")).scalar_one())


def _chunks(source: Brain, table: Table, after: Any) -> Iterator[tuple[list[dict[str, Any]], Any]]:
    """The rows of ``table`` after the key ``after``, a chunk at a time, with each
    chunk's last key."""
    if table.name in _WRITTEN_ORDER:
        order: list[ColumnElement[Any]] = [text("rowid")]  # type: ignore[list-item]
        key_columns = ["rowid"]
        columns = [*table.columns, text("rowid AS _rowid")]
    else:
        order = list(table.primary_key.columns)
        key_columns = [c.name for c in order]
        columns = list(table.columns)
    while True:
        query = select(*columns).select_from(table).order_by(*order).limit(CHUNK)
        if after is not None:
            query = query.where(_after(table, key_columns, after))
        with source.read() as conn:
            rows = [dict(r._mapping) for r in conn.execute(query)]
        if not rows:
            return
        last = rows[-1]
        if table.name in _WRITTEN_ORDER:
            after = [last.pop("_rowid")]
            for row in rows:
                row.pop("_rowid", None)
        else:
            after = [last[k] for k in key_columns]
        yield rows, after


def _after(table: Table, key_columns: list[str], after: list[Any]) -> ColumnElement[bool]:
    """Rows whose key sorts after ``after`` (keys compared column by column)."""
    if key_columns == ["rowid"]:
        return text("rowid > :after_rowid").bindparams(after_rowid=after[0])  # type: ignore[return-value]
    clauses = []
    for i, name in enumerate(key_columns):
        equal = [table.c[k] == after[j] for j, k in enumerate(key_columns[:i])]
        clauses.append(and_(*equal, table.c[name] > after[i]))
    return or_(*clauses)


# -- digest --------------------------------------------------------------------

DIGESTED: tuple[Table, ...] = (*COPIED, schema.brain_meta)


def digest(brain: Brain) -> str:
    """A hash of what the brain holds (every copied table and its id), the same on
    either backend for the same contents."""
    h = hashlib.sha256()
    with brain.read() as conn:
        for table in DIGESTED:
            rows = [
                tuple(_plain(c, v) for c, v in zip(table.columns, row, strict=True))
                for row in conn.execute(select(*table.columns))
            ]
            if table is schema.brain_meta:
                rows = [r for r in rows if not str(r[0]).startswith(_OWN_META)]
            h.update(table.name.encode())
            for row in sorted(rows, key=repr):
                h.update(repr(row).encode())
    return h.hexdigest()


def _plain(column: Any, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(column.type, Float):
        return float(value)
    if isinstance(column.type, Integer):
        return int(value)
    if isinstance(column.type, LargeBinary):
        return bytes(value).hex()
    return str(value)
