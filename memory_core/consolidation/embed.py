"""Embed: vectors for every trace that lacks one, before merge and derive use them.

Traces added by the CLI, imported, or whose embed job is still queued have
no vector yet; without this step the first pass over them would neither
compare nor cluster them.  Bounded by ``REVERIE_DREAM_BACKFILL_MAX`` a pass
(the embed queue, re-enqueued by reconcile, does the rest).  A dry run
embeds nothing.
"""

from __future__ import annotations

from memory_core.consolidation.base import PassContext, StepResult


def run(ctx: PassContext) -> StepResult:
    result = StepResult("embed")
    if ctx.embedder is None or ctx.settings.dream_backfill_max == 0:
        result.counts["embedded"] = 0
        return result
    from memory_core.embeddings import embed_traces, traces_missing_embeddings

    missing = traces_missing_embeddings(
        ctx.brain, ctx.embedder.name, ctx.settings.dream_backfill_max
    )
    if ctx.dry_run:
        result.counts["embedded"] = 0
        if missing:
            result.notes.append(f"{len(missing)} traces lack a vector; a real pass embeds them")
        return result
    result.counts["embedded"] = embed_traces(ctx.brain, ctx.embedder, missing) if missing else 0
    if result.counts["embedded"]:
        ctx.forget_vectors()
    return result
