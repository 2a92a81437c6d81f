"""Derive: what the brain holds on one topic or person, as one insight that keeps up.

Clusters come from average-linkage agglomerative clustering (scikit-learn)
over the vectors of the most recent statements: facts drawn from turns and
memories written directly, never verbatim turns (their facts stand for them),
other insights, anything content-free (greetings, thanks, acknowledgements:
:func:`~memory_core.consolidation.salience.is_smalltalk`) or anything a pending
proposal would prune.  Each person's statements are clustered apart, since an
insight's heading names one person and every claim under it is told of them.
The window is bounded, so the step costs the same on any brain size.

Each cluster of at least ``dream_derive_min_cluster`` statements, a third of which
at least name something (a number, a date, a name: a cluster of "won't quit on my
dreams" says nothing concrete), is one insight:
a digest of what its statements say, each as a claim with its date, headed by
whom or what they are about::

    Caroline — went to an LGBTQ support group on 7 May 2023; is researching
    adoption agencies (25 May 2023); ...

What an insight tells stays its own: a statement it cites belongs to it, and a
new statement as close to its statements as a cluster's members are to each other
joins it; only what no insight claims is clustered anew.  When an insight's
statements change (one more, one gone), it is rewritten in place -- a new version
citing the new set, undoable with the pass -- never written twice, and topics do
not reshuffle from pass to pass.

With an LLM configured, it writes the digest in the same shape from the same
dated statements; its answer is kept only when every claim in it can be traced
to a cited statement (its words and numbers are theirs), else the offline
digest is.  A dry run reports the text the pass would write and how.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from sqlalchemy import text

from memory_core.auth import SYSTEM
from memory_core.consolidation.base import PassContext, StepResult
from memory_core.consolidation.digest import (
    MAX_INSIGHT_CHARS,
    Statement,
    chosen,
    day,
    offline_digest,
    specific,
    told,
    traceable,
)
from memory_core.consolidation.phatic import model_for as phatic_model
from memory_core.errors import Conflict
from memory_core.proposals.base import ProposalDraft, subject_ids
from memory_core.proposals.create import create_proposals, filter_new, pending_room
from memory_core.supersession.slots import persons_named, subjects_named
from memory_core.traces.model import TURN_TAG, NewTrace, Trace
from memory_core.traces.store import add_traces, rewrite_trace
from memory_core.traces.undo import changing, created

log = logging.getLogger(__name__)

DERIVED = "derived"
INSIGHT = "insight"


@dataclass(frozen=True)
class Insight:
    content: str
    source_ids: list[str]
    scope: str
    scope_id: str | None
    importance: float
    method: str  # "offline" | "llm"
    # When what it tells was last told: its newest statement's time, not the pass's (a
    # digest of March's talk written in May is no news of May's, and does not take
    # recency's lift from the statements it digests).
    told_at: float
    replaces: Trace | None = None  # the insight this one rewrites


def plan(ctx: PassContext) -> list[Insight]:
    vectors = ctx.vectors
    if vectors is None or ctx.settings.dream_derive_max == 0:
        return []
    statements = _statements(ctx)
    index = vectors.index()
    # What each insight tells stays its own: a statement one cites is claimed by it
    # (by the oldest, should two cite it), so topics do not reshuffle from pass to pass.
    claimed: dict[str, str] = {}
    members: dict[str, list[str]] = {}
    insights_by_id: dict[str, Trace] = {}
    for insight in sorted(_insights(ctx), key=lambda t: (t.created_at, t.id)):
        own = [t for t in insight.cited if t in statements and t not in claimed]
        insights_by_id[insight.id] = insight
        members[insight.id] = own
        claimed.update(dict.fromkeys(own, insight.id))
    order = np.argsort(-vectors.created_at, kind="stable")
    window = [
        int(i) for i in order if vectors.ids[i] in statements and vectors.ids[i] not in claimed
    ][: ctx.settings.dream_derive_window]
    # A new statement close to what an insight tells, of whom it tells, joins it.
    subject_of = {t: m.subject for t, m in statements.items()}
    unjoined = []
    for i in window:
        home = _closest(ctx, members, insights_by_id, index, i, subject_of)
        if home is None:
            unjoined.append(i)
        else:
            members[home].append(vectors.ids[i])
    planned: list[Insight] = []
    for insight_id, ids in members.items():
        insight = insights_by_id[insight_id]
        if len(ids) >= ctx.settings.dream_derive_min_cluster and set(ids) != set(insight.cited):
            planned.append(_insight(ctx, [statements[t] for t in ids], insight))
    for cluster in _clusters(ctx, unjoined, subject_of):
        found = [statements[vectors.ids[i]] for i in cluster]
        if 3 * sum(specific(m.said) for m in found) < len(found):
            continue  # vague ("won't quit on my dreams", "gonna keep going"): no insight
        planned.append(_insight(ctx, found, None))
    return planned[: ctx.settings.dream_derive_max]


def _closest(
    ctx: PassContext,
    members: dict[str, list[str]],
    insights: dict[str, Trace],
    index: dict[str, int],
    row: int,
    subject_of: dict[str, str],
) -> str | None:
    """The insight of the same person whose statements ``row`` is on average as close
    to as a cluster's members are to each other, the closest such; None when none is."""
    vectors = ctx.vectors
    assert vectors is not None
    group = vectors.groups[row]
    subject = subject_of[vectors.ids[row]]
    best, best_similarity = None, ctx.settings.dream_derive_similarity
    for insight_id, ids in members.items():
        rows = [index[t] for t in ids if t in index]
        insight = insights[insight_id]
        if not rows or (insight.scope, insight.scope_id) != group:
            continue
        if _most(subject_of.get(t) for t in ids) != subject:
            continue
        similarity = float(np.mean(vectors.matrix[rows] @ vectors.matrix[row]))
        if similarity >= best_similarity:
            best, best_similarity = insight_id, similarity
    return best


