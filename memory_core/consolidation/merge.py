"""Merge: exact duplicates merged unattended, near duplicates proposed.

Exact duplicates (same content hash, scope and scope id) lose nothing when
merged: the survivor holds the identical content and takes the union of tags
and sources and the summed retrieval count.  They are merged in the pass and
listed in its report.  Near duplicates (cosine at or above the threshold, same
scope and scope id) differ in wording, so merging them loses words: each pair
becomes a merge proposal.  Candidate pairs come from locality-sensitive
hashing (:mod:`memory_core.consolidation.neardup`), not from all pairs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import text

from memory_core.consolidation.base import PassContext, StepResult
from memory_core.consolidation.neardup import near_duplicate_pairs
from memory_core.errors import NotFound
from memory_core.proposals import ProposalDraft, create_proposals, filter_new
from memory_core.trace_merge import merge_traces
from memory_core.traces import get_trace

_EXACT = text(
    "SELECT content_hash, scope, scope_id, json_group_array(id) AS ids FROM ("
    "  SELECT content_hash, scope, scope_id, id FROM memory_traces WHERE deleted = 0"
    "  ORDER BY retrieval_count DESC, created_at, seq"
    ") GROUP BY content_hash, scope, scope_id HAVING count(*) > 1"
)


@dataclass
class MergePlan:
    exact: list[list[str]] = field(default_factory=list)  # survivor first
    near: list[ProposalDraft] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def plan(ctx: PassContext) -> MergePlan:
    result = MergePlan()
    with ctx.brain.read() as conn:
        result.exact = [json.loads(r.ids) for r in conn.execute(_EXACT)]
    merged_away = {t for group in result.exact for t in group[1:]}
    result.near = _near(ctx, merged_away, result.notes)
    return result


def _near(ctx: PassContext, skip: set[str], notes: list[str]) -> list[ProposalDraft]:
    vectors = ctx.vectors
    if vectors is None:
        notes.append("near duplicates not searched: no embeddings")
        return []
    group_ids = {g: i for i, g in enumerate(dict.fromkeys(vectors.groups))}
    groups = np.array([group_ids[g] for g in vectors.groups])
    new = None
    if ctx.last_pass_at is not None:
        new = vectors.created_at >= ctx.last_pass_at
        if not new.any():
            notes.append("near duplicates: no traces since the last pass")
            return []
    pairs = near_duplicate_pairs(
        vectors.matrix, groups, ctx.settings.dream_merge_threshold, new=new
    )
    counts = _retrievals(ctx, {vectors.ids[i] for p in pairs for i in p[:2]})
    drafts = []
    for i, j, sim in pairs:
        a, b = vectors.ids[i], vectors.ids[j]
        if a in skip or b in skip:
            continue
        survivor, other = (a, b) if counts.get(a, 0) >= counts.get(b, 0) else (b, a)
        drafts.append(
            ProposalDraft(
                kind="merge",
                trace_ids=[survivor, other],
                reason=f"cosine {sim:.4f} at or above {ctx.settings.dream_merge_threshold}",
                scores={"cosine": float(sim)},
                summary=f"merge near duplicates {survivor} <- {other} (cosine {sim:.3f})",
            )
        )
    drafts = filter_new(ctx.brain, ctx.settings, drafts, now=ctx.now)
    return drafts[: ctx.settings.dream_max_proposals]


def _retrievals(ctx: PassContext, ids: set[str]) -> dict[str, int]:
    if not ids:
        return {}
    with ctx.brain.read() as conn:
        rows = conn.execute(
            text(
                "SELECT id, retrieval_count FROM memory_traces "
                "WHERE id IN (SELECT value FROM json_each(:ids))"
            ),
            {"ids": json.dumps(sorted(ids))},
        ).all()
    return {r[0]: int(r[1]) for r in rows}


def apply(ctx: PassContext, merge_plan: MergePlan) -> tuple[list[dict[str, object]], list[str]]:
    """Exact merges in one transaction, then the near-duplicate proposals."""
    merged: list[dict[str, object]] = []
    with ctx.brain.transaction():
        for group in merge_plan.exact:
            try:
                with ctx.brain.transaction():  # a savepoint: one group at a time
                    content = get_trace(ctx.brain, group[0]).content
                    result = merge_traces(ctx.brain, group, merged_content=content, now=ctx.now)
            except NotFound:
                continue  # changed since planned; the next pass sees it again
            merged.append({"survivor": result.survivor_id, "merged": result.deleted_ids})
    if merged:
        ctx.forget_vectors()
    proposals = create_proposals(ctx.brain, ctx.settings, merge_plan.near, ctx.pass_id, now=ctx.now)
    return merged, proposals


def run(ctx: PassContext) -> StepResult:
    merge_plan = plan(ctx)
    result = StepResult("merge", notes=merge_plan.notes)
    if ctx.dry_run:
        result.items = [{"survivor": g[0], "merged": g[1:]} for g in merge_plan.exact]
        result.proposals = []
        proposed = len(merge_plan.near)
    else:
        result.items, result.proposals = apply(ctx, merge_plan)
        proposed = len(result.proposals)
    result.counts = {
        "merged": sum(len(g) - 1 for g in merge_plan.exact),
        "proposed": proposed,
    }
    result.items += [
        {"proposed": d.trace_ids, "cosine": d.scores["cosine"]} for d in merge_plan.near
    ]
    return result
