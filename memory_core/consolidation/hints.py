"""Duplicate hints on write: the memories a new one says again, exactly or nearly.

An agent that adds a memory it already has should hear so, and may merge instead.
Exact: an active memory of the same scope id with the same words.  Near: one of
the best few a search for the new words finds in that scope id whose vector is at
least ``REVERIE_DREAM_MERGE_THRESHOLD`` close to the new words and which the merge
verifier (:mod:`.verify`, with the embedder's word similarity) calls the same fact
-- the judgement a dream pass makes before it proposes a merge, so a changed
number, date, name or negation, a change told ("the key moved: ..."), or two facts
that share only a name ("I'm Zoe." / "Zoe has two cats.") are never hinted.
Without an embedder there is no near hint: words alone cannot weigh meaning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import text

from memory_core.auth import Identity
from memory_core.brain.db import Brain
from memory_core.consolidation.base import EmbeddingWordSimilarity
from memory_core.consolidation.verify import verify
from memory_core.embedders.base import Embedder
from memory_core.errors import EmbedderError
from memory_core.retrieval.query_embedding import QueryEmbedder, SearchEmbedder, Unusable
from memory_core.retrieval.search import SearchHit, search
from memory_core.textutil import content_hash

# How many of a search's best hits are put to the verifier.
CANDIDATES = 5


@dataclass(frozen=True)
class Duplicate:
    """An existing memory a new one repeats: ``score`` 1 for the same words, else the
    cosine of its vector and the new words'."""

    id: str
    kind: str  # exact | near
    score: float
    content: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "score": self.score, "content": self.content}


def duplicates_of(
    brain: Brain,
    trace_id: str,
    content: str,
    *,
    scope: str,
    scope_id: str | None,
    identity: Identity,
    embedder: SearchEmbedder = None,
) -> list[Duplicate]:
    """The active memories of ``scope``/``scope_id`` (other than ``trace_id``, the new
    one) that say ``content`` again: exact ones first, then near ones, best first."""
    with brain.read() as conn:
        rows = conn.execute(
            text(
                "SELECT id FROM memory_traces WHERE content_hash = :h AND content = :c "
                "AND scope = :s AND scope_id IS NOT DISTINCT FROM :sid AND deleted = 0 "
                "AND id != :id ORDER BY created_at, id"
            ),
            {"h": content_hash(content), "c": content, "s": scope, "sid": scope_id, "id": trace_id},
        ).scalars()
        found = [Duplicate(str(r), "exact", 1.0, content) for r in rows]
    seen = {trace_id, *(d.id for d in found)}
    hits = search(
        brain,
        content,
        scope=scope,
        scope_id=scope_id,
        limit=CANDIDATES + len(seen),
        identity=identity,
        embedder=embedder,
    ).results
    model = _embedder(embedder)
    if model is None:
        return found
    words = EmbeddingWordSimilarity(model)
    threshold = brain.settings.dream_merge_threshold
    others = [h for h in hits if h.trace.id not in seen and h.trace.scope_id == scope_id]
    for hit, cosine in zip(others, _cosines(model, content, others), strict=True):
        if len(found) >= CANDIDATES:
            break
        other = hit.trace
        if cosine is None or cosine < threshold:
            continue
        if verify(other.content, content, similarity=words).duplicate:
            found.append(Duplicate(other.id, "near", round(cosine, 4), other.content))
    return found


def _cosines(model: Embedder, content: str, hits: list[SearchHit]) -> list[float | None]:
    """The cosine of each hit to ``content``: the vector channel's score of it, which
    compared it with the new words already, or -- for a memory written too recently to
    have its vector -- its words and the new ones embedded together; None when
    embedding fails."""
    scored = [h.channels.get("vector", {}).get("score") for h in hits]
    missing = [k for k, cosine in enumerate(scored) if cosine is None]
    if missing:
        try:
            vectors = np.asarray(model.embed([content, *(hits[k].trace.content for k in missing)]))
        except EmbedderError:
            return scored
        for k, v in zip(missing, vectors[1:], strict=True):
            scored[k] = float(v @ vectors[0])
    return scored


def _embedder(embedder: SearchEmbedder) -> Embedder | None:
    """The model under the search's embedder, when there is a usable one."""
    if isinstance(embedder, QueryEmbedder):
        return embedder.embedder
    if embedder is None or isinstance(embedder, Unusable):
        return None
    return embedder
