"""Merge: exact duplicates of one occurrence merged unattended; verified near duplicates proposed.

*Exact duplicates* (same content hash, scope and scope id) that happened
within :data:`SAME_OCCURRENCE_S` of each other are one thing stored twice:
the survivor holds the identical content, nothing is lost, and the pass
merges them (undoable with the pass).  Copies that happened at different
times are each an occurrence ("I had a migraine again today" on three days)
and are kept apart, so every occurrence time stays findable.

*Near duplicates* come from the vectors: pairs at or above the candidate
cosine (``REVERIE_DREAM_MERGE_THRESHOLD``, recall-oriented) found by
locality-sensitive hashing, then judged by :mod:`.verify`.  A pair that
differs in a number, date, time, polarity, person, place or object is not a
duplicate and is never proposed (the report lists it); two episodes that
happened on different days are different events.  A verified pair becomes a
merge proposal whose result (``merged_content``) keeps every detail of both,
the newer wording first; the survivor is the most retrieved, the newer on a
tie.

The search is incremental in the order vectors were written: a pass looks
at pairs with at least one trace whose vector came after the last pass's
mark (so traces embedded late, imported with old dates or embedded by the
previous pass are all compared once).  Pairs at cosine 0.9 and above are
searched across the whole brain at once; below that, exact comparison costs
the brain's size per trace, so a pass compares a slice of the traces still to
be compared (``REVERIE_DREAM_MERGE_SLICE``) and the next passes the rest.
Pairs found but not verified (``REVERIE_DREAM_MERGE_VERIFY_MAX``) or not
proposed (the per-pass cap, the pending bound) carry over until they are.
"""

from __future__ import annotations

import itertools
import json
import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import Connection, text

from memory_core.auth import SYSTEM
from memory_core.brain.db import read_meta, write_meta
from memory_core.consolidation.base import PassContext, StepResult, Vectors
from memory_core.consolidation.neardup import Method, near_duplicate_pairs
from memory_core.consolidation.verify import Verdict, merged_text, verify
from memory_core.errors import Conflict, NotFound
from memory_core.proposals import ProposalDraft, create_proposals, filter_new, pending_room
from memory_core.retrieval.events import EVENTS_FLOOR_KEY
from memory_core.traces.merge import merge_traces
from memory_core.traces.model import TURN_TAG
from memory_core.traces.store import fetch_trace
from memory_core.traces.undo import changing

log = logging.getLogger(__name__)

SAME_OCCURRENCE_S = 3_600.0
DIFFERENT_EVENTS_S = 86_400.0
MARK_KEY = "dream.merge.vector_mark"
CARRY_KEY = "dream.merge.carry"
BACKLOG_KEY = "dream.merge.backlog"
# At or above this cosine, candidates are searched across the whole brain every pass
# (LSH is cheap there); below it, a bounded slice of traces a pass is compared exactly.
SURE_COSINE = 0.9
REPORTED_APART = 200  # kept-apart pairs listed in a report

# Turns (the verbatim record of what was said, tagged ``turn``) are never
# merged: each is an utterance of its own moment, and facts point at them.
_NOT_A_TURN = "NOT EXISTS (SELECT 1 FROM json_each(tags) WHERE value = 'turn')"
# Active copies of one text in one scope id, the most retrieved of each text first.
_EXACT = text(
    "SELECT content_hash, scope, scope_id, id, occurred_at FROM ("
    "  SELECT content_hash, scope, scope_id, id, occurred_at, retrieval_count, created_at, seq, "
    "  count(*) OVER (PARTITION BY content_hash, scope, scope_id) AS copies FROM memory_traces "
    f"  WHERE deleted = 0 AND {_NOT_A_TURN}"
    ") AS c WHERE copies > 1 "
    "ORDER BY content_hash, scope, scope_id, retrieval_count DESC, created_at, seq"
)
_FACTS = text(
    "SELECT id, content, type, tags, sources, metadata, occurred_at, created_at, retrieval_count, "
    "scope, scope_id FROM memory_traces "
    "WHERE id IN (SELECT value FROM json_each(:ids))"
)


