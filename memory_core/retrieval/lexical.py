"""The BM25 channel: FTS5 ranking under the search's hard filters.

The query runs as FTS5 syntax (AND, OR, NOT, "phrase", prefix*).  When SQLite
rejects it -- "what's the user's favourite colour?" is not FTS5 -- or when a
plain multi-word query finds nothing because FTS5 ANDs its words, it runs
again as a natural-language query: its content words OR-ed, each quoted.

Each trace is indexed with its ``context`` (the previous turn of its stream)
as a third column, weighted ``search_context_weight`` against the content's
1: a turn is found by what was said just before it, but ranks above it only
when its own words match too.

BM25 cost is linear in the rows a term matches, so on a large brain the
natural-language path also drops words that occur in a large share of traces
(looked up in the fts5vocab table, by Porter stem as the index stores them):
such words rank little and cost most.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy import Connection, text
from sqlalchemy.exc import OperationalError

from memory_core.brain.db import raw_cursor
from memory_core.brain.schema import FTS_TABLE, VOCAB_TABLE
from memory_core.language.scripts import segmented
from memory_core.retrieval import lexical_pg
from memory_core.retrieval.ranking import FACT_COLUMNS, Facts
from memory_core.settings import Settings
from memory_core.textutil import content_words, stem

# Operators and syntax that mark a query as deliberate FTS5, not plain words.
FTS_SYNTAX = re.compile(r'\b(AND|OR|NOT|NEAR)\b|["*()^:+{}]')
# Error texts SQLite gives for a MATCH expression it cannot parse.
_SYNTAX_ERRORS = (
    "fts5:",
    "syntax error",
    "no such column",
    "unterminated string",
    "unknown special query",
    "expected integer",  # NEAR(a b, x)
)
# Extra ranks fetched when ranking before filtering, to cover deleted traces.
OVERFETCH = 10


@dataclass(frozen=True)
class LexicalRanking:
    """The channel's answer: best-first (seq, score) pairs, higher score better.

    ``facts`` holds what ranking reads of each ranked trace, fetched with it.
    """

    ranked: list[tuple[int, float]]
    mode: str  # "fts" or "natural"
    query: str
    facts: dict[int, Facts] = field(default_factory=dict)


def rank(
    conn: Connection,
    query: str,
    where: str | None,
    params: dict[str, Any],
    depth: int,
    settings: Settings,
    *,
    counts: TermCounts | None = None,
    words: WordCounts | None = None,
) -> LexicalRanking:
    """The ``depth`` best matches of ``query`` among traces passing ``where``.

    ``where`` is an SQL condition over ``t`` (memory_traces); None means only
    "not deleted", which ranks in the index alone (see :func:`_rank_active`).
    ``words``: the statistics a plain-language query's words are dropped by (a
    confined caller's own, :mod:`memory_core.retrieval.own_counts`); None: ``counts``.
    """
    words = words or counts
    context_weight = settings.search_context_weight
    # A run of a script written without spaces is asked as the index holds it.
    query = segmented(query) or ""
    if conn.dialect.name == "postgresql":
        return _rank_pg(conn, query, where, params, depth, settings, counts, words)
    bm25 = f"bm25({FTS_TABLE}, 1.0, 1.0, {float(context_weight)!r})"
    # Without the context column, a row matching only there must not match.
    scoped = (lambda m: m) if context_weight > 0 else (lambda m: f"{{content tags}} : ({m})")
    mode, match = "fts", query
    found = _run(conn, scoped(match), where, params, depth, bm25)
    if found is None or (not found and not FTS_SYNTAX.search(query) and len(query.split()) > 1):
        mode = "natural"
        match = natural_query(conn, query, settings, words)
        found = (_run(conn, scoped(match), where, params, depth, bm25) if match else None) or []
    return LexicalRanking(
        [(f.seq, score) for f, score in found], mode, match, {f.seq: f for f, _ in found}
    )


def _rank_pg(
    conn: Connection,
    query: str,
    where: str | None,
    params: dict[str, Any],
    depth: int,
    settings: Settings,
    counts: TermCounts | None,
    words: WordCounts | None,
) -> LexicalRanking:
    """:func:`rank` on a PostgreSQL brain (:mod:`memory_core.retrieval.lexical_pg`)."""
    own = settings.search_context_weight <= 0
    weight = settings.search_context_weight
    counts = counts or TermCounts()
    total = brain_size(conn)

    def found(
        tsq: str, words: str, *, any_word: bool = False, required: frozenset[str] = frozenset()
    ) -> list[tuple[Facts, float]]:
        terms = list(dict.fromkeys(w.lower() for w in words.split()))
        docs, avgdl = counts.index_size(conn, total)
        df, lexemes_of = counts.terms(conn, total, terms)
        idfs = {t: lexical_pg.idf(df[t], docs) for t in terms}
        seed = min((t for t in terms if t in required), key=lambda t: df[t], default=None)
        rows = lexical_pg.run(
            conn,
            tsq,
            idfs,
            lexemes_of,
            avgdl,
            where,
            params,
            depth,
            weight,
            FACT_COLUMNS,
            any_word=any_word,
            seed=seed,
        )
        return [(Facts.from_row(r[:-1]), float(r[-1])) for r in rows]

    mode, match = "fts", query
    parsed = lexical_pg.tsquery(query, only_own_words=own)
    hits = None
    if parsed is not None:
        plain = lexical_pg.any_word(query)
        hits = found(parsed.tsquery, parsed.words, any_word=plain, required=parsed.required)
    if hits is None or (not hits and not FTS_SYNTAX.search(query) and len(query.split()) > 1):
        mode = "natural"
        match = natural_query(conn, query, settings, words or counts)
        kept = _NATURAL_WORD.findall(match)
        hits = found(*lexical_pg.any_of(kept, only_own_words=own), any_word=True) if kept else []
    return LexicalRanking(
        [(f.seq, score) for f, score in hits], mode, match, {f.seq: f for f, _ in hits}
    )


_NATURAL_WORD = re.compile(r'"((?:[^"]|"")*)"')


def _run(
    conn: Connection,
    match: str,
    where: str | None,
    params: dict[str, Any],
    depth: int,
    bm25: str,
) -> list[tuple[Facts, float]] | None:
    """Matches best first, or None when FTS5 rejects the syntax of ``match``."""
    # The driver's cursor directly: this is the hot path of every search, and
    # SQLAlchemy's statement and result machinery doubled its fixed cost.
    with raw_cursor(conn) as cursor:
        try:
            if where is None:
                return _rank_active(cursor, match, depth, bm25)
            sql = (
                f"SELECT {FACT_COLUMNS}, {bm25} AS _score FROM {FTS_TABLE} "
                f"JOIN memory_traces t ON t.seq = {FTS_TABLE}.rowid "
                f"WHERE {FTS_TABLE} MATCH :match AND {where} ORDER BY _score LIMIT :limit"
            )
            rows = cursor.execute(sql, {"match": match, "limit": depth, **params}).fetchall()
            return [(Facts.from_row(r[:-1]), -float(r[-1])) for r in rows]
        except (OperationalError, sqlite3.OperationalError) as e:
            message = str(getattr(e, "orig", e)).lower()
            if any(s in message for s in _SYNTAX_ERRORS):
                return None
            raise


def _rank_active(cursor: Any, match: str, depth: int, bm25: str) -> list[tuple[Facts, float]]:
    """Without filters: rank in the index alone, then read only the top rows.

    Joining every match to its row costs one table lookup per match (thousands
    for a common word); ranking first costs lookups only for the top few.
    Soft-deleted traces stay in the index (for as-of queries), so the ranking
    over-fetches and widens until ``depth`` active traces are found or the
    matches run out.
    """
    want = depth + OVERFETCH
    rank_sql = (
        f"SELECT rowid, {bm25} FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ? ORDER BY {bm25} LIMIT ?"
    )
    while True:
        ranked = cursor.execute(rank_sql, (match, want)).fetchall()
        if not ranked:
            return []
        marks = ", ".join(str(int(seq)) for seq, _ in ranked)
        active = {
            int(r[0]): Facts.from_row(r)
            for r in cursor.execute(
                f"SELECT {FACT_COLUMNS} FROM memory_traces t "
                f"WHERE t.seq IN ({marks}) AND t.deleted = 0"
            )
        }
        if len(active) >= depth or len(ranked) < want:
            kept = [(active[seq], -float(score)) for seq, score in ranked if seq in active]
            return kept[:depth]
        want *= 4


_SIZES: weakref.WeakKeyDictionary[Connection, int] = weakref.WeakKeyDictionary()


def brain_size(conn: Connection) -> int:
    """The brain's highest trace number (its size, deleted traces counted), read once
    per connection block: one search asks it several times."""
    size = _SIZES.get(conn)
    if size is None:
        size = _SIZES[conn] = int(
            conn.execute(text("SELECT coalesce(max(seq), 0) FROM memory_traces")).scalar_one()
        )
    return size


class TermCounts:
    """Document frequencies of stems in one brain (its :meth:`~memory_core.brain.db.Brain.state`).

    Reading a frequency walks the term's whole posting list (FTS5's vocabulary
    table; PostgreSQL's GIN index) -- longest for exactly the common words the
    lookup is meant to drop -- so the numbers are kept and dropped when the brain
    has grown by a tenth.  On PostgreSQL the index's size and mean document
    length, which BM25 needs and FTS5 keeps itself, are kept the same way.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._basis = 0
        self._counts: dict[str, int] = {}
        self._lexemes: dict[str, list[str]] = {}  # on PostgreSQL: how its index stems a term
        self._size: tuple[int, float] | None = None

    def _current(self, total: int) -> None:
        """Forget what was counted when the brain has grown by a tenth (or shrunk)."""
        if total > self._basis * 1.1 or total < self._basis:
            self._basis, self._counts, self._lexemes, self._size = total, {}, {}, None

    def size(self, conn: Connection) -> int:
        """The brain's size (:func:`brain_size`)."""
        return brain_size(conn)

    def df(self, conn: Connection, total: int, stems: Sequence[str]) -> dict[str, int]:
        """How many traces hold each stem, ``total`` being the brain's size now."""
        return self.terms(conn, total, stems)[0]

    def terms(
        self, conn: Connection, total: int, stems: Sequence[str]
    ) -> tuple[dict[str, int], dict[str, list[str]]]:
        """:meth:`df`, and on PostgreSQL the lexemes its index holds for each term."""
        with self._lock:
            self._current(total)
            counts, lexemes = self._counts, self._lexemes
            missing = [s for s in dict.fromkeys(stems) if s not in counts]
        if conn.dialect.name == "postgresql":
            read = lexical_pg.document_frequencies(conn, missing)
            found = {term: n for term, (n, _) in read.items()}
            stemmed = {term: of for term, (_, of) in read.items()}
        else:
            vocab = text(f"SELECT doc FROM {VOCAB_TABLE} WHERE term = :term")
            found = {s: int(conn.execute(vocab, {"term": s}).scalar() or 0) for s in missing}
            stemmed = {}
        with self._lock:  # into the maps read above, even if a reset replaced them since
            counts.update(found)
            lexemes.update(stemmed)
            return (
                {s: counts.get(s, found.get(s, 0)) for s in stems},
                {s: lexemes.get(s, []) for s in stems},
            )

    def index_size(self, conn: Connection, total: int) -> tuple[int, float]:
        """Documents in a PostgreSQL brain's index and their mean length in tokens."""
        with self._lock:
            self._current(total)
            size = self._size
        if size is None:
            size = lexical_pg.index_size(conn)
            with self._lock:
                self._size = size
        return size


