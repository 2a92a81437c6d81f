"""Memory traces: add, read, update, soft-delete and merge.

Every write runs in one :meth:`Brain.transaction` and writes the trace's
full-text entry in that same transaction, so a trace is searchable the moment
the call returns and never searchable before it is committed.  Validation
happens before anything is written: a refused call changes nothing.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Connection, text

from memory_core import supersession
from memory_core.auth import DELETE, WRITE, Identity, acting
from memory_core.brain.db import Brain, raw_cursor, write_meta
from memory_core.brain.schema import FTS_TABLE
from memory_core.embeddings import archive_vectors
from memory_core.errors import Conflict, InvalidArgument, NotFound
from memory_core.textutil import content_hash
from memory_core.timeref import iso
from memory_core.traces.journal import changing
from memory_core.traces.model import (
    MAX_TAGS,
    NewTrace,
    Trace,
    check_content,
    check_new,
    check_tags,
    dumps,
    new_trace_id,
)

# -- full-text index ---------------------------------------------------------


# The index reads each text as memory_core.language.scripts cuts it.  SQLite's is
# external content, read through the view that cuts (schema.INDEXED_VIEW): what is
# inserted and deleted goes through the same function, so that a delete names exactly
# what was inserted.  PostgreSQL's rows keep the texts as they are and build their
# document through the same cut.
def _texts(cut: bool, names: tuple[str, ...]) -> str:
    return ", ".join(f"reverie_segmented({n})" if cut else n for n in names)


_FTS_INSERT = {
    cut: text(
        f"INSERT INTO {FTS_TABLE}(rowid, content, tags, context) VALUES (:seq, "
        f"{_texts(cut, (':content', ':tags', ':context'))})"
    )
    for cut in (True, False)
}
_FTS_DELETE = {
    cut: text(
        f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, content, tags, context) VALUES ('delete', "
        f":seq, {_texts(cut, (':content', ':tags', ':context'))})"
    )
    for cut in (True, False)
}
_FTS_INSERT_SQL = {
    cut: f"INSERT INTO {FTS_TABLE}(rowid, content, tags, context) "
    f"VALUES (?, {_texts(cut, ('?', '?', '?'))})"
    for cut in (True, False)
}


def _cuts(conn: Connection) -> bool:
    """Whether the statements writing ``conn``'s index cut the texts themselves."""
    return conn.dialect.name == "sqlite"


def fts_insert(conn: Connection, seq: int, content: str, tags_json: str, context: str) -> None:
    conn.execute(
        _FTS_INSERT[_cuts(conn)],
        {"seq": seq, "content": content, "tags": tags_json, "context": context},
    )


# The brain_meta key every rewrite of a stored trace's tags changes: what has read the
# brain's tags (a tag expression's regexes match against them) knows to read them again.
# A new trace needs no mark: its seq is past every one read.
TAGS_REWRITTEN = "tags_rewritten"


def tags_rewritten(conn: Connection) -> None:
    """Mark, in the write transaction ``conn``, that a stored trace's tags changed."""
    write_meta(conn, TAGS_REWRITTEN, uuid.uuid4().hex)


def fts_delete(conn: Connection, seq: int, content: str, tags_json: str, context: str) -> None:
    """Remove an entry; the values must be exactly those that were indexed."""
    conn.execute(
        _FTS_DELETE[_cuts(conn)],
        {"seq": seq, "content": content, "tags": tags_json, "context": context},
    )


# -- writes ------------------------------------------------------------------

