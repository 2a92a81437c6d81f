"""Maintenance run by hand: reconcile and embedding backfill."""

from __future__ import annotations

from typing import Any

import memory_core as mc
from memory_core import ingest, reconcile
from memory_core.embedders import make_embedder


def reconcile_now(settings: mc.Settings, brain: mc.Brain) -> dict[str, Any]:
    """With Redis: enqueue what reconcile finds.  Embedded: do it in this process."""
    embedder = make_embedder(settings)
    plan = reconcile.plan(brain, settings, embedder, older_than=0.0)
    if settings.redis_url:
        from reverie.workers import setup

        reconcile.dispatch(plan, setup(settings).actors.sender())
        return {
            "mode": "enqueued",
            "turns": len(plan.turn_ids),
            "traces_to_embed": len(plan.unembedded_ids),
        }
    from memory_core.extraction import make_extract

    extract = make_extract(settings)
    report = ingest.ingest_turns(brain, plan.turn_ids, extract)
    embedded = 0
    if embedder is not None:
        from memory_core.embeddings import embed_traces

        embedded = embed_traces(brain, embedder, plan.unembedded_ids)
    return {"mode": "in-process", "turns": len(report.ingested), "traces_embedded": embedded}


def embed_backfill(
    settings: mc.Settings, brain: mc.Brain, *, show_progress: bool
) -> dict[str, Any]:
    """Embed every active trace lacking a vector, in batches; a progress bar with the
    total on a terminal (``show_progress``)."""
    from memctl import output as out
    from memory_core.embeddings import count_missing_embeddings, embed_missing

    embedder = make_embedder(settings)
    if embedder is None:
        raise mc.NotEnabled("no embedder configured (REVERIE_EMBEDDER=none)")
    total = count_missing_embeddings(brain, embedder.name) if show_progress else None
    with out.progress(f"embed {embedder.name}", show_progress, total) as advance:
        count = embed_missing(brain, embedder, settings.embed_batch_size, progress=advance)
    return {"embedded": count, "model": embedder.name}
