"""memory_search: full-text retrieval with hard filters first.

The query runs as FTS5 syntax (AND, OR, NOT, "phrase", prefix*).  When SQLite
rejects it -- "what's the user's favourite colour?" is not FTS5 -- or when a
plain multi-word query finds nothing because FTS5 ANDs its words, it runs
again as a natural-language query: its content words OR-ed, each quoted.

BM25 cost is linear in the rows a term matches, so on a large brain the
natural-language path also drops words that occur in a large share of traces
(looked up in the fts5vocab table, by Porter stem as the index stores them):
such words rank little and cost most.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, text
from sqlalchemy.exc import OperationalError

from memory_core.db import Brain
from memory_core.decay import effective_strength
from memory_core.errors import InvalidArgument
from memory_core.schema import FTS_TABLE, VOCAB_TABLE
from memory_core.textutil import content_words, stem
from memory_core.traces import Trace, check_scope, check_tags, check_type

MAX_LIMIT = 100
# Operators and syntax that mark a query as deliberate FTS5, not plain words.
_FTS_SYNTAX = re.compile(r'\b(AND|OR|NOT|NEAR)\b|["*()^:+{}]')
# Error texts SQLite gives for a MATCH expression it cannot parse.
_SYNTAX_ERRORS = (
    "fts5:",
    "syntax error",
    "no such column",
    "unterminated string",
    "unknown special query",
)


@dataclass(frozen=True)
class SearchHit:
    """One result: the trace, its final score and each channel's rank and score."""

    trace: Trace
    score: float
    strength: float
    channels: dict[str, dict[str, float]]

    def to_dict(self) -> dict[str, Any]:
        t = self.trace
        return {
            "id": t.id,
            "content": t.content,
            "type": t.type,
            "scope": t.scope,
            "scope_id": t.scope_id,
            "tags": t.tags,
            "strength": round(self.strength, 6),
            "score": round(self.score, 6),
            "channels": self.channels,
            "occurred_at": t.occurred_at,
            "metadata": t.metadata,
        }


@dataclass(frozen=True)
class SearchResponse:
    results: list[SearchHit]
    mode: str  # "fts" or "natural"
    fts_query: str
    degraded: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "results": [h.to_dict() for h in self.results],
            "mode": self.mode,
            "query": self.fts_query,
            "degraded": self.degraded,
        }


@dataclass(frozen=True)
class Filters:
    type: str | None = None
    scope: str | None = None
    scope_id: str | None = None
    tags: tuple[str, ...] = ()

    def only_active(self) -> bool:
        return self.type is None and self.scope is None and self.scope_id is None and not self.tags

    def sql(self) -> tuple[str, dict[str, Any]]:
        clauses = ["t.deleted = 0"]
        params: dict[str, Any] = {}
        if self.type is not None:
            clauses.append("t.type = :f_type")
            params["f_type"] = self.type
        if self.scope is not None:
            clauses.append("t.scope = :f_scope")
            params["f_scope"] = self.scope
        if self.scope_id is not None:
            clauses.append("t.scope_id = :f_scope_id")
            params["f_scope_id"] = self.scope_id
        for i, tag in enumerate(self.tags):
            clauses.append(f"EXISTS (SELECT 1 FROM json_each(t.tags) WHERE value = :f_tag{i})")
            params[f"f_tag{i}"] = tag
        return " AND ".join(clauses), params


def check_limit(limit: Any) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be an integer from 1 to {MAX_LIMIT}; got {limit!r}")
    return limit


