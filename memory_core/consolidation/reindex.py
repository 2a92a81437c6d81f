"""Re-index: keep the full-text index tidy.

FTS5's ``optimize`` merges index segments; when the integrity check finds the
index out of step with the traces it is rebuilt instead.  The log of vector
changes that in-memory vector indexes catch up from is trimmed to its newest
entries, and the judgement cache to its age and size bounds.  (Missing vectors are the
pass's first step, :mod:`.embed`.)
"""

from __future__ import annotations

from sqlalchemy import text

from memory_core.brain.schema import FTS_TABLE
from memory_core.consolidation.base import PassContext, StepResult
from memory_core.errors import BrainError
from memory_core.reasoners.cache import trim
from memory_core.retrieval.vector_index import prune_events


def run(ctx: PassContext) -> StepResult:
    result = StepResult("reindex")
    consistent = _consistent(ctx)
    result.counts["rebuilt"] = 0 if consistent else 1
    if not ctx.dry_run:
        command = "optimize" if consistent else "rebuild"
        with ctx.brain.transaction() as conn:
            conn.execute(text(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES (:c)"), {"c": command})
            result.counts["vector_events_pruned"] = prune_events(conn)
            result.counts["judgements_trimmed"] = trim(conn, ctx.settings, ctx.now)
    if not consistent:
        result.notes.append("full-text index was inconsistent: rebuilt")
    return result


def _consistent(ctx: PassContext) -> bool:
    try:
        with ctx.brain.transaction() as conn:
            conn.execute(
                text(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rank) VALUES ('integrity-check', 1)")
            )
    except BrainError as e:
        if "malformed" not in str(e):
            raise
        return False
    return True
