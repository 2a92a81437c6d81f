"""Fusion and adjustments: from each channel's ranking to one order.

Pure functions over the candidates a search gathered.  Fusion is either a
convex mix of min-max scaled scores (default: BM25 over its best match,
cosine over the spread of every allowed trace) or reciprocal rank fusion.
Then each switchable adjustment multiplies the fused score by a factor that
is 1 when it does not apply: the speaker a query names, a time it names,
decayed strength, recency, importance, and a statement superseded by a later
one of the same thing (by the search's time: ``as_of`` ranks what held then).
Every factor is kept, so each result can say why it ranks where it does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from memory_core.language.periods import Period
from memory_core.retrieval.dense import VectorScores
from memory_core.settings import Settings
from memory_core.textutil import words
from memory_core.traces.decay import DAY, effective_strength
from memory_core.traces.model import FACT_TAG


class Facts(NamedTuple):
    """What ranking reads of a trace (the full row is fetched for the winners only)."""

    seq: int
    occurred_at: float
    importance: float
    strength: float
    stability: float
    last_accessed: float | None
    retrieval_count: int
    speaker: str | None
    valid_until: float | None  # when a later statement superseded it
    slot: str | None  # what it states a value of ("user/residence")
    fact: bool  # a fact drawn from a turn (or an imported exchange)
    learnt_at: float  # when this brain learnt it (stored, or imported)

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> Facts:
        """From the columns of :data:`FACT_COLUMNS`, in order."""
        return cls._make(row)


# The columns of memory_traces ``t`` that make a trace's :class:`Facts`, in order.
FACT_COLUMNS = (
    "t.seq, t.occurred_at, t.importance, t.strength, t.stability, t.last_accessed, "
    "t.retrieval_count, CASE WHEN json_type(t.metadata, '$.speaker') = 'text' "
    "THEN nullif(trim(json_extract(t.metadata, '$.speaker')), '') END, t.valid_until, t.slot, "
    f"t.tags LIKE '%\"{FACT_TAG}\"%', coalesce(t.learnt_at, t.created_at)"
)


@dataclass
class Candidate:
    """A trace some channel found, with what each channel said of it."""

    facts: Facts
    bm25_rank: int | None = None
    bm25_score: float | None = None
    vector_rank: int | None = None
    vector_score: float | None = None
    strength: float = 0.0
    fused: float = 0.0
    factors: dict[str, float] = field(default_factory=dict)

    @property
    def score(self) -> float:
        """The fused score times every factor."""
        value = self.fused
        for factor in self.factors.values():
            value *= factor
        return value

    def channels(self, *, lexical_score: bool = True) -> dict[str, dict[str, Any]]:
        """Each channel's rank and score of this trace, for the result's breakdown
        (``lexical_score`` False: BM25's rank alone)."""
        out: dict[str, dict[str, Any]] = {}
        if self.bm25_score is not None:
            out["bm25"] = {"rank": self.bm25_rank}
            if lexical_score:
                out["bm25"]["score"] = round(self.bm25_score, 6)
        if self.vector_score is not None:
            out["vector"] = {"rank": self.vector_rank, "score": round(self.vector_score, 6)}
        return out


def fuse_minmax(cands: Sequence[Candidate], dense: VectorScores | None, weight: float) -> None:
    """fused = (1 - w) * bm25 / best bm25 + w * min-max scaled cosine.

    A trace without a vector yet (just written) takes its BM25 share for the
    vector share too, rather than a zero that would sink it.
    """
    best = max((c.bm25_score for c in cands if c.bm25_score is not None), default=0.0)
    for c in cands:
        lexical = c.bm25_score / best if c.bm25_score is not None and best > 0 else 0.0
        if dense is None or weight == 0:
            c.fused = lexical
            continue
        semantic = dense.normalised(c.vector_score) if c.vector_score is not None else lexical
        c.fused = (1.0 - weight) * lexical + weight * semantic


def fuse_rrf(cands: Sequence[Candidate], k: float, weight: float) -> None:
    """fused = (1 - w) / (k + BM25 rank) + w / (k + vector rank), over the ranks present."""
    for c in cands:
        c.fused = 0.0
        if c.bm25_rank is not None:
            c.fused += (1.0 - weight) / (k + c.bm25_rank)
        if c.vector_rank is not None:
            c.fused += weight / (k + c.vector_rank)


def named_speaker(query: str, cands: Sequence[Candidate]) -> str | None:
    """The one speaker (``metadata.speaker``) of the candidates that the query names.

    Named means by first name, in any case; None unless exactly one is.
    """
    asked = set(words(query))
    named = set()
    for c in cands:
        speaker = c.facts.speaker
        if speaker is not None and (first := words(speaker)[:1]) and first[0] in asked:
            named.add(speaker)
    return named.pop() if len(named) == 1 else None


@dataclass(frozen=True)
class Adjustments:
    """The factors' weights (each 0 switches its factor off) and the time now."""

    speaker_boost: float
    time_boost: float
    strength_weight: float
    recency_weight: float
    recency_half_life_days: float
    importance_weight: float
    superseded_factor: float
    fact_factor: float
    asked_boost: float
    decay_base_days: float
    decay_growth: float
    now: float

    @classmethod
    def from_settings(cls, s: Settings, now: float) -> Adjustments:
        """The weights the settings give, at time ``now``."""
        return cls(
            speaker_boost=s.search_speaker_boost,
            time_boost=s.search_time_boost,
            strength_weight=s.search_strength_weight,
            recency_weight=s.search_recency_weight,
            recency_half_life_days=s.search_recency_half_life_days,
            importance_weight=s.search_importance_weight,
            superseded_factor=s.search_superseded_factor,
            fact_factor=s.search_fact_factor,
            asked_boost=s.search_asked_boost,
            decay_base_days=s.decay_base_stability_days,
            decay_growth=s.decay_stability_growth,
            now=now,
        )


# The factor of a statement superseded by the search's time.
SUPERSEDED = "superseded"


def adjust(
    cands: Sequence[Candidate],
    query: str,
    periods: Sequence[Period],
    adj: Adjustments,
    asked: frozenset[int] = frozenset(),
) -> None:
    """Compute each candidate's strength and factors; ``asked``: the candidates (by seq)
    that state the current value of what the query asks, lifted."""
    speaker = named_speaker(query, cands) if adj.speaker_boost > 0 else None
    speaker_factor = 1.0 + adj.speaker_boost
    time_factor = 1.0 + adj.time_boost
    recency_rate = math.log(2.0) / (adj.recency_half_life_days * DAY)
    for c in cands:
        t = c.facts
        c.strength = effective_strength(
            t.strength,
            last_accessed=t.last_accessed,
            learnt_at=t.learnt_at,
            retrieval_count=t.retrieval_count,
            stability=t.stability,
            now=adj.now,
            base_days=adj.decay_base_days,
            growth=adj.decay_growth,
        )
        factors: dict[str, float] = {}
        if speaker is not None and t.speaker == speaker:
            factors["speaker"] = speaker_factor
        if periods and adj.time_boost > 0 and any(a <= t.occurred_at < b for a, b in periods):
            factors["time"] = time_factor
        if adj.strength_weight > 0:
            factors["strength"] = 1.0 - adj.strength_weight + adj.strength_weight * c.strength
        if adj.recency_weight > 0:
            lift = math.exp(-max(adj.now - t.occurred_at, 0.0) * recency_rate)
            factors["recency"] = 1.0 + adj.recency_weight * lift
        if adj.importance_weight > 0:
            factors["importance"] = 1.0 + adj.importance_weight * (t.importance - 0.5)
        if t.valid_until is not None and t.valid_until <= adj.now:
            factors[SUPERSEDED] = adj.superseded_factor
        elif t.seq in asked and adj.asked_boost > 0:
            factors["asked"] = 1.0 + adj.asked_boost
        if t.fact and adj.fact_factor < 1.0:
            factors["fact"] = adj.fact_factor
        c.factors = factors


def order(cands: Sequence[Candidate]) -> list[Candidate]:
    """Best first; ties go to the better BM25 rank, then to the older trace."""
    big = 1 << 30
    return sorted(
        cands,
        key=lambda c: (-c.score, c.bm25_rank or big, c.vector_rank or big, c.facts.seq),
    )