def search(
    brain: Brain,
    query: str,
    *,
    type: str | None = None,
    scope: str | None = None,
    scope_id: str | None = None,
    tags: Sequence[str] | None = None,
    limit: int = 10,
    now: float | None = None,
) -> SearchResponse:
    """Best-first traces matching ``query`` among those passing every filter."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgument("query must be a non-empty string")
    filters = Filters(
        type=check_type(type) if type is not None else None,
        scope=check_scope(scope) if scope is not None else None,
        scope_id=scope_id,
        tags=tuple(check_tags(tags)),
    )
    limit = check_limit(limit)
    now = time.time() if now is None else now
    with brain.read() as conn:
        mode, fts_query = "fts", query
        rows = _bm25(conn, query, filters, limit)
        if rows is None or (not rows and not _FTS_SYNTAX.search(query) and len(query.split()) > 1):
            mode = "natural"
            fts_query = natural_query(conn, query, brain.settings, brain.url)
            rows = _bm25(conn, fts_query, filters, limit) if fts_query else []
            rows = rows or []
    s = brain.settings
    hits = []
    for rank, (trace, score) in enumerate(rows, start=1):
        strength = effective_strength(
            trace.strength,
            last_accessed=trace.last_accessed,
            occurred_at=trace.occurred_at,
            retrieval_count=trace.retrieval_count,
            stability=trace.stability,
            now=now,
            base_days=s.decay_base_stability_days,
            growth=s.decay_stability_growth,
        )
        hits.append(SearchHit(trace, -score, strength, {"bm25": {"rank": rank, "score": -score}}))
    return SearchResponse(hits, mode, fts_query)


_RANK_SQL = (
    f"SELECT rowid, bm25({FTS_TABLE}) FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ? "
    f"ORDER BY bm25({FTS_TABLE}) LIMIT ?"
)
# Extra ranks fetched when ranking before filtering, to cover deleted traces.
_OVERFETCH = 10


def _bm25(
    conn: Connection, match: str, filters: Filters, limit: int
) -> list[tuple[Trace, float]] | None:
    """Rows matching ``match`` best first, or None when FTS5 rejects its syntax."""
    try:
        if filters.only_active():
            return _rank_then_fetch(conn, match, limit)
        return _filtered(conn, match, filters, limit)
    except (OperationalError, sqlite3.OperationalError) as e:
        message = str(getattr(e, "orig", e)).lower()
        if any(s in message for s in _SYNTAX_ERRORS):
            return None
        raise


def _filtered(
    conn: Connection, match: str, filters: Filters, limit: int
) -> list[tuple[Trace, float]]:
    """Join every match to its trace so filters apply before the limit."""
    where, params = filters.sql()
    sql = text(
        f"SELECT t.*, bm25({FTS_TABLE}) AS _score FROM {FTS_TABLE} "
        f"JOIN memory_traces t ON t.seq = {FTS_TABLE}.rowid "
        f"WHERE {FTS_TABLE} MATCH :match AND {where} ORDER BY _score LIMIT :limit"
    )
    result = conn.execute(sql, {"match": match, "limit": limit, **params}).all()
    return [(Trace.from_row(r), r._mapping["_score"]) for r in result]


def _rank_then_fetch(conn: Connection, match: str, limit: int) -> list[tuple[Trace, float]]:
    """Without filters: rank in the index alone, then read only the top rows.

    Joining every match to its row costs one table lookup per match (thousands
    for a common word); ranking first costs lookups only for the top few.
    Soft-deleted traces stay in the index (for as-of queries), so the ranking
    over-fetches and widens until ``limit`` active traces are found or the
    matches run out.
    """
    want = limit + _OVERFETCH
    # The driver's cursor directly: this is the hot path of every search, and
    # SQLAlchemy's statement and result machinery doubled its fixed cost.
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        while True:
            ranked = cursor.execute(_RANK_SQL, (match, want)).fetchall()
            if not ranked:
                return []
            scores = {r[0]: r[1] for r in ranked}
            marks = ", ".join(str(int(seq)) for seq in scores)
            cursor.execute(f"SELECT * FROM memory_traces WHERE seq IN ({marks}) AND deleted = 0")
            names = [d[0] for d in cursor.description]
            rows = [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]
            if len(rows) >= limit or len(ranked) < want:
                best = sorted(rows, key=lambda r: scores[r["seq"]])[:limit]
                return [(Trace.from_mapping(r), scores[r["seq"]]) for r in best]
            want *= 4
    finally:
        cursor.close()


class _TermShares:
    """Document frequencies of stems, cached per brain.

    Reading a frequency from fts5vocab walks the term's whole posting list --
    longest for exactly the common words the lookup is meant to drop -- so the
    numbers are cached and dropped when the brain has grown by a tenth.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_brain: dict[str, tuple[int, dict[str, int]]] = {}

    def df(self, conn: Connection, key: str, total: int, stems: list[str]) -> dict[str, int]:
        with self._lock:
            basis, cache = self._by_brain.get(key, (0, {}))
            if total > basis * 1.1 or total < basis:
                basis, cache = total, {}
                self._by_brain[key] = (basis, cache)
            missing = [s for s in stems if s not in cache]
        vocab = text(f"SELECT doc FROM {VOCAB_TABLE} WHERE term = :term")
        found = {s: int(conn.execute(vocab, {"term": s}).scalar() or 0) for s in missing}
        with self._lock:
            cache.update(found)
            return {s: cache.get(s, found.get(s, 0)) for s in stems}


_term_shares = _TermShares()


def natural_query(conn: Connection, query: str, settings: Any, cache_key: str = "") -> str:
    """An FTS5 query from plain words: content words, quoted, OR-ed.

    On a brain of at least ``search_term_share_min_docs`` traces, words found
    in more than ``search_max_term_share`` of them are dropped (the rarest is
    kept if all are that common).
    """
    terms = content_words(query)
    if not terms:
        return ""
    total = conn.execute(text("SELECT coalesce(max(seq), 0) FROM memory_traces")).scalar_one()
    if total >= settings.search_term_share_min_docs and len(terms) > 1:
        limit = settings.search_max_term_share * total
        stems = {w: stem(w) for w in terms}
        df_by_stem = _term_shares.df(conn, cache_key or "-", total, list(stems.values()))
        df = {w: df_by_stem[stems[w]] for w in terms}
        kept = [w for w in terms if df[w] <= limit]
        terms = kept or [min(terms, key=lambda w: df[w])]
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in terms)
