"""memory_search: hybrid retrieval with hard filters first.

1. Hard filters (type, scope, scope id, tags, not deleted -- or, with
   ``as_of``, valid at that time) decide which traces may be returned at all;
   every channel ranks only those, so a filtered-out trace never displaces a
   match.
2. Channels rank independently: BM25 over the full-text index
   (:mod:`memory_core.retrieval.lexical`) and cosine over the brain's vectors
   (:mod:`memory_core.retrieval.dense`), each ``search_candidates`` deep.
3. Their candidates are fused and adjusted (:mod:`memory_core.retrieval.ranking`), and
   each result carries its per-channel ranks and scores, the fused score and
   every factor applied.

A channel that cannot answer -- the embedder fails -- is left out and named
in the response's ``degraded``; search never fails for it.  A brain holding
no vectors for the configured embedder simply has no vector channel.

``as_of`` answers what was valid at a time: traces that had happened by then
(``occurred_at``) and were not yet deleted or merged away.  A trace deleted
later still shows; one that happened later does not.  Search writes nothing:
retrieval feedback is its caller's to enqueue.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from sqlalchemy import Connection, text

from memory_core.auth import Identity, acting
from memory_core.brain.db import Brain, raw_cursor
from memory_core.errors import ChannelUnavailable, InvalidArgument
from memory_core.language import periods as named_times
from memory_core.language.questions import asks_now
from memory_core.language.reading import only_small_talk
from memory_core.retrieval import (
    asking,
    coactivation,
    dense,
    latest,
    lexical,
    quoted,
    ranking,
    relevance,
    rerank,
    tagexpr,
)
from memory_core.retrieval.filters import Filters, check_as_of, check_limit, check_min_score
from memory_core.retrieval.lexical import natural_query
from memory_core.retrieval.own_counts import OwnCounts
from memory_core.retrieval.query_embedding import (
    QueryEmbedder,
    QueryEmbedders,
    SearchEmbedder,
    Unusable,
)
from memory_core.retrieval.rerank import Reranker
from memory_core.retrieval.results import SearchHit, SearchResponse
from memory_core.settings import Settings
from memory_core.supersession.telling import said_in
from memory_core.traces import levels
from memory_core.traces.model import Trace, check_scope, check_tags, check_type
from memory_core.wellformed import check_text

log = logging.getLogger(__name__)

T = TypeVar("T")
VECTOR = "vector"
RERANK = "rerank"
_ID_CHUNK = 500

__all__ = ["Filters", "SearchHit", "SearchResponse", "natural_query", "search"]


def search(
    brain: Brain,
    query: str,
    *,
    identity: Identity,
    type: str | None = None,
    scope: str | None = None,
    scope_id: str | None = None,
    tags: Sequence[str] | None = None,
    limit: int = 10,
    as_of: float | None = None,
    embedder: SearchEmbedder,
    now: float | None = None,
    min_score: float | None = None,
    reranker: Reranker | None = None,
    tags_expr: str | None = None,
) -> SearchResponse:
    """Best-first traces for ``query`` among those ``identity`` sees passing every filter.

    ``identity``'s scope ids (when it is pinned) are a filter like the others.
    ``embedder`` embeds the query for the vector channel: a process passes its
    runtime's :attr:`~memory_core.runtime.Runtime.query_embedder`; None searches
    without the channel.
    ``min_score``: hits of lower relevance (:mod:`memory_core.retrieval.relevance`) are left
    out; None: the ``search_min_score`` setting; 0: none is.
    ``tags_expr``: a tag expression (:mod:`memory_core.retrieval.tagexpr`), a hard
    filter like ``tags``.
    ``reranker``: a second stage reorders the best ``rerank_candidates`` hits
    (:mod:`memory_core.retrieval.rerank`); None: the fused order stands.
    """
    within = acting(identity).within
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgument("query must be a non-empty string")
    check_text(query, "query")  # before it is embedded: bad text is the caller's fault
    filters = Filters(
        type=check_type(type) if type is not None else None,
        scope=check_scope(scope) if scope is not None else None,
        scope_id=scope_id,
        tags=tuple(check_tags(tags)),
        as_of=check_as_of(as_of),
        within=within,
    )
    limit = check_limit(limit)
    floor = check_min_score(min_score if min_score is not None else brain.settings.search_min_score)
    # An as-of search ranks as it would have then: recency, decay and "last week" from then.
    now = now if now is not None else filters.as_of if filters.as_of is not None else time.time()
    s = brain.settings
    depth = max(limit, s.search_candidates)
    degraded: list[str] = []
    counts = brain.state(lexical.TermCounts)
    # A confined caller's word statistics are its own: another tenant's words never
    # move its hits' relevance nor its query (memory_core.retrieval.own_counts).
    words = counts if within is None else brain.state(OwnCounts).of(within, counts)
    with brain.read() as conn:
        if tags_expr is not None:  # compiled in the snapshot it filters
            compiled = tagexpr.compile_expression(brain, conn, tags_expr, identity=identity)
            filters = replace(filters, expression=(compiled.sql, compiled.params))
        where, params = (None, {}) if filters.only_active() else filters.sql()
        vector_search = None
        if s.search_vector_weight > 0:
            vector_search = _start_vector(conn, brain, embedder, query, degraded)
        lex = lexical.rank(conn, query, where, params, depth, s, counts=counts, words=words)
        scores = None
        if vector_search is not None:
            selective = filters.scope_id is not None or within is not None
            scores = _degrading(degraded, vector_search.finish, conn, where, params, selective)
        similar = s.search_vector_min_similarity
        cands, scores = _candidates(conn, lex, scores, depth, where, params, similar)
        named = named_times.named_periods(query, now)
        answers, lifted = asking.answering(
            conn, brain, query, cands, scores, vector_search, where, params, now
        )
        ranked = _rank(cands, query, scores, now, s, [p for p, _ in named], lifted)
        ranked = coactivation.expand(conn, ranked, where, params, s.search_coactivation_weight)
        # Relevance needs the texts, and a memory's traces fold into one hit: read more
        # than ``limit`` of the best, which a floor and the folding may thin out (and, for
        # a question of now, as many as the latest answer is looked for among).
        # A question naming a time past ("what was Nate playing on 7 November 2022?") asks
        # of then, not now; one naming the present ("this year") still asks of now.
        now_asked = (
            s.search_latest_first
            and scores is not None
            and all(end > now for (_, end), _ in named)
            and asks_now(query)
        )
        wanted = max(limit, reranker.candidates) if reranker is not None else limit
        reads = max(wanted * (FLOOR_READS if floor > 0 else MEMORY_READS), wanted)
        best = ranked[: max(reads, latest.POOL * MEMORY_READS) if now_asked else reads]
        full = _traces(conn, [c.facts.seq for c in best])  # same snapshot as the ranking
        memories = {seq: trace.memory for seq, trace in full.items()}
        if now_asked and scores is not None and vector_search is not None:
            best = latest.first(
                conn,
                best,
                full,
                scores,
                query,
                model=vector_search.embedder.embedder.name,
                memory_of=memories,
                now=now,
            )
        best = quoted.after_quoted_sources(conn, best, full, query, memories)
        best = _small_talk_after(quoted.after_first_cited(conn, best, full, memories), full)
        successors = _successors(conn, full.values())
        weights = _query_weights(conn, words, query)
    hits = _hits(
        best,
        full,
        successors,
        _Judge(lex.mode, scores is not None, named, weights, answers, floor, now),
        wanted,
        lexical_scores=within is None,
    )
    if reranker is not None and len(hits) > 1:
        hits = _reranked(reranker, query, hits, degraded)
    hits = [replace(h, snippet=levels.snippet(h.trace.content, query)) for h in hits[:limit]]
    channels = ["bm25", *([VECTOR] if scores is not None else [])]
    return SearchResponse(hits, lex.mode, lex.query, degraded, channels)


def _reranked(
    reranker: Reranker, query: str, hits: list[SearchHit], degraded: list[str]
) -> list[SearchHit]:
    """The hits in the order the second stage and the fused scores give together; the
    fused order, and ``rerank`` among the degraded, when no endpoint answered."""
    got = reranker.scores(query, [h.trace.content for h in hits])
    if got is None:
        degraded.append(RERANK)
        return hits
    final = rerank.merged([h.score for h in hits], got, reranker.weight)
    order = sorted(range(len(hits)), key=lambda k: -final[k])
    return [
        replace(hits[k], score=final[k], adjustments={**hits[k].adjustments, RERANK: got[k]})
        for k in order
    ]


# The relevance of a statement of what the query asks ("what is my job": "I became a
# teacher"), whatever words they share.
ANSWERS_ASKED = 0.5
# What small talk's score is multiplied by, and its factor's name.
SMALL_TALK, SMALL_TALK_FACTOR = "small_talk", 0.7
# The share of its weight a query's word earns when a hit holds it only in its context
# (the turn before it), not in its own words.
CONTEXT_SHARE = 0.4
# With a floor, the texts of this many times ``limit`` of the best are read; without
# one, this many (a fact and its turn are one hit).
FLOOR_READS = 4
MEMORY_READS = 2


@dataclass(frozen=True)
class _Judge:
    """What a hit's relevance and validity are judged by."""

    mode: str  # how BM25 read the query
    vectors: bool  # the vector channel answered
    named: list[tuple[named_times.Period, str]]
    weights: dict[str, float]
    answers: frozenset[int]
    floor: float
    now: float

    def fit(self, c: ranking.Candidate, trace: Trace) -> float:
        """The hit's relevance (:mod:`memory_core.retrieval.relevance`)."""
        cosine = c.vector_score if self.vectors else None
        when = relevance.time_words(self.named, trace.occurred_at)
        own = relevance.coverage(self.weights, _own_text(trace), also=when)
        if self.mode == "fts" and c.bm25_score is not None and own > 0:
            share = 1.0  # the whole query matched, as FTS5 read it, in the trace's own words
        else:
            # Words found only in the turn before it (the context it is indexed with)
            # earn a share of their weight: the hit's own words answer, its neighbour's
            # only lead to it.
            beside = relevance.coverage(self.weights, _indexed_text(trace), also=when)
            if self.mode == "fts" and c.bm25_score is not None:
                beside = 1.0
            share = own + CONTEXT_SHARE * max(beside - own, 0.0)
        fit = relevance.relevance(cosine, share)
        if c.facts.seq in self.answers:  # it states what the query asks: it answers it
            fit = max(fit, ANSWERS_ASKED)
        if coactivation.FACTOR in c.factors:  # a strong hit's neighbour: given its chance
            fit = max(fit, self.floor)
        if SMALL_TALK in c.factors:  # sociable words say nothing a query asks of:
            fit *= SMALL_TALK_FACTOR  # its meaning alone, at most, says it is relevant
            fit = min(fit, cosine) if cosine is not None else fit
        return fit


