"""Maintenance run by hand: reconcile and embedding backfill."""

from __future__ import annotations

from typing import Any

import memory_core as mc
from memory_core import ingest, jobs
from memory_core.runtime import Runtime


def reconcile_now(runtime: Runtime) -> dict[str, Any]:
    """With Redis: enqueue what reconcile finds.  Embedded: do it in this process."""
    settings, brain = runtime.settings, runtime.brain
    embedder = runtime.embedder()
    plan = jobs.plan(brain, settings, embedder, older_than=0.0)
    if settings.redis_url:
        from reverie import compose

        workers = compose.queue_for(runtime)
        try:
            jobs.dispatch(plan, workers.sender(), settings.embed_batch_size)
        finally:
            workers.stop()
        return {
            "mode": "enqueued",
            "turns": len(plan.turn_ids) + len(plan.retried_ids),
            "traces_to_embed": len(plan.unembedded_ids),
        }
    report = ingest.ingest_turns(brain, [*plan.turn_ids, *plan.retried_ids], runtime.extract)
    embedded = 0
    if embedder is not None:
        from memory_core.embeddings import embed_traces

        embedded = embed_traces(brain, embedder, plan.unembedded_ids)
    return {"mode": "in-process", "turns": len(report.ingested), "traces_embedded": embedded}


def embed_backfill(runtime: Runtime, *, show_progress: bool) -> dict[str, Any]:
    """Embed every active trace lacking a vector, in batches; a progress bar with the
    total on a terminal (``show_progress``)."""
    from memctl import output as out
    from memory_core.embeddings import count_missing_embeddings, embed_missing

    brain = runtime.brain
    embedder = runtime.embedder()
    if embedder is None:
        raise mc.NotEnabled("no embedder configured (REVERIE_EMBEDDER=none)")
    total = count_missing_embeddings(brain, embedder.name) if show_progress else None
    with out.progress(f"embed {embedder.name}", show_progress, total) as advance:
        count = embed_missing(brain, embedder, runtime.settings.embed_batch_size, progress=advance)
    return {"embedded": count, "model": embedder.name}
