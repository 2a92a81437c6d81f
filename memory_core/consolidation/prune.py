"""Prune: traces whose decayed strength fell below the threshold become proposals.

Never a delete: a person accepts or rejects each proposal.  Strength decays
from the last access with stability growing with retrievals (see
:mod:`memory_core.decay`), so a trace retrieved often long ago still decays.
"""

from __future__ import annotations

import numpy as np
from sqlalchemy import text

from memory_core.consolidation.base import PassContext, StepResult
from memory_core.decay import DAY
from memory_core.proposals import ProposalDraft, create_proposals, filter_new

_ROWS = text(
    "SELECT id, content, strength, stability, last_accessed, occurred_at, retrieval_count "
    "FROM memory_traces WHERE deleted = 0"
)


def plan(ctx: PassContext) -> list[ProposalDraft]:
    """One draft per trace below the threshold, weakest first, at most the cap."""
    s = ctx.settings
    with ctx.brain.read() as conn:
        rows = conn.execute(_ROWS).all()
    if not rows:
        return []
    strength = np.array([r.strength for r in rows], dtype=np.float64)
    stability = np.array([r.stability for r in rows], dtype=np.float64)
    since = np.array(
        [r.last_accessed if r.last_accessed is not None else r.occurred_at for r in rows],
        dtype=np.float64,
    )
    count = np.array([r.retrieval_count for r in rows], dtype=np.float64)
    days = np.maximum(ctx.now - since, 0.0) / DAY
    stable = (
        s.decay_base_stability_days
        * stability
        * (1.0 + s.decay_stability_growth * np.log2(1.0 + np.maximum(count, 0)))
    )
    effective = strength * np.exp(-days / stable)
    weak = np.flatnonzero(effective < s.dream_prune_threshold)
    weak = weak[np.argsort(effective[weak], kind="stable")]
    order = [int(i) for i in weak]
    drafts = [
        ProposalDraft(
            kind="prune",
            trace_ids=[rows[i].id],
            reason=f"decayed strength {effective[i]:.4f} below {s.dream_prune_threshold}",
            scores={"strength": float(effective[i]), "days_since_access": float(days[i])},
            summary=f"prune: {_line(rows[i].content)}",
        )
        for i in order
    ]
    return filter_new(ctx.brain, s, drafts, now=ctx.now)[: s.dream_max_proposals]


def apply(ctx: PassContext, drafts: list[ProposalDraft]) -> list[str]:
    return create_proposals(ctx.brain, ctx.settings, drafts, ctx.pass_id, now=ctx.now)


def run(ctx: PassContext) -> StepResult:
    drafts = plan(ctx)
    result = StepResult(
        "prune",
        items=[{"trace_id": d.trace_ids[0], "reason": d.reason} for d in drafts],
    )
    if not ctx.dry_run:
        result.proposals = apply(ctx, drafts)
    result.counts["proposed"] = len(drafts) if ctx.dry_run else len(result.proposals)
    return result


def _line(content: str, width: int = 70) -> str:
    line = " ".join(content.split())
    return line if len(line) <= width else line[: width - 1] + "…"