@dataclass
class MergePlan:
    exact: list[list[str]] = field(default_factory=list)  # survivor first
    near: list[ProposalDraft] = field(default_factory=list)
    apart: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    repeated: int = 0  # exact copies kept because they are separate occurrences
    mark: int | None = None  # the vector mark this pass covered
    carry: list[list[str]] = field(default_factory=list)  # pairs left for the next pass
    backlog: list[str] = field(default_factory=list)  # traces not yet compared at the threshold


def plan(ctx: PassContext) -> MergePlan:
    result = MergePlan()
    with ctx.brain.read() as conn:
        rows = conn.execute(_EXACT).all()
        for _, copies in itertools.groupby(rows, key=lambda r: r[:3]):
            groups = _occurrences([[r.id, r.occurred_at] for r in copies])
            result.repeated += len(groups) - 1
            result.exact += [g for g in groups if len(g) > 1]
    merged_away = {t for group in result.exact for t in group[1:]}
    _near(ctx, merged_away, result)
    return result


def _occurrences(members: list[list[Any]]) -> list[list[str]]:
    """Split one hash's copies into occurrences (happened within the hour), survivor first."""
    groups: list[tuple[float, list[str]]] = []
    for trace_id, occurred in members:  # most retrieved first
        for start, ids in groups:
            if abs(float(occurred) - start) < SAME_OCCURRENCE_S:
                ids.append(trace_id)
                break
        else:
            groups.append((float(occurred), [trace_id]))
    return [ids for _, ids in groups]


def _near(ctx: PassContext, skip: set[str], result: MergePlan) -> None:
    vectors = ctx.vectors
    if vectors is None:
        result.notes.append("near duplicates not searched: no embeddings")
        return
    with ctx.brain.read() as conn:
        mark, fresh = _fresh_since_mark(conn, ctx.embedder_name)
        carried = [tuple(p) for p in json.loads(read_meta(conn, CARRY_KEY) or "[]")]
    result.mark = mark
    pairs = _candidates(ctx, vectors, fresh, skip, carried, result)
    if not pairs and fresh is not None:
        result.notes.append("near duplicates: no candidates among vectors since the last pass")
    budget = ctx.settings.dream_merge_verify_max
    facts = _facts(ctx, {t for a, b, _ in pairs[:budget] for t in (a, b)})
    drafts: list[ProposalDraft] = []
    for a_id, b_id, sim in pairs[:budget]:
        a, b = facts.get(a_id), facts.get(b_id)
        if a is None or b is None or _cites(a, b) or _cites(b, a):
            continue  # gone, or a fact and the trace it was drawn from (provenance, not a copy)
        older, newer = (a, b) if _when(a) <= _when(b) else (b, a)
        verdict = _judge(ctx, older, newer)
        if verdict.duplicate:
            drafts.append(_draft(ctx, older, newer, sim))
        elif len(result.apart) < REPORTED_APART:
            result.apart.append(
                {
                    "kept_apart": [older["id"], newer["id"]],
                    "cosine": round(sim, 4),
                    "kind": verdict.kind,
                    "why": verdict.reason,
                }
            )
    drafts = filter_new(ctx.brain, ctx.settings, drafts, now=ctx.now)
    room = min(ctx.settings.dream_max_proposals, pending_room(ctx.brain, ctx.settings))
    result.near = drafts[:room]
    later = [(d.trace_ids[0], d.trace_ids[1]) for d in drafts[room:]]
    later += [(a, b) for a, b, _ in pairs[budget:]]
    result.carry = [list(p) for p in later]
    if drafts[room:]:
        result.notes.append(
            f"{len(drafts) - room} verified near duplicates left for the next pass "
            "(proposal cap or pending bound)"
        )
    if pairs[budget:]:
        result.notes.append(
            f"{len(pairs) - budget} candidate pairs left for the next pass to verify "
            "(REVERIE_DREAM_MERGE_VERIFY_MAX)"
        )


