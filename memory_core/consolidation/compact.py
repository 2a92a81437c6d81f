"""Compact: an old, often-recalled episode gets a statement of what it told.

An episode that keeps being recalled long after it happened has become
knowledge.  Compaction writes that knowledge down as a semantic statement: what
the episode's speaker said that is worth keeping (the offline extractor's facts:
one per statement, relative times written as the dates they meant), attributed
to its speaker and citing the episode, a fact drawn from it like those ingestion
draws (so it ranks as they do).  The episode stays as it was, an episode,
tagged ``compacted`` so it is compacted once.  A statement some trace citing the
episode already makes (the facts ingestion drew from a turn) is not written
again, and an episode that tells nothing durable gets no statement.  Undoing the
pass removes the statement and the tag.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import text

from memory_core.auth import SYSTEM
from memory_core.consolidation.base import PassContext, StepResult
from memory_core.episodes import attributed
from memory_core.errors import Conflict
from memory_core.extraction.offline import OfflineExtractor
from memory_core.supersession.telling import said_by, said_in
from memory_core.traces.decay import DAY
from memory_core.traces.model import FACT_TAG, NewTrace, Trace
from memory_core.traces.store import add_traces, rewrite_trace
from memory_core.traces.undo import changing, created

COMPACTED = "compacted"
STATEMENT = "compaction"  # the tag of a statement compaction wrote

_CANDIDATES = text(
    "SELECT * FROM memory_traces WHERE deleted = 0 AND type = 'episodic' "
    "AND occurred_at < :before AND retrieval_count >= :min_retrievals "
    "AND NOT EXISTS (SELECT 1 FROM json_each(tags) WHERE value = :compacted) "
    "ORDER BY occurred_at"
)
_CITING = text(
    "SELECT content FROM memory_traces WHERE deleted = 0 AND EXISTS "
    "(SELECT 1 FROM json_each(sources) WHERE json_extract(value, '$.trace') = :id)"
)


@dataclass(frozen=True)
class Compaction:
    episode: Trace
    statement: str | None  # None: nothing durable, or already stated


def plan(ctx: PassContext) -> list[Compaction]:
    s = ctx.settings
    with ctx.brain.read() as conn:
        rows = conn.execute(
            _CANDIDATES,
            {
                "before": ctx.now - s.dream_compact_after_days * DAY,
                "min_retrievals": s.dream_compact_min_retrievals,
                "compacted": COMPACTED,
            },
        ).all()
        episodes = [Trace.from_row(r) for r in rows]
        stated = {e.id: {r[0] for r in conn.execute(_CITING, {"id": e.id})} for e in episodes}
    return [Compaction(e, statement(e, stated[e.id])) for e in episodes]


def statement(episode: Trace, stated: Collection[str] = ()) -> str | None:
    """What ``episode`` told that is worth keeping, as one statement of its speaker's
    with absolute dates; None when it tells nothing durable or ``stated`` (what traces
    citing it say) already says all of it."""
    speaker = episode.metadata.get("speaker")
    speaker = speaker if isinstance(speaker, str) else None
    said = said_by(said_in(episode.content), speaker)
    facts = OfflineExtractor().extract(said, "", when=episode.occurred_at).facts
    told = [f.content for f in facts if attributed(f.content, speaker) not in stated]
    if not told:
        return None
    return attributed(" ".join(told), speaker)


def apply(ctx: PassContext, compactions: list[Compaction]) -> list[Compaction]:
    done = []
    with ctx.brain.transaction() as conn:
        for c in compactions:
            episode = c.episode
            try:
                with (
                    ctx.brain.transaction(),
                    changing(conn, ctx.pass_id, "compact", [episode.id], ctx.now),
                ):
                    rewrite_trace(conn, episode, None, [*episode.tags, COMPACTED], ctx.now)
            except Conflict:
                continue  # changed since planned: the next pass looks again
            if c.statement is not None:
                item = NewTrace(
                    content=c.statement,
                    type="semantic",
                    scope=episode.scope,
                    scope_id=episode.scope_id,
                    # A fact drawn from the episode, as ingestion draws them: it ranks
                    # as facts do and is one memory with its turn.
                    tags=[STATEMENT, FACT_TAG],
                    importance=episode.importance,
                    metadata={
                        k: v
                        for k, v in episode.metadata.items()
                        if k in ("speaker", "conversation_id", "turn_id")
                    }
                    | {"compacted_from": episode.id, "pass_id": ctx.pass_id},
                    sources=[{"trace": episode.id}],
                    occurred_at=episode.occurred_at,
                )
                ids = add_traces(ctx.brain, [item], now=ctx.now, identity=SYSTEM)
                created(conn, ctx.pass_id, "compact", ids, ctx.now)
            done.append(c)
    return done


def run(ctx: PassContext) -> StepResult:
    compactions = plan(ctx)
    done = compactions if ctx.dry_run else apply(ctx, compactions)
    return StepResult(
        "compact",
        counts={
            "compacted": len(done),
            "stated": sum(c.statement is not None for c in done),
        },
        items=[{"trace_id": c.episode.id, "statement": c.statement} for c in done],
    )