_INSERT_SQL = (
    "INSERT INTO memory_traces (id, brain_id, type, scope, scope_id, content, content_hash, "
    "tags, importance, strength, stability, created_at, updated_at, occurred_at, "
    "retrieval_count, metadata, sources, deleted, version, stream, prev_seq, context, learnt_at, "
    "slot) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1.0, 1.0, ?, ?, ?, 0, ?, ?, 0, 1, ?, ?, ?, ?, ?) "
    "RETURNING seq"
)
# The turn a new one follows: the stream's last one said and still active (a
# deleted turn's words must not come back as the next one's context).
_LAST_IN_STREAM_SQL = (
    "SELECT seq, content, occurred_at FROM memory_traces WHERE stream = ? AND deleted = 0 "
    "ORDER BY occurred_at DESC, seq DESC LIMIT 1"
)
# A turn said before the stream's last one (posted late, or concurrently) goes
# between the turns it was said between: it follows the last said at or before it,
# and the first said after it follows it.
_SAID_BEFORE_SQL = (
    "SELECT seq, content FROM memory_traces WHERE stream = ? AND deleted = 0 "
    "AND occurred_at <= ? ORDER BY occurred_at DESC, seq DESC LIMIT 1"
)
_SAID_AFTER_SQL = (
    "SELECT seq, content, tags, context FROM memory_traces WHERE stream = ? AND deleted = 0 "
    "AND occurred_at > ? ORDER BY occurred_at, seq LIMIT 1"
)
_RELINK_SQL = "UPDATE memory_traces SET prev_seq = ?, context = ? WHERE seq = ?"


def insert_trace(conn: Connection, brain: Brain, item: NewTrace, now: float) -> str:
    """Insert one already-validated trace and its index entry on ``conn``.

    Runs on the driver's cursor: this is the hot path of every add, ingest and
    import, and SQLAlchemy's per-statement machinery cost more than SQLite's
    own work here.  ``conn`` must be inside :meth:`Brain.transaction`.
    """
    trace_id = item.id or new_trace_id()
    tags_json = dumps(list(item.tags))
    with raw_cursor(conn) as cursor:
        try:
            occurred = item.occurred_at if item.occurred_at is not None else now
            prev_seq, context, follower = None, "", None
            if item.stream is not None:
                last = cursor.execute(_LAST_IN_STREAM_SQL, (item.stream,)).fetchone()
                if last is not None and last[2] <= occurred:
                    prev_seq, context = last[0], last[1]
                elif last is not None:
                    before = cursor.execute(_SAID_BEFORE_SQL, (item.stream, occurred)).fetchone()
                    if before is not None:
                        prev_seq, context = before
                    follower = cursor.execute(_SAID_AFTER_SQL, (item.stream, occurred)).fetchone()
            (seq,) = cursor.execute(
                _INSERT_SQL,
                (
                    trace_id,
                    brain.brain_id,
                    item.type,
                    item.scope,
                    item.scope_id,
                    item.content,
                    content_hash(item.content),
                    tags_json,
                    item.importance,
                    now,
                    now,
                    occurred,
                    dumps(item.metadata),
                    dumps(item.sources),
                    item.stream,
                    prev_seq,
                    context,
                    now,
                    item.slot,
                ),
            ).fetchone()
            cursor.execute(_FTS_INSERT_SQL[_cuts(conn)], (seq, item.content, tags_json, context))
            if follower is not None:  # the turn said next now follows this one
                after_seq, after_content, after_tags, after_context = follower
                cursor.execute(_RELINK_SQL, (seq, item.content, after_seq))
                fts_delete(conn, after_seq, after_content, after_tags, after_context)
                fts_insert(conn, after_seq, after_content, after_tags, item.content)
        except sqlite3.IntegrityError as e:
            raise Conflict(f"trace id {trace_id} already exists") from e
    return trace_id


def add_traces(
    brain: Brain, items: Sequence[NewTrace], *, identity: Identity, now: float | None = None
) -> list[str]:
    """Store several traces in one transaction; all or none.  Returns their ids.

    Each goes to a scope id ``identity`` may write (:meth:`Identity.scope_id_for`:
    a pinned identity's only one when the trace names none), else :class:`Forbidden`.
    """
    acting(identity, WRITE)
    checked = [_owned(check_new(i), identity) for i in items]
    now = time.time() if now is None else now
    with brain.transaction() as conn:
        ids = []
        subjects = supersession.KnownSubjects(conn)
        for given in checked:
            item = _with_slot(given, subjects)
            subjects.add(item.scope_id, item.slot)
            trace_id = insert_trace(conn, brain, item, now)
            if item.slot is not None and supersession.links_on_write(brain.settings, item.content):
                at = item.occurred_at if item.occurred_at is not None else now
                supersession.link(
                    conn,
                    [trace_id],
                    trace_id,
                    scope=item.scope,
                    scope_id=item.scope_id,
                    slot=item.slot,
                    at=at,
                    said=item.content,
                )
            ids.append(trace_id)
        return ids


