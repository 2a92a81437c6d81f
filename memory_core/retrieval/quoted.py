"""A memory quoted goes ahead of the insight that cites it, and so does the best of
the statements an insight sums up, when it ranks among the first few.

An insight (a digest the dream pass derived, tagged ``derived``) restates what
the memories it cites said, so it matches their words.  When a query quotes one
of them nearly word for word ("Nice work, Maria"), the memory is what was asked
for: the insight goes right after it, not above it, its score lowered to say so (the
factor ``after_quoted``).  An insight ranked first gives way, the same way, to the
best of the statements it cites among the first :data:`FIRST_DEPTH` memories (the
factor ``after_cited``): the statement is what answers, the insight only sums it up
(on the shared LoCoMo conversations after a month of passes, MRR 62.4 -> 61.6; the
month's passes still cost none against before them, 61.8).  Nothing joins or leaves
the results.
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
# An insight moved after a memory it cites scores this much below it.
FACTOR = "after_quoted"
LOWER = 1.001


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
    if not any(DERIVED in full[c.facts.seq].tags for c in ranked):
        return out
    quoted_at = {
        k
        for k, c in enumerate(ranked)
        if DERIVED not in full[c.facts.seq].tags and quotes(query, full[c.facts.seq].content)
    }
    insights = [
        c
        for k, c in enumerate(ranked)
        if DERIVED in full[c.facts.seq].tags and any(q > k for q in quoted_at)
    ]
    if not insights:  # nothing quoted below an insight: nothing to read or move
        return out
    cited = _cited_memories(conn, [full[c.facts.seq] for c in insights])
    quoted = {ranked[k].facts.seq for k in quoted_at}
    for insight in insights:
        at = out.index(insight)
        below = [
            k
            for k in range(at + 1, len(out))
            if out[k].facts.seq in quoted
            and memory_of[out[k].facts.seq] in cited[full[insight.facts.seq].id]
        ]
        if below:
            out.insert(below[-1], out.pop(at))  # after it: the pop shifted it up by one
            # Its score says it: just below the memory it now follows, the factor shown.
            before = out[below[-1] - 1].score
            if 0 < before < insight.score:
                insight.factors[FACTOR] = before / LOWER / insight.score
    return out


# How many of the best memories a statement an insight cites must be among for the
# insight to give it first place; the factor of an insight moved after it.
FIRST_DEPTH = 6
CITED_FACTOR = "after_cited"


def after_first_cited(
    conn: Connection,
    ranked: Sequence[ranking.Candidate],
    full: dict[int, Trace],
    memory_of: dict[int, str],
) -> list[ranking.Candidate]:
    """``ranked`` with an insight ranked first moved right after the best of the
    memories it cites among the first :data:`FIRST_DEPTH`: the statement says what
    the insight only sums up, and is what answers."""
    out = list(ranked)
    if not out or DERIVED not in full[out[0].facts.seq].tags:
        return out
    insight = out[0]
    cited = _cited_memories(conn, [full[insight.facts.seq]])[full[insight.facts.seq].id]
    seen: list[str] = []
    for c in out[1:]:
        memory = memory_of[c.facts.seq]
        if memory not in seen:
            seen.append(memory)
        if len(seen) > FIRST_DEPTH:
            break
        if memory in cited and DERIVED not in full[c.facts.seq].tags:
            last = max(j for j, d in enumerate(out) if memory_of[d.facts.seq] == memory)
            out.insert(last, out.pop(0))  # after it: the pop shifted it up by one
            before = out[last - 1].score
            if 0 < before < insight.score:
                insight.factors[CITED_FACTOR] = before / LOWER / insight.score
            break
    return out


def _cited_memories(conn: Connection, insights: Sequence[Trace]) -> dict[str, set[str]]:
    """The memories each insight cites, by its id: each cited trace, and the turn a
    cited fact was drawn from (one read for them all)."""
    ids = sorted({t for insight in insights for t in insight.cited})
    rows = conn.execute(
        text("SELECT * FROM memory_traces WHERE id IN (SELECT value FROM json_each(:ids))"),
        {"ids": json.dumps(ids)},
    ).all()
    memory = {trace.id: trace.memory for trace in map(Trace.from_row, rows)}
    return {
        insight.id: {*insight.cited, *(memory[t] for t in insight.cited if t in memory)}
        for insight in insights
    }
