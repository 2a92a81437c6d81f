"""A query that asks the value of something ("what is my job"): the statements holding
of it join the candidates, and those that changed an earlier value are lifted.

The slots a query asks come from :func:`memory_core.supersession.asked` (its words,
and its vector when the vector channel answered).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, text

from memory_core import supersession
from memory_core.brain.db import Brain
from memory_core.retrieval import dense, ranking


def _asked(
    brain: Brain,
    query: str,
    scores: dense.VectorScores | None,
    vector_search: dense.VectorSearch | None,
) -> frozenset[str]:
    """The slots the query asks the value of (by its words, and by its vector when the
    vector channel answered); none when asking lifts nothing."""
    if brain.settings.search_asked_boost <= 0:
        return frozenset()
    if scores is None or vector_search is None:
        return supersession.asked(query, None, brain, None)
    return supersession.asked(query, scores.query, brain, vector_search.embedder.embedder)


# How many of the statements holding of what a query asks join its candidates.
_STATEMENTS_ASKED = 10


def _statements_of(
    conn: Connection,
    asked: frozenset[str],
    cands: Sequence[ranking.Candidate],
    scores: dense.VectorScores | None,
    where: str | None,
    params: dict[str, Any],
    now: float,
) -> list[ranking.Candidate]:
    """The statements holding at ``now`` of the slots a query asks, that no channel found:
    "what is my job" finds "I became a teacher" though neither word is in it.  They
    rank as any candidate (on the vector channel's score of them, when it answered)."""
    if not asked:
        return []
    known = {c.facts.seq for c in cands}
    marks = " OR ".join(
        f"t.slot = :a_slot{i} OR t.slot LIKE :a_topic{i}" for i in range(len(asked))
    )
    slots = {f"a_slot{i}": slot for i, slot in enumerate(sorted(asked))}
    topics = {f"a_topic{i}": f"{slot}:%" for i, slot in enumerate(sorted(asked))}
    rows = conn.execute(
        text(
            f"SELECT {ranking.FACT_COLUMNS} FROM memory_traces t "
            f"WHERE ({marks}) AND (t.valid_until IS NULL OR t.valid_until > :a_now) "
            f"AND {where or 't.deleted = 0'} ORDER BY t.occurred_at DESC LIMIT :a_n"
        ),
        {**params, **slots, **topics, "a_now": now, "a_n": _STATEMENTS_ASKED},
    ).all()
    found = []
    if scores is not None:
        scores.prepare([int(row[0]) for row in rows])
    for row in rows:
        facts = ranking.Facts.from_row(row)
        if facts.seq in known:
            continue
        c = ranking.Candidate(facts)
        if scores is not None:
            c.vector_score = scores.of(facts.seq)
        found.append(c)
    return found


def answering(
    conn: Connection,
    brain: Brain,
    query: str,
    cands: list[ranking.Candidate],
    scores: dense.VectorScores | None,
    vector_search: dense.VectorSearch | None,
    where: str | None,
    params: dict[str, Any],
    now: float,
) -> tuple[frozenset[int], frozenset[int]]:
    """What the query asks the value of, answered: the statements of it holding at
    ``now`` join ``cands`` (in place); returns those among the candidates (by seq),
    and those of them that changed an earlier value (lifted)."""
    asked = _asked(brain, query, scores, vector_search)
    cands += _statements_of(conn, asked, cands, scores, where, params, now)
    answers = _answers(asked, cands, now)
    return answers, (_changed(conn, answers) if answers else answers)


def _answers(
    asked: frozenset[str], cands: Sequence[ranking.Candidate], now: float
) -> frozenset[int]:
    """The candidates (by seq) stating, as of ``now``, the value of a slot the query asks."""
    return frozenset(
        c.facts.seq
        for c in cands
        if c.facts.slot is not None
        and c.facts.slot.split(":", 1)[0] in asked
        and (c.facts.valid_until is None or c.facts.valid_until > now)
    )


def _changed(conn: Connection, answers: frozenset[int]) -> frozenset[int]:
    """Of these, the ones that superseded an earlier statement: the latest value of
    something that changed, lifted so that it ranks above the older values (a
    statement with no history ranks as any other)."""
    if not answers:
        return frozenset()
    marks = ", ".join(str(seq) for seq in sorted(answers))
    rows = conn.execute(
        text(
            f"SELECT t.seq FROM memory_traces t WHERE t.seq IN ({marks}) AND EXISTS "
            "(SELECT 1 FROM memory_traces p WHERE p.superseded_by = t.id)"
        )
    )
    return frozenset(int(r[0]) for r in rows)
