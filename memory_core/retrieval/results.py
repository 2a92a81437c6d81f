"""What a search answers: its hits, each with how it was reached and what replaced it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory_core import timeref
from memory_core.traces import levels
from memory_core.traces.model import Trace


@dataclass(frozen=True)
class SearchHit:
    """One result: the trace, its final score and how it was reached."""

    trace: Trace
    score: float
    strength: float
    channels: dict[str, dict[str, Any]]
    fused: float = 0.0
    adjustments: dict[str, float] = field(default_factory=dict)
    relevance: float = 0.0
    # The statement that superseded this one (None: it is current, or states nothing).
    successor: Trace | None = None
    # Whether it held at the search's time (now, or ``as_of``).
    current: bool = True
    # The other traces of the same memory that matched: a fact's turn, a turn's facts.
    attached: list[Trace] = field(default_factory=list)
    # The passage that matched the query (levels.snippet); "" when not made.
    snippet: str = ""

    def validity(self) -> dict[str, Any]:
        """When the hit held, and what replaced it: the part every view of a hit shows."""
        t = self.trace
        out: dict[str, Any] = {
            "current": self.current,
            "valid_from": timeref.iso(t.valid_from),
            "valid_until": timeref.iso(t.valid_until) if t.valid_until is not None else None,
        }
        if t.superseded_by is not None:
            successor = self.successor
            out["superseded_by"] = {
                "id": t.superseded_by,
                **({"content": successor.content} if successor is not None else {}),
                **(
                    {"occurred_at": timeref.iso(successor.occurred_at)}
                    if successor is not None
                    else {}
                ),
            }
        return out

    def to_dict(self) -> dict[str, Any]:
        t = self.trace
        return {
            "id": t.id,
            "content": t.content,
            "abstract": levels.abstract(t),
            "snippet": self.snippet or levels.abstract(t),
            "type": t.type,
            "scope": t.scope,
            "scope_id": t.scope_id,
            "tags": t.tags,
            "strength": round(self.strength, 6),
            "score": round(self.score, 6),
            "fused": round(self.fused, 6),
            "channels": self.channels,
            "adjustments": {k: round(v, 6) for k, v in self.adjustments.items()},
            "relevance": round(self.relevance, 6),
            "occurred_at": timeref.iso(t.occurred_at),
            "created_at": timeref.iso(t.created_at),
            **self.validity(),
            "attached": self.attached_view(),
            "metadata": t.metadata,
        }

    def attached_view(self) -> list[dict[str, Any]]:
        """The other traces of the hit's memory that matched, briefly."""
        return [{"id": a.id, "type": a.type, "content": a.content} for a in self.attached]


@dataclass(frozen=True)
class SearchResponse:
    """A search's results, how BM25 read the query, and the channels used or missed."""

    results: list[SearchHit]
    mode: str  # how BM25 read the query: "fts" or "natural"
    fts_query: str
    degraded: list[str] = field(default_factory=list)
    channels: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "results": [h.to_dict() for h in self.results],
            "mode": self.mode,
            "query": self.fts_query,
            "channels": self.channels,
            "degraded": self.degraded,
        }
