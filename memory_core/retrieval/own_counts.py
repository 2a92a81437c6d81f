"""Word statistics of a caller confined to scope ids, counted among its own traces.

How often the brain holds a word weighs the query's words in a hit's ``relevance``
(:mod:`memory_core.retrieval.relevance`) and decides which very common words a
plain-language query drops (:func:`memory_core.retrieval.lexical.natural_query`).
Counted over the whole brain, both would move when another tenant writes that word:
a confined caller could watch its own hit's relevance fall, or the word leave its
query, and learn that someone else holds it.  So for such a caller they are
counted among the traces of its own scope ids alone (deleted ones included, as the
full-text index keeps them) -- the number of them, and how many hold each word.

The counts are kept (a brain's :class:`OwnCounts`, by set of scope ids) and dropped
when those scope ids' traces have grown by a tenth, or shrunk: only the caller's own
writes move them.  BM25's own ranking still weighs words by the whole index (FTS5
keeps one set of statistics); see the README's search section for what that leaves.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, text

from memory_core.auth import Within
from memory_core.brain.db import raw_cursor
from memory_core.brain.schema import FTS_TABLE
from memory_core.retrieval.lexical import TermCounts, brain_size

# Sets of scope ids whose counts are kept at most.
_KEPT = 512


class OwnCounts:
    """Per set of scope ids: its traces' number and each counted stem's frequency."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[Within, tuple[int, dict[str, int]]] = {}

    def of(self, within: Within, brain: TermCounts) -> ScopeCounts:
        """The counts of the traces of ``within``'s scope ids (``brain``: the brain's
        own, which choose only how each word is counted)."""
        return ScopeCounts(self, within, brain)

    def known(self, within: Within, size: int, stems: Sequence[str]) -> dict[str, int]:
        """The kept counts among ``stems`` (all dropped first if the size moved past
        the rule)."""
        with self._lock:
            kept = self._kept.get(within)
            if kept is None or size > kept[0] * 1.1 or size < kept[0]:
                if len(self._kept) >= _KEPT:
                    self._kept.clear()
                kept = self._kept[within] = (size, {})
            return {s: kept[1][s] for s in stems if s in kept[1]}

    def keep(self, within: Within, size: int, found: dict[str, int]) -> None:
        with self._lock:
            kept = self._kept.get(within)
            if kept is not None and kept[0] == size:
                kept[1].update(found)


class ScopeCounts:
    """The statistics a search reads, counted within one set of scope ids: the methods
    :class:`~memory_core.retrieval.lexical.TermCounts` has for the whole brain."""

    def __init__(self, kept: OwnCounts, within: Within, brain: TermCounts) -> None:
        self.kept = kept
        self.within = within
        self.brain = brain
        self._size: int | None = None
        self._condition, self._params = within.sql("t", "own")

    def size(self, conn: Connection) -> int:
        """How many traces the scope ids hold (deleted ones too)."""
        if self._size is None:
            sql = f"SELECT count(*) FROM memory_traces t WHERE {self._condition}"
            self._size = int(conn.execute(text(sql), self._params).scalar_one())
        return self._size

    def df(self, conn: Connection, total: int, stems: Sequence[str]) -> dict[str, int]:
        """How many of the scope ids' traces hold each stem (``total`` is the brain's
        measure; the scope ids' own size decides when the counts are read again)."""
        size = self.size(conn)
        known = self.kept.known(self.within, size, stems)
        missing = [s for s in dict.fromkeys(stems) if s not in known]
        # A word the brain holds more often than the scope ids hold traces is counted
        # by reading their traces' entries one by one; a rarer one, from its postings.
        widest = self.brain.df(conn, brain_size(conn), missing) if missing else {}
        found = {s: self._count(conn, s, by_trace=widest[s] > size) for s in missing}
        self.kept.keep(self.within, size, found)
        return {s: known.get(s, found.get(s, 0)) for s in stems}

    def _count(self, conn: Connection, stem: str, *, by_trace: bool) -> int:
        if conn.dialect.name == "postgresql":
            sql = (
                "SELECT count(DISTINCT p.seq) FROM memory_traces_postings p "
                "JOIN memory_traces t ON t.seq = p.seq "
                "WHERE p.lexeme = ANY(tsvector_to_array(to_tsvector('reverie', :stem))) "
                f"AND {self._condition}"
            )
        else:  # SQLite's CROSS JOIN keeps the order written: the traces first
            tables = (
                f"memory_traces t CROSS JOIN {FTS_TABLE}"
                if by_trace
                else f"{FTS_TABLE} JOIN memory_traces t"
            )
            sql = (
                f"SELECT count(*) FROM {tables} ON t.seq = {FTS_TABLE}.rowid "
                f"WHERE {FTS_TABLE} MATCH :match AND {self._condition}"
            )
        values: dict[str, Any] = {"stem": stem, "match": '"' + stem.replace('"', '""') + '"'}
        with raw_cursor(conn) as cursor:
            row = cursor.execute(sql, {**values, **self._params}).fetchone()
        return int(row[0]) if row else 0