class WordCounts(Protocol):
    """Word statistics: the brain's (:class:`TermCounts`), or a confined caller's own."""

    def size(self, conn: Connection) -> int:
        """How many traces the statistics count."""
        ...

    def df(self, conn: Connection, total: int, stems: Sequence[str]) -> dict[str, int]:
        """How many of them hold each stem."""
        ...


def natural_query(
    conn: Connection, query: str, settings: Settings, counts: WordCounts | None = None
) -> str:
    """An FTS5 query from plain words: content words, quoted, OR-ed.

    On a brain of at least ``search_term_share_min_docs`` traces, words found
    in more than ``search_max_term_share`` of them are dropped (the rarest is
    kept if all are that common); ``counts`` says what is counted (a confined
    caller's own traces, :mod:`memory_core.retrieval.own_counts`).
    """
    terms = content_words(query)
    if not terms:
        return ""
    counts = counts or TermCounts()
    total = counts.size(conn)
    if total >= settings.search_term_share_min_docs and len(terms) > 1:
        limit = settings.search_max_term_share * total
        stems = {w: stem(w) for w in terms}
        df_by_stem = counts.df(conn, total, list(stems.values()))
        df = {w: df_by_stem[stems[w]] for w in terms}
        kept = [w for w in terms if df[w] <= limit]
        terms = kept or [min(terms, key=lambda w: df[w])]
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in terms)