def _statements(ctx: PassContext) -> dict[str, Statement]:
    """What an insight may be built from, by trace id: of the newest statements (twice
    the window: some tell nothing) and those insights cite, what tells something."""
    with ctx.brain.read() as conn:
        rows = conn.execute(
            text(
                "SELECT * FROM memory_traces WHERE id IN (SELECT id FROM memory_traces "
                "WHERE deleted = 0 AND NOT EXISTS (SELECT 1 FROM json_each(tags) "
                "WHERE value IN (:turn, :derived)) ORDER BY created_at DESC LIMIT :newest) "
                "OR id IN (SELECT json_extract(s.value, '$.trace') FROM memory_traces i, "
                "json_each(i.sources) s WHERE i.deleted = 0 AND EXISTS (SELECT 1 FROM "
                "json_each(i.tags) WHERE value = :derived))"
            ),
            {
                "turn": TURN_TAG,
                "derived": DERIVED,
                "newest": 2 * ctx.settings.dream_derive_window,
            },
        ).all()
        model = phatic_model(ctx.embedder_name)
        content_free = (
            set()
            if model is None
            else {
                t
                for t, value in conn.execute(
                    text("SELECT trace_id, value FROM trace_judgements WHERE judge = :judge"),
                    {"judge": model.name},
                )
                if value >= model.threshold
            }
        )
        pruning = {
            t
            for (key,) in conn.execute(
                text(
                    "SELECT subject_key FROM proposals WHERE status = 'pending' AND kind = 'prune'"
                )
            )
            for t in subject_ids(key)
        }
    traces = [Trace.from_row(row) for row in rows]
    speakers: dict[tuple[str, str | None], set[str]] = {}
    for trace in traces:
        if isinstance(name := trace.metadata.get("speaker"), str):
            speakers.setdefault((trace.scope, trace.scope_id), set()).add(name)
    out: dict[str, Statement] = {}
    for trace in traces:
        # Not what a pending proposal would prune, nor a fact of a turn the phatic
        # judgement found content-free (a warm reply that says nothing).
        if trace.deleted or TURN_TAG in trace.tags or DERIVED in trace.tags:
            continue  # cited by an insight, but gone or not a statement
        if trace.id in pruning or any(
            isinstance(src, dict) and src.get("trace") in content_free for src in trace.sources
        ):
            continue
        speaker = trace.metadata.get("speaker")
        speaker = speaker if isinstance(speaker, str) else None
        said = told(trace.content, speakers.get((trace.scope, trace.scope_id), set()))
        if not said:
            continue
        known = persons_named(said)
        out[trace.id] = Statement(trace, said, subjects_named(said, known, speaker))
    return out


def _most(subjects: Iterable[str | None]) -> str | None:
    """The subject most of an insight's statements are about."""
    counts = Counter(s for s in subjects if s is not None)
    return counts.most_common(1)[0][0] if counts else None


