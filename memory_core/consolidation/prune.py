"""Prune: forgetting by salience; what decay weakened becomes a proposal, never a delete.

A trace's strength decays from when this brain learnt it or last used it --
never from when the event happened, so an imported or back-dated history is
not proposed wholesale -- over a horizon set by what the trace is:

* durable facts (identity, health, relationships, dates, commitments,
  preferences, what the user asked to keep, news told with emphasis; see
  :mod:`.salience`), traces tagged ``keep``/``pinned``, anything of
  importance at or above ``REVERIE_DREAM_PROTECT_IMPORTANCE``, and facts
  drawn from any of these are never proposed by decay alone;
* small talk has the shortest horizon (``REVERIE_DREAM_SMALLTALK_HORIZON``):
  what the word rules call small talk, and turns the phatic judgement
  confidently finds content-free (see :mod:`.phatic`);
* everything else ``REVERIE_DREAM_EPISODE_HORIZON`` times the base
  stability, doubled for facts (non-episodic types), stretched or shortened
  by importance, and lengthened by retrievals (spaced repetition).

A rejected prune is not proposed again while its trace is unchanged (see
:func:`~memory_core.proposals.filter_new`).  Proposals are the weakest
first, at most ``REVERIE_DREAM_MAX_PROPOSALS`` a pass and never past
``REVERIE_DREAM_MAX_PENDING`` pending.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import text

from memory_core.consolidation.base import PassContext, StepResult
from memory_core.consolidation.phatic import model_for as phatic_model
from memory_core.consolidation.salience import KEEP_TAGS, may_be_phatic, salience
from memory_core.errors import EmbedderError
from memory_core.proposals import ProposalDraft, create_proposals, filter_new, pending_room
from memory_core.settings import Settings
from memory_core.traces.decay import DAY
from memory_core.traces.model import TURN_TAG

_ROWS = text(
    "SELECT id, content, content_hash, context, type, tags, sources, importance, strength, "
    "stability, last_accessed, "
    "coalesce(learnt_at, created_at) AS learnt_at, retrieval_count FROM memory_traces "
    "WHERE deleted = 0"
)
log = logging.getLogger(__name__)
FACT_HORIZON = 2.0  # semantic, procedural, ... against an episode's 1
IMPORTANCE_SPAN = 4.0  # importance 0 quarters the horizon, 1 would quadruple it


@dataclass(frozen=True)
class Horizon:
    """How long a trace takes to decay, in multiples of the base stability; None: never."""

    factor: float | None
    why: str


def horizon(
    content: str,
    type_: str,
    tags: list[str],
    importance: float,
    s: Settings,
    *,
    phatic: float | None = None,
) -> Horizon:
    """The decay horizon of one trace, and why; ``phatic`` is the judgement's confident
    probability that the turn is content-free (see :mod:`.phatic`), if it made one."""
    if importance >= s.dream_protect_importance:
        return Horizon(
            None, f"importance {importance:.2f} at or above {s.dream_protect_importance}"
        )
    if KEEP_TAGS & set(tags):
        return Horizon(None, "tagged to keep")
    found = salience(content)
    if found.durable is not None:
        return Horizon(None, found.why)
    if found.smalltalk:
        return Horizon(s.dream_smalltalk_horizon, "small talk")
    if phatic is not None:
        return Horizon(s.dream_smalltalk_horizon, f"small talk (judged content-free, {phatic:.2f})")
    factor = s.dream_episode_horizon * (1.0 if type_ == "episodic" else FACT_HORIZON)
    factor *= IMPORTANCE_SPAN ** (2.0 * (importance - 0.5))
    return Horizon(factor, f"ordinary {type_}, importance {importance:.2f}")


def plan(ctx: PassContext) -> list[ProposalDraft]:
    """One draft per trace whose decayed strength fell below the threshold, weakest first."""
    s = ctx.settings
    with ctx.brain.read() as conn:
        rows = conn.execute(_ROWS).all()
    weak: list[tuple[float, ProposalDraft]] = []
    by_id = {r.id: r for r in rows}
    candidates = []
    for r in rows:
        since = max(float(r.learnt_at), float(r.last_accessed or 0.0))
        days = max(ctx.now - since, 0.0) / DAY
        unit = (
            s.decay_base_stability_days
            * float(r.stability)
            * (1.0 + s.decay_stability_growth * math.log2(1.0 + max(int(r.retrieval_count), 0)))
        )
        # Cheap first: a trace still strong at the shortest horizon it could have is kept.
        shortest = min(
            s.dream_smalltalk_horizon,
            s.dream_episode_horizon * IMPORTANCE_SPAN ** (2.0 * (float(r.importance) - 0.5)),
        )
        if float(r.strength) * math.exp(-days / (unit * shortest)) >= s.dream_prune_threshold:
            continue
        candidates.append((r, days, unit))
    phatic = _phatic(ctx, [r for r, _, _ in candidates])
    for r, days, unit in candidates:
        h = horizon(
            r.content, r.type, json.loads(r.tags), float(r.importance), s, phatic=phatic.get(r.id)
        )
        if h.factor is None or _drawn_from_durable(r.sources, by_id, s):
            continue
        effective = float(r.strength) * math.exp(-days / (unit * h.factor))
        if effective >= s.dream_prune_threshold:
            continue
        weak.append(
            (
                effective,
                ProposalDraft(
                    kind="prune",
                    trace_ids=[r.id],
                    reason=(
                        f"{h.why}: decayed strength {effective:.4f} below "
                        f"{s.dream_prune_threshold} after {days:.0f} days unused"
                    ),
                    scores={
                        "strength": effective,
                        "days_since_use": days,
                        "importance": float(r.importance),
                        "horizon_days": s.decay_base_stability_days * h.factor,
                    },
                    summary=f"prune: {_line(r.content)}",
                ),
            )
        )
    order = np.argsort([w for w, _ in weak], kind="stable")
    drafts = filter_new(ctx.brain, s, [weak[int(i)][1] for i in order], now=ctx.now)
    room = min(s.dream_max_proposals, pending_room(ctx.brain, s))
    return drafts[:room]


def _phatic(ctx: PassContext, rows: list[Any]) -> dict[str, float]:
    """The turns among these that the phatic judgement confidently finds content-free,
    with its probability.  Judgements are kept (``trace_judgements``); at most
    ``REVERIE_DREAM_PHATIC_MAX`` new ones a pass, the longest-learnt first, and none
    without the model for this pass's embedder or in a dry run's stead (a dry run
    judges, and keeps nothing)."""
    model = phatic_model(ctx.embedder_name)
    if model is None or ctx.embedder is None or ctx.settings.dream_phatic_max == 0:
        return {}
    asked = {
        r.id: r
        for r in rows
        if r.type == "episodic"
        and TURN_TAG in json.loads(r.tags)
        and may_be_phatic(r.content, r.context or None)
    }
    if not asked:
        return {}
    with ctx.brain.read() as conn:
        known = {
            j.trace_id: float(j.value)
            for j in conn.execute(_JUDGED, {"judge": model.name})
            if j.trace_id in asked and j.content_hash == asked[j.trace_id].content_hash
        }
    todo = sorted((r for t, r in asked.items() if t not in known), key=lambda r: r.learnt_at)
    todo = todo[: ctx.settings.dream_phatic_max]
    if todo:
        try:
            judged = model.judge([r.content for r in todo], ctx.embedder.embed)
        except EmbedderError as e:
            log.warning("phatic judgement skipped, the embedder failed: %s", e)
            judged = []
        fresh = {r.id: p for r, p in zip(todo, judged, strict=False)}
        known |= fresh
        if fresh and not ctx.dry_run:
            with ctx.brain.transaction() as conn:
                conn.execute(
                    _JUDGE,
                    [
                        {
                            "trace": t,
                            "judge": model.name,
                            "hash": asked[t].content_hash,
                            "value": p,
                            "at": ctx.now,
                        }
                        for t, p in fresh.items()
                    ],
                )
    return {t: p for t, p in known.items() if p >= model.threshold}


_JUDGED = text("SELECT trace_id, content_hash, value FROM trace_judgements WHERE judge = :judge")
_JUDGE = text(
    "INSERT INTO trace_judgements (trace_id, judge, content_hash, value, judged_at) "
    "VALUES (:trace, :judge, :hash, :value, :at) ON CONFLICT (trace_id, judge) DO UPDATE SET "
    "content_hash = excluded.content_hash, value = excluded.value, judged_at = excluded.judged_at"
)


def _drawn_from_durable(sources_json: str, active: dict[str, Any], s: Settings) -> bool:
    """Whether a trace was drawn from an active one that decay may not forget (a fact of
    a turn that states a birthday keeps its protection, even if its own sentence lost
    the cue).  ``active`` holds the rows the plan already read."""
    for source in json.loads(sources_json):
        cited = source.get("trace") if isinstance(source, dict) else None
        row = active.get(cited) if isinstance(cited, str) else None
        if row is not None and (
            horizon(row.content, row.type, json.loads(row.tags), float(row.importance), s).factor
            is None
        ):
            return True
    return False


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