def _hits(
    best: Sequence[ranking.Candidate],
    full: dict[int, Trace],
    successors: dict[str, Trace],
    judge: _Judge,
    limit: int,
    *,
    lexical_scores: bool,
) -> list[SearchHit]:
    """Up to ``limit`` hits, one a memory (a fact and its turn are one, the other
    attached), best first, each as relevant as the floor asks.  ``lexical_scores``
    False: each hit's BM25 channel says its rank alone (its score weighs words by the
    whole brain's statistics: not for a caller confined to scope ids)."""
    hits: list[SearchHit] = []
    by_memory: dict[str, SearchHit] = {}
    for c in best:
        trace = full[c.facts.seq]
        fit = judge.fit(c, trace)
        if fit < judge.floor:
            continue
        memory = trace.memory
        if (first := by_memory.get(memory)) is not None:
            first.attached.append(trace)  # the turn of a fact, or a fact of the turn
            continue
        hit = SearchHit(
            trace,
            c.score,
            c.strength,
            c.channels(lexical_score=lexical_scores),
            c.fused,
            dict(c.factors),
            fit,
            successors.get(trace.superseded_by or ""),
            trace.valid_until is None or trace.valid_until > judge.now,
        )
        by_memory[memory] = hit
        hits.append(hit)
        if len(hits) == limit:
            break
    return hits


