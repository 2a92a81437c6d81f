"""Compact: old, often-retrieved episodic traces are promoted to semantic.

An episode that keeps being recalled long after it happened has become
knowledge.  The trace keeps its id, content and sources; its type changes and
it gains the tag ``compacted``.  Nothing is deleted.
"""

from __future__ import annotations

from sqlalchemy import text

from memory_core.consolidation.base import PassContext, StepResult
from memory_core.errors import Conflict
from memory_core.traces.decay import DAY
from memory_core.traces.model import Trace
from memory_core.traces.store import rewrite_trace
from memory_core.traces.undo import changing

_CANDIDATES = text(
    "SELECT * FROM memory_traces WHERE deleted = 0 AND type = 'episodic' "
    "AND occurred_at < :before AND retrieval_count >= :min_retrievals ORDER BY occurred_at"
)


def plan(ctx: PassContext) -> list[Trace]:
    s = ctx.settings
    with ctx.brain.read() as conn:
        rows = conn.execute(
            _CANDIDATES,
            {
                "before": ctx.now - s.dream_compact_after_days * DAY,
                "min_retrievals": s.dream_compact_min_retrievals,
            },
        ).all()
    return [Trace.from_row(r) for r in rows]


def apply(ctx: PassContext, traces: list[Trace]) -> list[str]:
    done = []
    with ctx.brain.transaction() as conn:
        for trace in traces:
            tags = [*trace.tags, "compacted"] if "compacted" not in trace.tags else trace.tags
            try:
                with (
                    ctx.brain.transaction(),
                    changing(conn, ctx.pass_id, "compact", [trace.id], ctx.now),
                ):
                    rewrite_trace(conn, trace, None, tags, ctx.now, type="semantic")
            except Conflict:
                continue  # changed since planned: the next pass looks again
            done.append(trace.id)
    return done


def run(ctx: PassContext) -> StepResult:
    traces = plan(ctx)
    ids = [t.id for t in traces] if ctx.dry_run else apply(ctx, traces)
    return StepResult(
        "compact", counts={"compacted": len(ids)}, items=[{"trace_id": t} for t in ids]
    )