def _candidates(
    ctx: PassContext,
    vectors: Vectors,
    fresh: set[str] | None,
    skip: set[str],
    carried: list[tuple[Any, ...]],
    result: MergePlan,
) -> list[tuple[str, str, float]]:
    """Candidate pairs, best first.  Turns are never candidates: the verbatim record
    stays as it was said.  Two tiers:

    * pairs at or above :data:`SURE_COSINE` with a trace whose vector is new since
      the last pass, over the whole brain by LSH (cheap at that cosine);
    * pairs at or above the recall-oriented ``REVERIE_DREAM_MERGE_THRESHOLD``,
      compared exactly for a slice of the traces not yet compared at it
      (``REVERIE_DREAM_MERGE_SLICE`` a pass, in the order they were stored), so a
      backlog of any size is worked through in bounded passes;

    plus the pairs an earlier pass found but left over."""
    rows = np.flatnonzero(~vectors.turns)
    rows = rows[[vectors.ids[i] not in skip for i in rows]] if skip else rows
    ids = [vectors.ids[i] for i in rows]
    found: dict[tuple[str, str], float] = {}
    with ctx.brain.read() as conn:
        backlog = set(json.loads(read_meta(conn, BACKLOG_KEY) or "[]"))
    backlog |= set(ids) if fresh is None else fresh
    pending = [t for t in ids if t in backlog]  # in the order the traces were stored
    slice_ = set(pending[: ctx.settings.dream_merge_slice])
    result.backlog = sorted(backlog & set(pending[ctx.settings.dream_merge_slice :]))
    if len(rows) > 1:
        keys = [vectors.groups[i] for i in rows]
        group_ids = {g: k for k, g in enumerate(dict.fromkeys(keys))}
        groups = np.array([group_ids[g] for g in keys])
        matrix = vectors.matrix[rows]
        tiers = [
            (
                max(SURE_COSINE, ctx.settings.dream_merge_threshold),
                None if fresh is None else fresh,
            ),
            (ctx.settings.dream_merge_threshold, slice_),
        ]
        for threshold, wanted in tiers:
            new = None if wanted is None else np.array([t in wanted for t in ids], dtype=np.bool_)
            if new is not None and not new.any():
                continue
            method: Method = "auto" if threshold >= SURE_COSINE else "exact"
            for i, j, sim in near_duplicate_pairs(
                matrix, groups, threshold, new=new, method=method
            ):
                found[(ids[i], ids[j])] = sim
    if result.backlog:
        result.notes.append(
            f"{len(result.backlog)} traces left to compare at cosine "
            f"{ctx.settings.dream_merge_threshold} by the next passes (REVERIE_DREAM_MERGE_SLICE)"
        )
    index = vectors.index()
    for pair in carried:
        a, b = str(pair[0]), str(pair[1])
        if a in index and b in index and a not in skip and b not in skip:
            found.setdefault((a, b), float(vectors.matrix[index[a]] @ vectors.matrix[index[b]]))
    return sorted(((a, b, s) for (a, b), s in found.items()), key=lambda p: -p[2])


def _judge(ctx: PassContext, older: dict[str, Any], newer: dict[str, Any]) -> Verdict:
    speakers = {json.loads(f["metadata"]).get("speaker") for f in (older, newer)}
    if None not in speakers and len(speakers) == 2:
        return Verdict(False, "person", f"said by different people: {', '.join(sorted(speakers))}")
    verdict = verify(older["content"], newer["content"], similarity=ctx.word_similarity)
    apart = abs(newer["occurred_at"] - older["occurred_at"]) >= DIFFERENT_EVENTS_S
    if verdict.duplicate and apart and _events(older) and _events(newer):
        return Verdict(False, "occurrence", "two episodes on different days: two events")
    if verdict.duplicate and apart and _said(older) and _said(newer):
        return Verdict(False, "occurrence", "said in turns on different days: two sayings")
    if verdict.duplicate and ctx.judge is not None:
        return ctx.judge(
            older["content"],
            newer["content"],
            verdict,
            scope=older["scope"],
            scope_id=older["scope_id"],
        )
    return verdict


def _is_turn(fact: dict[str, Any]) -> bool:
    return TURN_TAG in json.loads(fact["tags"])


def _cites(fact: dict[str, Any], other: dict[str, Any]) -> bool:
    return any(
        isinstance(s, dict) and s.get("trace") == other["id"] for s in json.loads(fact["sources"])
    )


def _events(fact: dict[str, Any]) -> bool:
    """An episode: something that happened at its own time (two on different days are
    two happenings, however alike their words)."""
    return bool(fact["type"] == "episodic")


