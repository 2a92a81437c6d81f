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
previous pass are all compared once), plus the traces of pairs that an
earlier pass found but could not propose (the per-pass cap, the pending
bound): those carry over until proposed.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import Connection, text

from memory_core.consolidation.base import PassContext, StepResult
from memory_core.consolidation.neardup import near_duplicate_pairs
from memory_core.consolidation.verify import Verdict, analyse, merged_text, verify
from memory_core.errors import Conflict, NotFound
from memory_core.proposals import ProposalDraft, create_proposals, filter_new, pending_room
from memory_core.trace_merge import merge_traces
from memory_core.traces import fetch_trace
from memory_core.undo import changing

log = logging.getLogger(__name__)

SAME_OCCURRENCE_S = 3_600.0
DIFFERENT_EVENTS_S = 86_400.0
MARK_KEY = "dream.merge.vector_mark"
CARRY_KEY = "dream.merge.carry"
REPORTED_APART = 200  # kept-apart pairs listed in a report

_EXACT = text(
    "SELECT content_hash, scope, scope_id, "
    "json_group_array(json_array(id, occurred_at)) AS members FROM ("
    "  SELECT content_hash, scope, scope_id, id, occurred_at FROM memory_traces "
    "  WHERE deleted = 0 ORDER BY retrieval_count DESC, created_at, seq"
    ") GROUP BY content_hash, scope, scope_id HAVING count(*) > 1"
)
_FACTS = text(
    "SELECT id, content, type, tags, sources, occurred_at, created_at, retrieval_count "
    "FROM memory_traces "
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
    carry: list[str] = field(default_factory=list)  # traces of pairs left for the next pass


def plan(ctx: PassContext) -> MergePlan:
    result = MergePlan()
    with ctx.brain.read() as conn:
        for row in conn.execute(_EXACT):
            groups = _occurrences(json.loads(row.members))
            result.repeated += sum(len(g) for g in groups if len(g) == 1) - (len(groups) == 1)
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
        carried = set(json.loads(_meta(conn, CARRY_KEY) or "[]"))
    result.mark = mark
    group_ids = {g: i for i, g in enumerate(dict.fromkeys(vectors.groups))}
    groups = np.array([group_ids[g] for g in vectors.groups])
    new = None
    if fresh is not None:
        wanted = fresh | carried
        new = np.array([t in wanted for t in vectors.ids], dtype=np.bool_)
        if not new.any():
            result.notes.append("near duplicates: no vectors since the last pass")
            return
    pairs = near_duplicate_pairs(
        vectors.matrix, groups, ctx.settings.dream_merge_threshold, new=new
    )
    pairs = [(i, j, s) for i, j, s in pairs if vectors.ids[i] not in skip]
    pairs = [(i, j, s) for i, j, s in pairs if vectors.ids[j] not in skip]
    facts = _facts(ctx, {vectors.ids[i] for p in pairs for i in p[:2]})
    drafts: list[ProposalDraft] = []
    for i, j, sim in pairs:
        a, b = facts.get(vectors.ids[i]), facts.get(vectors.ids[j])
        if a is None or b is None:
            continue
        if _cites(a, b) or _cites(b, a):
            continue  # a fact and the turn it was extracted from: provenance, not a copy
        older, newer = (a, b) if _when(a) <= _when(b) else (b, a)
        verdict = _judge(ctx, older, newer)
        if not verdict.duplicate:
            if len(result.apart) < REPORTED_APART:
                result.apart.append(
                    {
                        "kept_apart": [older["id"], newer["id"]],
                        "cosine": round(sim, 4),
                        "kind": verdict.kind,
                        "why": verdict.reason,
                    }
                )
            continue
        drafts.append(_draft(ctx, older, newer, sim))
    drafts = filter_new(ctx.brain, ctx.settings, drafts, now=ctx.now)
    room = min(ctx.settings.dream_max_proposals, pending_room(ctx.brain, ctx.settings))
    result.near = drafts[:room]
    result.carry = sorted({t for d in drafts[room:] for t in d.trace_ids})
    if result.carry:
        result.notes.append(
            f"{len(drafts) - room} verified near duplicates left for the next pass "
            "(proposal cap or pending bound)"
        )


def _judge(ctx: PassContext, older: dict[str, Any], newer: dict[str, Any]) -> Verdict:
    verdict = verify(older["content"], newer["content"], similarity=ctx.word_similarity)
    apart = abs(newer["occurred_at"] - older["occurred_at"]) >= DIFFERENT_EVENTS_S
    if verdict.duplicate and apart and _events(older) and _events(newer):
        return Verdict(False, "occurrence", "two episodes on different days: two events")
    return verdict


def _cites(fact: dict[str, Any], other: dict[str, Any]) -> bool:
    return any(
        isinstance(s, dict) and s.get("trace") == other["id"] for s in json.loads(fact["sources"])
    )


def _events(fact: dict[str, Any]) -> bool:
    """An episode that tells of one happening: a turn, or an episode naming a time of its own
    ("I had a migraine again today"), as opposed to a standing fact stored as episodic."""
    if fact["type"] != "episodic":
        return False
    return "turn" in json.loads(fact["tags"]) or bool(analyse(fact["content"]).times)


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


def _meta(conn: Connection, key: str) -> str | None:
    value = conn.execute(text("SELECT value FROM brain_meta WHERE key = :k"), {"k": key}).scalar()
    return None if value is None else str(value)


def _set_meta(conn: Connection, key: str, value: str) -> None:
    conn.execute(
        text(
            "INSERT INTO brain_meta (key, value) VALUES (:k, :v) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
        ),
        {"k": key, "v": value},
    )


def _fresh_since_mark(conn: Connection, model: str | None) -> tuple[int, set[str] | None]:
    """The newest vector event, and the traces whose vectors were written after the
    last pass's mark (None: compare everything -- first pass, or the log was trimmed
    past the mark)."""
    last = int(conn.execute(text("SELECT coalesce(max(id), 0) FROM embedding_events")).scalar_one())
    raw = _meta(conn, MARK_KEY)
    if raw is None:
        return last, None
    mark = int(raw)
    floor = _meta(conn, "embedding_events_floor")
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
                        ctx.brain, group, merged_content=survivor.content, now=ctx.now
                    )
            except (NotFound, Conflict):
                continue  # changed since planned; the next pass sees it again
            merged.append({"survivor": result.survivor_id, "merged": result.deleted_ids})
        if merge_plan.mark is not None:
            _set_meta(conn, MARK_KEY, str(merge_plan.mark))
            _set_meta(conn, CARRY_KEY, json.dumps(merge_plan.carry))
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
