"""Merging traces: two or more become the most-retrieved one, the rest soft-deleted."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memory_core.auth import DELETE, WRITE, Identity, acting
from memory_core.brain.db import Brain
from memory_core.errors import InvalidArgument, NotFound
from memory_core.traces.model import check_content, check_tags, dumps
from memory_core.traces.store import fetch_trace, rewrite_trace, soft_delete, visible


@dataclass(frozen=True)
class MergeResult:
    survivor_id: str
    deleted_ids: list[str]


def merge_traces(
    brain: Brain,
    trace_ids: Sequence[str],
    *,
    identity: Identity,
    merged_content: str | None = None,
    now: float | None = None,
) -> MergeResult:
    """Merge two or more active traces into the most-retrieved one.

    The survivor (ties: the first given) takes ``merged_content`` or the
    contents joined with `` | `` in the order given, the union of all tags and
    sources, the summed retrieval count, the latest access and the highest
    importance and stability.  The others are soft-deleted with a reason that
    names the survivor.  Any unknown or deleted id refuses the whole merge.
    """
    acting(identity, WRITE, DELETE)
    ids = list(trace_ids)
    if len(ids) < 2:
        raise InvalidArgument("merge needs at least two trace ids")
    if len(set(ids)) != len(ids):
        raise InvalidArgument("merge ids must be distinct")
    if merged_content is not None:
        check_content(merged_content, "mergedContent")
    now = time.time() if now is None else now
    with brain.transaction() as conn:
        traces = []
        for trace_id in ids:
            trace = fetch_trace(conn, trace_id)
            if trace is None or trace.deleted or not visible(trace, identity):
                raise NotFound(f"no active trace {trace_id}; nothing was merged")
            traces.append(trace)
        survivor = max(traces, key=lambda t: t.retrieval_count)  # first wins ties
        others = [t for t in traces if t.id != survivor.id]
        content = merged_content or " | ".join(t.content for t in traces)
        tags = check_tags(tag for t in traces for tag in t.tags)
        sources: list[Any] = []
        for t in traces:
            sources.extend(s for s in t.sources if s not in sources)
        metadata = dict(survivor.metadata)
        merged_from = list(metadata.get("merged_from", []))
        for t in others:  # the whole chain: what was merged into a merged-away trace too
            merged_from.extend([*t.metadata.get("merged_from", []), t.id])
        metadata["merged_from"] = merged_from
        accessed = [t.last_accessed for t in traces if t.last_accessed is not None]
        rewrite_trace(
            conn,
            survivor,
            content,
            tags,
            now,
            sources=dumps(sources),
            metadata=dumps(metadata),
            retrieval_count=sum(t.retrieval_count for t in traces),
            last_accessed=max(accessed) if accessed else None,
            importance=max(t.importance for t in traces),
            stability=max(t.stability for t in traces),
        )
        for t in others:
            soft_delete(conn, t, f"merged into {survivor.id}", now)
        return MergeResult(survivor.id, [t.id for t in others])