# The kinds of trace that state facts of someone, whose later statements supersede.
_STATEMENT_TYPES = frozenset({"semantic", "episodic"})


def _with_slot(item: NewTrace, subjects: supersession.KnownSubjects) -> NewTrace:
    """``item`` with the slot its words state, unless it names one or states none."""
    if item.slot is not None or item.type not in _STATEMENT_TYPES:
        return item
    named = item.metadata.get("speaker")
    speaker = named if isinstance(named, str) else None
    said = supersession.said_by(item.content, speaker)
    stated = supersession.slot_stated(said, sorted(subjects.of(item.scope_id)), speaker)
    return item if stated is None else replace(item, slot=stated[0])


def _owned(item: NewTrace, identity: Identity) -> NewTrace:
    scope_id = identity.scope_id_for(item.scope_id, item.scope)
    return item if scope_id == item.scope_id else replace(item, scope_id=scope_id)


# How many occurrences of a memory said again are kept (the latest ones).
OCCURRENCES = 50


def said_again(
    brain: Brain,
    content: str,
    *,
    scope: str,
    scope_id: str | None,
    identity: Identity,
    occurred_at: float | None = None,
    tags: Sequence[str] = (),
    now: float | None = None,
) -> Trace | None:
    """The memory already holding exactly ``content`` in this scope id, with this
    occurrence noted (``metadata.occurrences``: when each was said, the latest
    :data:`OCCURRENCES`) and ``tags`` it lacked added (unless that would pass
    ``MAX_TAGS``: the same words said again are no way to grow a memory's tags without
    bound); None when there is none.  The same words said again by any door are one
    memory, not two."""
    acting(identity, WRITE)
    wanted = check_tags(list(tags))
    now = time.time() if now is None else now
    with brain.transaction() as conn:
        row = conn.execute(
            text(
                "SELECT id, metadata, occurred_at FROM memory_traces WHERE content_hash = :h "
                "AND scope = :s AND scope_id IS NOT DISTINCT FROM :sid AND deleted = 0 "
                "AND content = :c ORDER BY created_at, id LIMIT 1"
            ),
            {"h": content_hash(content), "s": scope, "sid": scope_id, "c": content},
        ).first()
        if row is None:
            return None
        metadata = json.loads(row.metadata or "{}")
        seen = metadata.get("occurrences")
        if not isinstance(seen, list):
            seen = [iso(float(row.occurred_at))]
        metadata["occurrences"] = [*seen, iso(now if occurred_at is None else occurred_at)][
            -OCCURRENCES:
        ]
        conn.execute(
            text("UPDATE memory_traces SET metadata = :m WHERE id = :id"),
            {"m": json.dumps(metadata, ensure_ascii=False), "id": row.id},
        )
        found = fetch_trace(conn, str(row.id))
        assert found is not None
        union = list(dict.fromkeys([*found.tags, *wanted]))
        if len(union) > len(found.tags) and len(union) <= MAX_TAGS:  # the ones it lacked
            with changing(conn, f"edit_{uuid.uuid4().hex[:12]}", "repeat", [found.id], now):
                found = rewrite_trace(conn, found, None, union, now)
        return found


def add_trace(
    brain: Brain, content: str, *, identity: Identity, now: float | None = None, **fields: Any
) -> str:
    """Store one trace (fields as in :class:`NewTrace`); returns its ``mt_`` id."""
    try:
        item = NewTrace(content=content, **fields)
    except TypeError as e:
        raise InvalidArgument(str(e)) from e
    return add_traces(brain, [item], identity=identity, now=now)[0]


