"""A memory quoted goes ahead of the insight that cites it.

An insight (a digest the dream pass derived, tagged ``derived``) restates what
the memories it cites said, so it matches their words.  When a query quotes one
of them nearly word for word ("Nice work, Maria"), the memory is what was asked
for: the insight goes right after it, not above it.  Only the order changes;
nothing joins or leaves the results.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from sqlalchemy import Connection, text

from memory_core.retrieval import ranking
from memory_core.textutil import content_words, words
from memory_core.traces.model import Trace

DERIVED = "derived"
# A query quotes a memory when at least this share of its content words are the
# memory's, and it has at least this many.
QUOTED_SHARE = 0.8
MIN_QUOTED_WORDS = 2


def quotes(query: str, content: str) -> bool:
    """Whether ``query`` quotes ``content`` nearly word for word."""
    asked = content_words(query)
    if len(asked) < MIN_QUOTED_WORDS:
        return False
    said = set(words(content))
    return sum(w in said for w in asked) >= QUOTED_SHARE * len(asked)


def after_quoted_sources(
    conn: Connection,
    ranked: Sequence[ranking.Candidate],
    full: dict[int, Trace],
    query: str,
    memory_of: dict[int, str],
) -> list[ranking.Candidate]:
    """``ranked`` with each insight moved right after the last memory it cites that the
    query quotes and that it was ranked above."""
    out = list(ranked)
    for insight in [c for c in ranked if DERIVED in full[c.facts.seq].tags]:
        cited = _cited_memories(conn, full[insight.facts.seq])
        at = out.index(insight)
        quoted = [
            k
            for k in range(at + 1, len(out))
            if memory_of[out[k].facts.seq] in cited
            and quotes(query, full[out[k].facts.seq].content)
        ]
        if quoted:
            out.insert(quoted[-1], out.pop(at))  # after it: the pop shifted it up by one
    return out


def _cited_memories(conn: Connection, insight: Trace) -> set[str]:
    """The memories an insight cites: each cited trace, and the turn a cited fact was
    drawn from."""
    ids = insight.cited
    if not ids:
        return set()
    rows = conn.execute(
        text(
            "SELECT id, metadata FROM memory_traces WHERE id IN (SELECT value FROM json_each(:ids))"
        ),
        {"ids": json.dumps(ids)},
    ).all()
    memories = set(ids)
    for row in rows:
        turn = json.loads(row.metadata).get("turn_id")
        if isinstance(turn, str) and turn:
            memories.add(f"turn:{turn}")
    return memories