def _clusters(ctx: PassContext, window: list[int], subject_of: dict[str, str]) -> list[list[int]]:
    """Topics among ``window``'s statements, each of one scope and one person."""
    from sklearn.cluster import AgglomerativeClustering

    vectors = ctx.vectors
    assert vectors is not None
    by_group: dict[tuple[str, str | None, str], list[int]] = {}
    for i in window:
        scope, scope_id = vectors.groups[i]
        by_group.setdefault((scope, scope_id, subject_of[vectors.ids[i]]), []).append(i)
    clusters: list[list[int]] = []
    min_size = ctx.settings.dream_derive_min_cluster
    for members in by_group.values():
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
    clusters.sort(key=lambda c: (-len(c), min(vectors.ids[i] for i in c)))
    return clusters


def _insights(ctx: PassContext) -> list[Trace]:
    with ctx.brain.read() as conn:
        rows = conn.execute(
            text(
                "SELECT * FROM memory_traces WHERE deleted = 0 AND EXISTS "
                "(SELECT 1 FROM json_each(tags) WHERE value = :derived)"
            ),
            {"derived": DERIVED},
        ).all()
    return [Trace.from_row(r) for r in rows]


def _insight(ctx: PassContext, members: list[Statement], current: Trace | None) -> Insight:
    content, method = _written(ctx, members, chosen(members))
    return Insight(
        content=content,
        source_ids=sorted(m.trace.id for m in members),
        scope=members[0].trace.scope,
        scope_id=members[0].trace.scope_id,
        importance=max(m.trace.importance for m in members),
        method=method,
        replaces=current,
        told_at=max(m.trace.occurred_at for m in members),
    )


def _written(ctx: PassContext, members: list[Statement], told: list[Statement]) -> tuple[str, str]:
    """The reasoner's digest of the statements ``told`` when one is configured, answers and
    every claim of it is traceable; the offline digest otherwise."""
    offline = offline_digest(members, told)
    if ctx.reasoner == "offline":
        return offline, "offline"
    if ctx.judge is None:  # a dry run
        return offline, "llm"  # the real pass asks the reasoner; this is its fallback
    days = [day(m) for m in told]
    scope = members[0].trace
    answer = ctx.judge.summarize(
        [f"[{d}] {m.trace.content}" for d, m in zip(days, told, strict=True)],
        scope=scope.scope,
        scope_id=scope.scope_id,
    )
    if answer is None:
        log.warning("no insight from the reasoner (it failed or was not asked); writing it offline")
        return offline, "offline"
    answer = answer.strip()[:MAX_INSIGHT_CHARS]
    if not traceable(answer, [m.trace.content for m in told] + days):
        log.warning("insight by LLM claims what its sources do not say; writing it offline")
        return offline, "offline"
    return answer, "llm"


def apply(ctx: PassContext, insights: list[Insight]) -> list[str | None]:
    """Write each insight (a new trace, or a new version of the one it rewrites): the
    id of each, None where the one to rewrite changed since it was planned."""
    ids: list[str | None] = []
    with ctx.brain.transaction() as conn:
        for i in insights:
            meta = {"derived_by": i.method, "pass_id": ctx.pass_id}
            sources = [{"trace": t} for t in i.source_ids]
            if i.replaces is None:
                item = NewTrace(
                    content=i.content,
                    type="semantic",
                    scope=i.scope,
                    scope_id=i.scope_id,
                    tags=[DERIVED, INSIGHT],
                    importance=i.importance,
                    metadata=meta,
                    sources=sources,
                    occurred_at=min(i.told_at, ctx.now),
                )
                (new,) = add_traces(ctx.brain, [item], now=ctx.now, identity=SYSTEM)
                created(conn, ctx.pass_id, "derive", [new], ctx.now)
                ids.append(new)
                continue
            old = i.replaces
            try:
                with (
                    ctx.brain.transaction(),
                    changing(conn, ctx.pass_id, "derive", [old.id], ctx.now),
                ):
                    rewrite_trace(
                        conn,
                        old,
                        i.content,
                        None,
                        ctx.now,
                        sources=json.dumps(sources),
                        metadata=json.dumps({**old.metadata, **meta}),
                        importance=i.importance,
                        occurred_at=min(i.told_at, ctx.now),
                    )
            except Conflict:
                ids.append(None)  # changed since planned: the next pass looks again
                continue
            ids.append(old.id)
    return ids