def _query_weights(conn: Connection, words: lexical.WordCounts, query: str) -> dict[str, float]:
    """The idf weight of each of the query's words, from ``words``' counts."""
    stems = relevance.query_stems(query)
    if not stems:
        return {}
    total = words.size(conn)
    df = words.df(conn, total, stems)
    return relevance.query_weights(stems, df, total)


def _small_talk_after(
    best: list[ranking.Candidate], full: dict[int, Trace]
) -> list[ranking.Candidate]:
    """``best`` with each memory that is small talk and nothing more (what the user
    said in it: "Thanks so much, have a great evening!") scored at
    :data:`SMALL_TALK_FACTOR` (the factor ``small_talk``), and the order its scores
    give: a word it shares with the query ("how much coffee") never puts it above a
    statement that answers."""
    said = [said_in(full[c.facts.seq].content) for c in best]
    chatter = only_small_talk(said)
    if not any(chatter):
        return best
    for c, sociable in zip(best, chatter, strict=True):
        if sociable:
            c.factors[SMALL_TALK] = SMALL_TALK_FACTOR
    return sorted(best, key=lambda c: -c.score)


def _own_text(trace: Trace) -> str:
    """A trace's own words: its content and tags, without the context it is indexed with."""
    return " ".join([trace.content, *trace.tags])


