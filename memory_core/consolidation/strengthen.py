"""Strengthen: learn from what search returned since the last pass.

Search enqueues retrieval events (the read path writes nothing else); the
feedback job bumps each returned trace's retrieval count and last access.
Here, unattended, the pass turns the events into Hebbian co-activation edges
between traces returned together near the top (and, more strongly, between the
results a caller reported used for one search), and grows the stability of
traces that keep being retrieved (spaced repetition: stability grows with
the logarithm of retrievals, so reinforcement saturates instead of pinning a
trace at full strength forever).  Events are marked consolidated in the same
transaction, so each is learned from once.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations

from sqlalchemy import text

from memory_core.consolidation.base import PassContext, StepResult
from memory_core.retrieval.feedback import used_search

COACTIVATION_TOP = 5
# What results reported used for one search add to their edge: used together is what
# co-activation is (:data:`memory_core.retrieval.coactivation.FULL` is full strength).
USED_TOGETHER = 3
MAX_EVENTS = 100_000
STABILITY_GAIN = 0.2
STABILITY_CAP = 16.0


@dataclass
class StrengthenPlan:
    event_ids: list[str] = field(default_factory=list)
    edges: Counter[tuple[str, str]] = field(default_factory=Counter)  # weight gained
    seen: Counter[tuple[str, str]] = field(default_factory=Counter)  # times together
    retrieved: Counter[str] = field(default_factory=Counter)


def plan(ctx: PassContext) -> StrengthenPlan:
    result = StrengthenPlan()
    with ctx.brain.read() as conn:
        rows = conn.execute(
            text(
                "SELECT id, trace_ids FROM retrieval_events WHERE consolidated = 0 "
                "ORDER BY at LIMIT :n"
            ),
            {"n": MAX_EVENTS},
        ).all()
    used: dict[str, set[str]] = {}
    for event_id, ids_json in rows:
        ids = list(dict.fromkeys(json.loads(ids_json)))
        result.event_ids.append(event_id)
        result.retrieved.update(ids)
        if (search := used_search(event_id)) is not None:
            used.setdefault(search, set()).update(ids)
            continue
        for pair in combinations(sorted(ids[:COACTIVATION_TOP]), 2):
            result.edges[pair] += 1
            result.seen[pair] += 1
    for together in used.values():
        for pair in combinations(sorted(together), 2):
            result.edges[pair] += USED_TOGETHER
            result.seen[pair] += 1
    return result


def apply(ctx: PassContext, p: StrengthenPlan) -> tuple[int, int]:
    """Edges upserted and traces whose stability grew, in one transaction."""
    grown = 0
    with ctx.brain.transaction() as conn:
        live = _active(conn, set(p.retrieved))
        for (a, b), w in p.edges.items():
            if a in live and b in live:
                conn.execute(
                    text(
                        "INSERT INTO coactivation_edges (a, b, weight, count, updated_at) "
                        "VALUES (:a, :b, :w, :n, :at) ON CONFLICT (a, b) DO UPDATE SET "
                        "weight = coactivation_edges.weight + :w, "
                        "count = coactivation_edges.count + :n, updated_at = :at"
                    ),
                    {"a": a, "b": b, "w": float(w), "n": p.seen[(a, b)], "at": ctx.now},
                )
        for trace_id, n in p.retrieved.items():
            if trace_id in live:
                factor = 1.0 + STABILITY_GAIN * math.log2(1.0 + n)
                conn.execute(
                    text(
                        "UPDATE memory_traces SET stability = CASE WHEN stability * :f < :cap "
                        "THEN stability * :f ELSE :cap END "
                        "WHERE id = :id AND deleted = 0"
                    ),
                    {"cap": STABILITY_CAP, "f": factor, "id": trace_id},
                )
                grown += 1
        conn.execute(
            text(
                "UPDATE retrieval_events SET consolidated = 1 "
                "WHERE id IN (SELECT value FROM json_each(:ids))"
            ),
            {"ids": json.dumps(p.event_ids)},
        )
    return sum(1 for a, b in p.edges if a in live and b in live), grown


def _active(conn: object, ids: set[str]) -> set[str]:
    if not ids:
        return set()
    rows = conn.execute(  # type: ignore[attr-defined]
        text(
            "SELECT id FROM memory_traces WHERE deleted = 0 "
            "AND id IN (SELECT value FROM json_each(:ids))"
        ),
        {"ids": json.dumps(sorted(ids))},
    ).all()
    return {r[0] for r in rows}


def run(ctx: PassContext) -> StepResult:
    p = plan(ctx)
    edges, grown = (len(p.edges), len(p.retrieved)) if ctx.dry_run else apply(ctx, p)
    return StepResult(
        "strengthen",
        counts={"events": len(p.event_ids), "edges": edges, "stabilised": grown},
    )