def outdated(ctx: PassContext) -> list[ProposalDraft]:
    """A proposal to prune each insight an older derive wrote by stringing its members'
    first sentences together ("Recurring theme across 11 memories: ..."): the digests
    written now replace them, and what they cite stays."""
    with ctx.brain.read() as conn:
        rows = conn.execute(
            text(
                "SELECT * FROM memory_traces WHERE deleted = 0 "
                "AND json_extract(metadata, '$.derived_by') = 'extractive' AND EXISTS "
                "(SELECT 1 FROM json_each(tags) WHERE value = :derived)"
            ),
            {"derived": DERIVED},
        ).all()
    drafts = [
        ProposalDraft(
            kind="prune",
            trace_ids=[t.id],
            reason="an insight of the older kind, its sources' first sentences strung "
            "together; derive now writes a dated digest of them instead",
            scores={"importance": t.importance, "sources": float(len(t.cited))},
            summary=f"prune: {' '.join(t.content.split())[:69]}",
        )
        for t in (Trace.from_row(r) for r in rows)
    ]
    drafts = filter_new(ctx.brain, ctx.settings, drafts, now=ctx.now)
    return drafts[: min(ctx.settings.dream_max_proposals, pending_room(ctx.brain, ctx.settings))]


def _edited_by_a_person(ctx: PassContext, insights: list[Insight]) -> set[str]:
    """Of the insights a pass would rewrite, those a person edited (an edit journaled
    and not undone): a pass proposes its new text for them rather than overwrite theirs."""
    ids = sorted({i.replaces.id for i in insights if i.replaces is not None})
    if not ids:
        return set()
    with ctx.brain.read() as conn:
        rows = conn.execute(
            text(
                "SELECT DISTINCT trace_id FROM undo_log WHERE substr(unit, 1, 5) = 'edit_' "
                "AND undone_at IS NULL AND trace_id IN (SELECT value FROM json_each(:ids))"
            ),
            {"ids": json.dumps(ids)},
        )
        return {str(r[0]) for r in rows}


def _rewrite_proposals(insights: list[Insight]) -> list[ProposalDraft]:
    return [
        ProposalDraft(
            kind="rewrite",
            trace_ids=[i.replaces.id],
            reason="a person edited this insight; the pass would write it anew from what "
            "it cites now, and asks first",
            scores={"sources": float(len(i.source_ids))},
            summary=f"rewrite: {' '.join(i.content.split())[:67]}",
            rewritten_content=i.content,
        )
        for i in insights
        if i.replaces is not None
    ]


def run(ctx: PassContext) -> StepResult:
    insights = plan(ctx)
    edited = _edited_by_a_person(ctx, insights)
    asked = [i for i in insights if i.replaces is not None and i.replaces.id in edited]
    insights = [i for i in insights if i not in asked]
    rewrites = filter_new(ctx.brain, ctx.settings, _rewrite_proposals(asked), now=ctx.now)
    drafts = outdated(ctx)
    room = max(0, min(ctx.settings.dream_max_proposals, pending_room(ctx.brain, ctx.settings)))
    drafts = (rewrites + drafts)[:room]
    ids: list[str | None] = [None] * len(insights) if ctx.dry_run else apply(ctx, insights)
    result = StepResult(
        "derive",
        counts={
            "derived": sum(i.replaces is None for i in insights),
            "updated": sum(i.replaces is not None for i in insights),
        },
    )
    result.items = [
        {
            "insight": ids[k],
            "sources": i.source_ids,
            "content": i.content,
            "written_by": i.method,
            "updates": i.replaces.id if i.replaces else None,
        }
        for k, i in enumerate(insights)
    ]
    if not ctx.dry_run:
        result.proposals = create_proposals(
            ctx.brain, ctx.settings, drafts, ctx.pass_id, now=ctx.now
        )
    result.counts["proposed"] = len(drafts) if ctx.dry_run else len(result.proposals)
    if ctx.dry_run and ctx.reasoner != "offline":
        result.notes.append(
            "dry run: the LLM is not asked; each text shown is the offline digest the pass "
            "writes if the LLM fails or claims what its sources do not say"
        )
    if ctx.vectors is None:
        result.notes.append("no insights: no embeddings")
    return result