def _said(fact: dict[str, Any]) -> bool:
    """A statement drawn from a turn: what someone said at its time.  Two said on
    different days are two sayings, each dated, however alike their words ("Still
    working on my biz." a week after "I'm determined to make this studio work"):
    merged, the later one's time and words would be gone.  A memory written directly
    (an agent's "User prefers dark mode") is no saying and may repeat another."""
    return "turn_id" in json.loads(fact["metadata"] or "{}")


def _draft(
    ctx: PassContext, older: dict[str, Any], newer: dict[str, Any], sim: float
) -> ProposalDraft:
    # The survivor is the most retrieved; on a tie the newer, whose wording wins.
    survivor, other = (
        (older, newer) if older["retrieval_count"] > newer["retrieval_count"] else (newer, older)
    )
    result = merged_text(older["content"], newer["content"])
    return ProposalDraft(
        kind="merge",
        trace_ids=[survivor["id"], other["id"]],
        reason=(
            f"cosine {sim:.4f} at or above {ctx.settings.dream_merge_threshold} and verified: "
            "no number, date, polarity, person, place or object differs"
        ),
        scores={"cosine": float(sim)},
        summary=f"merge: {_line(result)}",
        merged_content=result,
    )


def _when(fact: dict[str, Any]) -> tuple[float, float]:
    return (float(fact["occurred_at"]), float(fact["created_at"]))


def _facts(ctx: PassContext, ids: set[str]) -> dict[str, dict[str, Any]]:
    if not ids:
        return {}
    with ctx.brain.read() as conn:
        rows = conn.execute(_FACTS, {"ids": json.dumps(sorted(ids))}).all()
    return {r.id: dict(r._mapping) for r in rows}


def _fresh_since_mark(conn: Connection, model: str | None) -> tuple[int, set[str] | None]:
    """The newest vector event, and the traces whose vectors were written after the
    last pass's mark (None: compare everything -- first pass, or the log was trimmed
    past the mark)."""
    last = int(conn.execute(text("SELECT coalesce(max(id), 0) FROM embedding_events")).scalar_one())
    raw = read_meta(conn, MARK_KEY)
    if raw is None:
        return last, None
    mark = int(raw)
    floor = read_meta(conn, EVENTS_FLOOR_KEY)
    if floor is not None and int(floor) > mark:
        return last, None
    rows = conn.execute(
        text(
            "SELECT DISTINCT trace_id FROM embedding_events "
            "WHERE id > :mark AND id <= :last AND model = :model"
        ),
        {"mark": mark, "last": last, "model": model},
    )
    return last, {r[0] for r in rows}


def apply(ctx: PassContext, merge_plan: MergePlan) -> tuple[list[dict[str, object]], list[str]]:
    """Exact merges in one transaction (recorded for the pass's undo), then the proposals."""
    merged: list[dict[str, object]] = []
    with ctx.brain.transaction() as conn:
        for group in merge_plan.exact:
            try:
                with ctx.brain.transaction(), changing(conn, ctx.pass_id, "merge", group, ctx.now):
                    survivor = fetch_trace(conn, group[0])
                    if survivor is None or survivor.deleted:
                        raise NotFound(group[0])
                    result = merge_traces(
                        ctx.brain,
                        group,
                        merged_content=survivor.content,
                        now=ctx.now,
                        identity=SYSTEM,
                    )
            except (NotFound, Conflict):
                continue  # changed since planned; the next pass sees it again
            merged.append({"survivor": result.survivor_id, "merged": result.deleted_ids})
        if merge_plan.mark is not None:
            write_meta(conn, MARK_KEY, str(merge_plan.mark))
            write_meta(conn, CARRY_KEY, json.dumps(merge_plan.carry))
            write_meta(conn, BACKLOG_KEY, json.dumps(merge_plan.backlog))
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
        "kept_apart": len(merge_plan.apart),
        "repeated": merge_plan.repeated,
        "carried": len(merge_plan.carry),
        "backlog": len(merge_plan.backlog),
    }
    result.items += [
        {"proposed": d.trace_ids, "cosine": d.scores["cosine"], "result": d.merged_content}
        for d in merge_plan.near
    ]
    result.items += merge_plan.apart
    return result


def _line(content: str, width: int = 70) -> str:
    line = " ".join(content.split())
    return line if len(line) <= width else line[: width - 1] + "…"