_SELECT = text("SELECT * FROM memory_traces WHERE id = :id")


def fetch_trace(conn: Connection, trace_id: str) -> Trace | None:
    """The trace with this id on ``conn``, deleted or not; None when absent."""
    row = conn.execute(_SELECT, {"id": trace_id}).first()
    return Trace.from_row(row) if row is not None else None


def active_trace(conn: Connection, trace_id: str, identity: Identity) -> Trace:
    """The active trace ``trace_id`` on ``conn``; :class:`NotFound` when the id names
    none that ``identity`` sees."""
    trace = fetch_trace(conn, trace_id)
    if trace is None or trace.deleted or not visible(trace, identity):
        raise NotFound(f"no active trace {trace_id}")
    return trace


def visible(trace: Trace | None, identity: Identity) -> bool:
    """Whether ``trace`` exists for ``identity`` (one of its scope ids, when pinned)."""
    return trace is not None and identity.sees(trace.scope_id, trace.scope)


def get_trace(
    brain: Brain, trace_id: str, *, identity: Identity, include_deleted: bool = False
) -> Trace:
    """The trace with this id; :class:`NotFound` if absent (or deleted, by default).

    Another's trace than ``identity``'s is not found either, so ids cannot be probed.
    """
    acting(identity)
    with brain.read() as conn:
        trace = fetch_trace(conn, trace_id)
    if trace is None or not visible(trace, identity) or (trace.deleted and not include_deleted):
        raise NotFound(f"no active trace {trace_id}")
    return trace


MAX_PAGE = 500


@dataclass(frozen=True)
class Page:
    """One page of a listing, newest first, and the cursor of the next (None: the last)."""

    traces: list[Trace]
    next_cursor: str | None


def list_traces(
    brain: Brain,
    *,
    identity: Identity,
    scope: str | None = None,
    scope_id: str | None = None,
    type: str | None = None,
    tags: Sequence[str] = (),
    cursor: str | None = None,
    limit: int = 50,
) -> Page:
    """Active traces, newest stored first, a page at a time.

    The cursor holds the position of the page's last trace, so paging is
    stable while others write: a trace stored after the first page is not
    in a later one, and no trace present throughout is skipped or repeated.
    """
    within = acting(identity).within
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidArgument(f"limit: between 1 and {MAX_PAGE}; got {limit}")
    where = ["deleted = 0"]
    params: dict[str, Any] = {"limit": limit + 1}
    if cursor is not None:
        where.append("seq < :before")
        params["before"] = _cursor_seq(cursor)
    for column, value in (("scope", scope), ("scope_id", scope_id), ("type", type)):
        if value is not None:
            where.append(f"{column} = :{column}")
            params[column] = value
    for k, tag in enumerate(check_tags(tags)):
        where.append(f"EXISTS (SELECT 1 FROM json_each(tags) WHERE value = :tag{k})")
        params[f"tag{k}"] = tag
    if within is not None:
        condition, values = within.sql()
        where.append(condition)
        params |= values
    sql = f"SELECT * FROM memory_traces WHERE {' AND '.join(where)} ORDER BY seq DESC LIMIT :limit"
    with brain.read() as conn:
        rows = [Trace.from_row(r) for r in conn.execute(text(sql), params)]
    more = len(rows) > limit
    rows = rows[:limit]
    return Page(rows, _cursor_of(rows[-1].seq) if more and rows else None)


def _cursor_of(seq: int) -> str:
    """The position after which the next page starts: the last trace's stored order."""
    return str(seq)


def _cursor_seq(cursor: str) -> int:
    if cursor.isascii() and cursor.isdigit() and len(cursor) <= 18:
        return int(cursor)
    raise InvalidArgument(f"cursor: not one this listing gave: {cursor!r}")


