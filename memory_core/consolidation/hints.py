"""Duplicate hints on write: the memories a new one says again, exactly or nearly.

An agent that adds a memory it already has should hear so, and may merge instead.
Exact: an active memory of the same scope id with the same words.  Near: one of
the best few a search for the new words finds in that scope id (by meaning and
words, as any search), which the merge verifier (:mod:`.verify`) calls the same
fact -- the same judgement a dream pass makes before it proposes a merge, so a
changed number, date, name or negation is never hinted as a duplicate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import text

from memory_core.auth import Identity
from memory_core.brain.db import Brain
from memory_core.consolidation.verify import verify
from memory_core.retrieval.query_embedding import SearchEmbedder
from memory_core.retrieval.search import search
from memory_core.textutil import content_hash

# How many of a search's best hits are put to the verifier.
CANDIDATES = 5


@dataclass(frozen=True)
class Duplicate:
    """An existing memory a new one repeats: ``score`` 1 for the same words, else the
    search's relevance of it to the new words."""

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
    for hit in hits:
        other = hit.trace
        if other.id in seen or other.scope_id != scope_id or len(found) >= CANDIDATES:
            continue
        if verify(other.content, content).duplicate:
            found.append(Duplicate(other.id, "near", round(hit.relevance, 4), other.content))
    return found
