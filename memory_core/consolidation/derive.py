"""Derive: clusters of related traces become an insight trace citing them.

Clusters come from average-linkage agglomerative clustering (scikit-learn)
over the vectors of the most recent traces (a bounded window, so the step
costs the same on any brain size).  A cluster qualifies when it is large
enough, holds at least one trace added since the last pass, and has not been
summarised before (its key, a hash of its member ids, is kept on the insight).
The insight is written by an OpenAI-compatible LLM when one is configured and
answers, otherwise extractively: the members closest to the cluster's centre.
It is a new semantic trace tagged ``derived``; nothing is changed or deleted.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

import numpy as np
from sqlalchemy import text

from memory_core.auth import SYSTEM
from memory_core.consolidation.base import PassContext, StepResult
from memory_core.traces.model import NewTrace
from memory_core.traces.store import add_traces
from memory_core.traces.undo import created

log = logging.getLogger(__name__)

MAX_INSIGHT_CHARS = 600


@dataclass(frozen=True)
class Insight:
    content: str
    source_ids: list[str]
    cluster_key: str
    scope: str
    scope_id: str | None
    importance: float
    method: str


def _window(ctx: PassContext) -> list[int]:
    """Indices (into ctx.vectors) of the newest traces eligible as sources."""
    vectors = ctx.vectors
    assert vectors is not None
    with ctx.brain.read() as conn:
        derived = {
            r[0]
            for r in conn.execute(
                text(
                    "SELECT id FROM memory_traces WHERE deleted = 0 AND EXISTS "
                    "(SELECT 1 FROM json_each(tags) WHERE value = 'derived')"
                )
            )
        }
    order = np.argsort(-vectors.created_at, kind="stable")
    chosen = [int(i) for i in order if vectors.ids[i] not in derived]
    return chosen[: ctx.settings.dream_derive_window]


def _clusters(ctx: PassContext, window: list[int]) -> list[list[int]]:
    from sklearn.cluster import AgglomerativeClustering

    vectors = ctx.vectors
    assert vectors is not None
    labels_by_group: dict[tuple[str, str | None], list[int]] = {}
    for i in window:
        labels_by_group.setdefault(vectors.groups[i], []).append(i)
    clusters: list[list[int]] = []
    min_size = ctx.settings.dream_derive_min_cluster
    for members in labels_by_group.values():
        if len(members) < min_size:
            continue
        model = AgglomerativeClustering(
            n_clusters=None,
            metric="cosine",
            linkage="average",
            distance_threshold=1.0 - ctx.settings.dream_derive_similarity,
        )
        labels = model.fit_predict(vectors.matrix[members])
        for label in set(labels.tolist()):
            cluster = [members[k] for k in np.flatnonzero(labels == label)]
            if len(cluster) >= min_size:
                clusters.append(cluster)
    clusters.sort(key=len, reverse=True)
    return clusters


def plan(ctx: PassContext) -> list[Insight]:
    vectors = ctx.vectors
    if vectors is None or ctx.settings.dream_derive_max == 0:
        return []
    window = _window(ctx)
    insights: list[Insight] = []
    for cluster in _clusters(ctx, window):
        if not any(ctx.is_new(float(vectors.created_at[i])) for i in cluster):
            continue
        ids = sorted(vectors.ids[i] for i in cluster)
        key = hashlib.sha256(",".join(ids).encode()).hexdigest()[:32]
        if _already_derived(ctx, key):
            continue
        insights.append(_insight(ctx, cluster, key))
        if len(insights) >= ctx.settings.dream_derive_max:
            break
    return insights


def _already_derived(ctx: PassContext, key: str) -> bool:
    with ctx.brain.read() as conn:
        row = conn.execute(
            text(
                "SELECT 1 FROM memory_traces WHERE json_extract(metadata, '$.cluster_key') = :k "
                "LIMIT 1"
            ),
            {"k": key},
        ).first()
    return row is not None


def _insight(ctx: PassContext, cluster: list[int], key: str) -> Insight:
    vectors = ctx.vectors
    assert vectors is not None
    matrix = vectors.matrix[cluster]
    centre = matrix.mean(axis=0)
    closeness = matrix @ centre
    ranked = [cluster[k] for k in np.argsort(-closeness, kind="stable")]
    ids = [vectors.ids[i] for i in ranked]
    contents, importance = _contents(ctx, ids)
    scope, scope_id = vectors.groups[cluster[0]]
    content, method = _written(ctx, contents)
    return Insight(
        content=content,
        source_ids=ids,
        cluster_key=key,
        scope=scope,
        scope_id=scope_id,
        importance=importance,
        method=method,
    )


def _written(ctx: PassContext, contents: list[str]) -> tuple[str, str]:
    """The LLM's insight when one is configured and answers; extractive otherwise."""
    if ctx.settings.llm_base_url and not ctx.dry_run:
        from memory_core.errors import ExtractionError
        from memory_core.extraction.llm import LLMExtractor

        client = LLMExtractor.from_settings(ctx.settings)
        try:
            insight, _tokens = client.summarize(contents)
            return insight[:MAX_INSIGHT_CHARS], "llm"
        except ExtractionError as e:
            log.warning("insight by LLM failed, writing it extractively: %s", e)
        finally:
            client.close()
    return _extractive(contents), "extractive"


def _contents(ctx: PassContext, ids: list[str]) -> tuple[list[str], float]:
    import json

    with ctx.brain.read() as conn:
        rows = conn.execute(
            text(
                "SELECT id, content, importance FROM memory_traces "
                "WHERE id IN (SELECT value FROM json_each(:ids))"
            ),
            {"ids": json.dumps(ids)},
        ).all()
    by_id = {r[0]: (r[1], float(r[2])) for r in rows}
    contents = [by_id[t][0] for t in ids if t in by_id]
    importance = max((by_id[t][1] for t in ids if t in by_id), default=0.5)
    return contents, importance


def _extractive(contents: list[str]) -> str:
    """The most central members' first sentences, most central first."""
    lines: list[str] = []
    for content in contents[:3]:
        first = " ".join(content.split())
        for stop in (". ", "? ", "! "):
            if stop in first:
                first = first.split(stop, 1)[0] + stop.strip()
                break
        if first not in lines:
            lines.append(first)
    head = f"Recurring theme across {len(contents)} memories: "
    return (head + " / ".join(lines))[:MAX_INSIGHT_CHARS]


def apply(ctx: PassContext, insights: list[Insight]) -> list[str]:
    items = [
        NewTrace(
            content=i.content,
            type="semantic",
            scope=i.scope,
            scope_id=i.scope_id,
            tags=["derived", "insight"],
            importance=i.importance,
            metadata={"cluster_key": i.cluster_key, "derived_by": i.method, "pass_id": ctx.pass_id},
            sources=[{"trace": t} for t in i.source_ids],
            occurred_at=ctx.now,
        )
        for i in insights
    ]
    if not items:
        return []
    with ctx.brain.transaction() as conn:
        ids = add_traces(ctx.brain, items, now=ctx.now, identity=SYSTEM)
        created(conn, ctx.pass_id, "derive", ids, ctx.now)
    return ids


def run(ctx: PassContext) -> StepResult:
    insights = plan(ctx)
    ids = [] if ctx.dry_run else apply(ctx, insights)
    result = StepResult("derive", counts={"derived": len(insights)})
    result.items = [
        {"insight": ids[k] if ids else None, "sources": i.source_ids, "content": i.content}
        for k, i in enumerate(insights)
    ]
    if ctx.vectors is None:
        result.notes.append("no insights: no embeddings")
    return result