def update_trace(
    brain: Brain,
    trace_id: str,
    *,
    identity: Identity,
    content: str | None = None,
    tags: Sequence[str] | None = None,
    expected_version: int | None = None,
    now: float | None = None,
) -> Trace:
    """Replace content and/or tags of an active trace; returns it updated.

    :class:`NotFound` when the id names no active trace ``identity`` sees;
    :class:`InvalidArgument` when no field is given.  A content change
    recomputes the hash and drops the trace's embeddings.  ``expected_version``
    makes it a compare-and-set: when the trace has changed since the caller
    read it, :class:`Conflict` is raised and nothing is written.
    """
    acting(identity, WRITE)
    if content is not None:
        check_content(content)
    new_tags = check_tags(tags) if tags is not None else None
    if content is None and new_tags is None:
        raise InvalidArgument("give content and/or tags to update")
    now = time.time() if now is None else now
    with brain.transaction() as conn:
        old = active_trace(conn, trace_id, identity)
        if expected_version is not None and old.version != expected_version:
            raise Conflict(
                f"trace {trace_id} changed since it was read "
                f"(version {old.version}, expected {expected_version})"
            )
        # Journaled as a unit of its own: the trace's history keeps the words it had.
        with changing(conn, f"edit_{uuid.uuid4().hex[:12]}", "edit", [trace_id], now):
            fresh = rewrite_trace(conn, old, content, new_tags, now)
        return fresh


def rewrite_trace(
    conn: Connection,
    old: Trace,
    content: str | None,
    tags: list[str] | None,
    now: float,
    **extra: Any,
) -> Trace:
    """Write new content/tags (and extra columns) over ``old``, CAS on version.

    A content change drops the trace's vectors, archived under the old
    content's hash (restoring that content brings them back).
    """
    new_content = old.content if content is None else content
    if new_content != old.content:
        archive_vectors(conn, old.id, old.content_hash)
    new_tags = old.tags if tags is None else tags
    values: dict[str, Any] = {
        "content": new_content,
        "content_hash": content_hash(new_content),
        "tags": dumps(new_tags),
        "updated_at": now,
        **extra,
    }
    assignments = ", ".join(f"{k} = :{k}" for k in values)
    result = conn.execute(
        text(
            f"UPDATE memory_traces SET {assignments}, version = version + 1 "
            "WHERE id = :id AND version = :version AND deleted = 0"
        ),
        {**values, "id": old.id, "version": old.version},
    )
    if result.rowcount != 1:
        raise Conflict(f"trace {old.id} changed while it was being updated")
    old_tags_json = dumps(old.tags)
    if values["tags"] != old_tags_json:
        tags_rewritten(conn)
    if new_content != old.content or values["tags"] != old_tags_json:
        fts_delete(conn, old.seq, old.content, old_tags_json, old.context)
        fts_insert(conn, old.seq, new_content, values["tags"], old.context)
    fresh = fetch_trace(conn, old.id)
    assert fresh is not None
    return fresh


def soft_delete(conn: Connection, trace: Trace, reason: str, now: float) -> None:
    """Mark ``trace`` deleted on ``conn``, compare-and-set on its version."""
    result = conn.execute(
        text(
            "UPDATE memory_traces SET deleted = 1, deleted_reason = :reason, deleted_at = :now, "
            "updated_at = :now, version = version + 1 "
            "WHERE id = :id AND version = :version AND deleted = 0"
        ),
        {"reason": reason, "now": now, "id": trace.id, "version": trace.version},
    )
    if result.rowcount != 1:
        raise Conflict(f"trace {trace.id} changed while it was being deleted")


def delete_trace(
    brain: Brain,
    trace_id: str,
    *,
    identity: Identity,
    reason: str = "deleted",
    now: float | None = None,
) -> None:
    """Soft-delete: the row stays for provenance, search never shows it again.

    :class:`NotFound` when the id names no active trace ``identity`` sees.
    """
    acting(identity, DELETE)
    now = time.time() if now is None else now
    with brain.transaction() as conn:
        trace = active_trace(conn, trace_id, identity)
        soft_delete(conn, trace, reason, now)