def _indexed_text(trace: Trace) -> str:
    """What the full-text index holds of a trace: its content, tags and context (the
    turn before it, through which it is found too)."""
    return " ".join([trace.content, *trace.tags, trace.context])


def _start_vector(
    conn: Connection, brain: Brain, embedder: SearchEmbedder, query: str, degraded: list[str]
) -> dense.VectorSearch | None:
    """The vector channel started, or None (no channel, or degraded: noted in ``degraded``)."""
    if embedder is None:
        return None
    if isinstance(embedder, Unusable):
        log.debug("search without its vector channel: %s", embedder.reason)
        degraded.append(VECTOR)
        return None
    if not isinstance(embedder, QueryEmbedder):  # a bare embedder: the brain's wrapper of it
        embedder = brain.state(QueryEmbedders).wrap(embedder, brain.settings)
    return _degrading(degraded, dense.start, conn, brain, embedder, query)


def _degrading(degraded: list[str], step: Callable[..., T], *args: Any) -> T | None:
    """``step(*args)``, or None with the vector channel noted in ``degraded`` when it fails.

    The channel is optional: whatever keeps it from answering, a bug included,
    must not fail the search.  Its failures are logged where they happen
    (the embedder's, once per failure), so here only at debug level.
    """
    try:
        return step(*args)
    except ChannelUnavailable as e:
        log.debug("search without its vector channel: %s", e)
    except Exception:
        log.exception("search without its vector channel")
    degraded.append(VECTOR)
    return None


def _rank(
    cands: list[ranking.Candidate],
    query: str,
    scores: dense.VectorScores | None,
    now: float,
    s: Settings,
    periods: Sequence[named_times.Period],
    asked: frozenset[int] = frozenset(),
) -> list[ranking.Candidate]:
    """Fuse, adjust and order the candidates, as the settings say."""
    if s.search_fusion == "rrf":
        ranking.fuse_rrf(cands, s.search_rrf_k, s.search_vector_weight if scores else 0.0)
    else:
        ranking.fuse_minmax(cands, scores, s.search_vector_weight)
    boosted = periods if s.search_time_boost > 0 else []
    adj = ranking.Adjustments.from_settings(s, now)
    ranking.adjust(cands, query, boosted, adj, asked)
    return ranking.order(cands)


def _candidates(
    conn: Connection,
    lex: lexical.LexicalRanking,
    scores: dense.VectorScores | None,
    depth: int,
    where: str | None,
    params: dict[str, Any],
    floor: float,
) -> tuple[list[ranking.Candidate], dense.VectorScores | None]:
    """The union of both channels' best ``depth``, checked against the filters.

    Returns the candidates and the vector scores they were ranked on.
    """
    bm25 = {seq: (rank, score) for rank, (seq, score) in enumerate(lex.ranked, start=1)}
    facts = lex.facts
    vector: dict[int, tuple[int, float]] = {}
    if scores is not None:
        ranked, more, scores = _vector_best(conn, scores, lex.facts, depth, where, params, floor)
        facts = {**more, **lex.facts}
        vector = {seq: (rank, score) for rank, (seq, score) in enumerate(ranked, start=1)}
    if scores is not None:
        scores.prepare([seq for seq in bm25 if seq not in vector])
    cands = []
    for seq, f in facts.items():
        if seq not in bm25 and seq not in vector:
            continue
        c = ranking.Candidate(f)
        if seq in bm25:
            c.bm25_rank, c.bm25_score = bm25[seq]
        if seq in vector:
            c.vector_rank, c.vector_score = vector[seq]
        elif scores is not None:
            c.vector_score = scores.of(seq)
        cands.append(c)
    return cands, scores


