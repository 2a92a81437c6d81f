"""Statements of one slot, chained in time: each holds until the next one.

When a statement of a slot (:mod:`memory_core.supersession.slots`) is written,
every earlier statement of that slot in its scope id that still held at its time
now holds until then, superseded by it; and when a later statement of the slot
is already known (turns can arrive out of order), the new one holds until that
one.  Nothing is deleted: a superseded trace keeps its words and is found with
``as_of`` a time it held, and search ranks it below its successor.  A
supersession a person undid is never made again between the same two statements.

The statement is the traces of one turn or one add (an episode and the facts
drawn from it share their slot and their time): they never supersede one another.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection

from memory_core.brain.db import raw_cursor
from memory_core.supersession.telling import restates_by_words, said_in

# The earlier statements of the slot that still held at time t.
_HELD = (
    "SELECT id, content FROM memory_traces "
    "WHERE scope = ? AND scope_id IS NOT DISTINCT FROM ? AND slot = ? AND deleted = 0 "
    "AND occurred_at < ? "
    "AND (valid_until IS NULL OR valid_until > ?) AND id NOT IN ({ids})"
)
# The first later statement of the slot, if one is already known.
_NEXT = (
    "SELECT id, occurred_at, content FROM memory_traces "
    "WHERE scope = ? AND scope_id IS NOT DISTINCT FROM ? AND slot = ? AND deleted = 0 "
    "AND occurred_at > ? "
    "ORDER BY occurred_at, seq"
)
_SUBJECTS = (
    "SELECT DISTINCT substr(slot, 1, instr(slot, '/') - 1) FROM memory_traces "
    "WHERE scope_id IS NOT DISTINCT FROM ? AND slot IS NOT NULL"
)


def link(
    conn: Connection,
    statement: Sequence[str],
    successor: str,
    *,
    scope: str,
    scope_id: str | None,
    slot: str,
    at: float,
    said: str,
) -> int:
    """Chain the statement (its traces' ids) made at ``at`` into its slot's history.

    ``successor`` is the trace of the statement that the ones it supersedes name as
    their successor (a fact rather than its turn, when there is one); ``said`` its
    words: an earlier statement of the slot is superseded only when these restate it
    (:func:`~memory_core.supersession.telling.restates_by_words`).  Returns how many earlier
    traces it superseded.
    """
    marks = ", ".join("?" for _ in statement)
    with raw_cursor(conn) as cursor:
        rows = cursor.execute(_HELD.format(ids=marks), (scope, scope_id, slot, at, at, *statement))
        held = [str(r[0]) for r in rows if restates_by_words(said, said_in(r[1]), slot)]
        later = [
            (str(r[0]), float(r[1]))
            for r in cursor.execute(_NEXT, (scope, scope_id, slot, at))
            if restates_by_words(said_in(r[2]), said, slot)
        ]
    superseded = supersede(conn, held, successor, at=at)
    if later:  # said after this one, known before it: this one held until then
        supersede(conn, statement, later[0][0], at=later[0][1])
    return superseded


def supersede(conn: Connection, older: Sequence[str], successor: str, *, at: float) -> int:
    """These traces, said before ``at``, and the facts drawn from them hold until then,
    superseded by ``successor`` (those superseded at or before ``at`` keep their successor).
    """
    every = with_facts(conn, older)
    if every:
        refused = _refused(conn, every, successor)
        every = [t for t in every if t not in refused]
    if not every:
        return 0
    held = "deleted = 0 AND occurred_at < ? AND (valid_until IS NULL OR valid_until > ?)"
    with raw_cursor(conn) as cursor:
        cursor.execute(
            "UPDATE memory_traces SET valid_until = ?, superseded_by = ? "
            f"WHERE id IN ({', '.join('?' for _ in every)}) AND {held}",
            (at, successor, *every, at, at),
        )
        return int(cursor.rowcount)


def _refused(conn: Connection, traces: Sequence[str], successor: str) -> set[str]:
    """Of ``traces``, those a person refused to see superseded by ``successor``
    (:func:`memory_core.traces.supersession.undo_supersession`)."""
    marks = ", ".join("?" for _ in traces)
    with raw_cursor(conn) as cursor:
        rows = cursor.execute(
            "SELECT trace_id FROM supersession_refusals "
            f"WHERE successor_id = ? AND trace_id IN ({marks})",
            (successor, *traces),
        )
        return {str(r[0]) for r in rows}


def with_facts(conn: Connection, traces: Sequence[str]) -> list[str]:
    """These traces and the facts drawn from them (sorted).  A fact superseded alone
    leaves its turn current: the turn says more than the one fact, and a misread
    fact should not sink the words it came from."""
    if not traces:
        return []
    marks = ", ".join("?" for _ in traces)
    with raw_cursor(conn) as cursor:
        # A fact drawn from a turn has its time and cites it: found by the time's index.
        times = [
            (str(r[0]), r[1], float(r[2]))
            for r in cursor.execute(
                f"SELECT id, scope_id, occurred_at FROM memory_traces WHERE id IN ({marks})",
                tuple(traces),
            )
        ]
        ids = {trace_id for trace_id, _, _ in times}
        for trace_id, scope_id, occurred in times:
            ids.update(
                str(r[0])
                for r in cursor.execute(
                    "SELECT id FROM memory_traces WHERE occurred_at = ? "
                    "AND scope_id IS NOT DISTINCT FROM ? "
                    "AND EXISTS (SELECT 1 FROM json_each(sources) "
                    "WHERE json_extract(value, '$.trace') = ?)",
                    (occurred, scope_id, trace_id),
                )
            )
    return sorted(ids)


class KnownSubjects:
    """The subjects each scope id's statements have been about (names, relations), read
    once per scope id in a transaction and kept current as it writes statements: a
    bulk write asks for them once per trace."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._by_scope_id: dict[str | None, set[str]] = {}

    def of(self, scope_id: str | None) -> set[str]:
        found = self._by_scope_id.get(scope_id)
        if found is None:
            with raw_cursor(self._conn) as cursor:
                rows = cursor.execute(_SUBJECTS, (scope_id,))
                found = self._by_scope_id[scope_id] = {str(r[0]) for r in rows if r[0]}
        return found

    def add(self, scope_id: str | None, slot: str | None) -> None:
        """Note the subject of a slot just written."""
        if slot is not None and "/" in slot:
            self.of(scope_id).add(slot.split("/", 1)[0])