# Rows checked against a filter, as a multiple of the depth, before the vector
# channel reads every row the filter allows instead.
_WIDEST = 16


def _vector_best(
    conn: Connection,
    scores: dense.VectorScores,
    known: dict[int, ranking.Facts],
    depth: int,
    where: str | None,
    params: dict[str, Any],
    floor: float,
) -> tuple[list[tuple[int, float]], dict[int, ranking.Facts], dense.VectorScores]:
    """The vector channel's best ``depth`` that pass the filters, with their facts.

    Scores not yet restricted to the filters (no filter, or not a selective
    one) are checked best first, widening until ``depth`` pass; a filter
    that lets too few through is then applied to every row instead.
    """
    facts: dict[int, ranking.Facts] = {}

    def passing(seqs: Sequence[int]) -> set[int]:
        facts.update(
            _facts(conn, [q for q in seqs if q not in known and q not in facts], where, params)
        )
        return {q for q in seqs if q in facts or q in known}

    want = depth
    while True:
        ranked, exhausted = scores.best_passing(want, floor, passing)
        if len(ranked) >= depth or exhausted:
            return ranked[:depth], facts, scores
        if want >= _WIDEST * depth and where is not None:
            scores = scores.restricted(dense.allowed_rows(conn, scores.snapshot, where, params))
            want = depth
            continue
        want *= 4


def _in_chunks(seqs: Sequence[int]) -> list[str]:
    unique = list(dict.fromkeys(int(seq) for seq in seqs))
    return [
        ", ".join(str(seq) for seq in unique[lo : lo + _ID_CHUNK])
        for lo in range(0, len(unique), _ID_CHUNK)
    ]


def _facts(
    conn: Connection, seqs: Sequence[int], where: str | None, params: dict[str, Any]
) -> dict[int, ranking.Facts]:
    """What ranking needs of the traces among ``seqs`` that pass the filters."""
    condition = where or "t.deleted = 0"
    out: dict[int, ranking.Facts] = {}
    # The driver's cursor: this runs for every candidate of every search.
    with raw_cursor(conn) as cursor:
        for marks in _in_chunks(seqs):
            sql = (
                f"SELECT {ranking.FACT_COLUMNS} FROM memory_traces t "
                f"WHERE t.seq IN ({marks}) AND {condition}"
            )
            for row in cursor.execute(sql, params):
                out[int(row[0])] = ranking.Facts.from_row(row)
    return out


def _successors(conn: Connection, traces: Iterable[Trace]) -> dict[str, Trace]:
    """The traces that superseded these, by id."""
    wanted = sorted({t.superseded_by for t in traces if t.superseded_by is not None})
    if not wanted:
        return {}
    marks = ", ".join(f":s{i}" for i in range(len(wanted)))
    rows = conn.execute(
        text(f"SELECT * FROM memory_traces WHERE id IN ({marks})"),
        {f"s{i}": v for i, v in enumerate(wanted)},
    )
    return {(t := Trace.from_row(r)).id: t for r in rows}


def _traces(conn: Connection, seqs: Sequence[int]) -> dict[int, Trace]:
    """The full rows of ``seqs``, by seq (on the driver's cursor, as :func:`_facts`)."""
    out: dict[int, Trace] = {}
    with raw_cursor(conn) as cursor:
        for marks in _in_chunks(seqs):
            cursor.execute(f"SELECT * FROM memory_traces WHERE seq IN ({marks})")
            names = [d[0] for d in cursor.description]
            for row in cursor.fetchall():
                trace = Trace.from_mapping(dict(zip(names, row, strict=True)))
                out[trace.seq] = trace
    return out
