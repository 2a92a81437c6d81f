"""Resolve: two statements of a one-valued slot that both still hold, settled or proposed.

:func:`~memory_core.supersession.conflicts.standing` finds them ("I live in
Leeds", months later "Our flat in York has a garden").  With an LLM configured,
the pass asks it whether the later statement replaces the earlier, once, in the
first pass after the later one was written (the judgement cache answers a
question asked before): its "yes" supersedes the earlier
unattended (an update: nothing is deleted, and undoing the pass restores it),
its "no" leaves both.  What it cannot settle -- no LLM, an LLM that fails,
cannot tell or is not asked (the pass's judge calls spent) -- becomes a
``conflict`` proposal for a person: accepting it supersedes the earlier
statement by the later; rejecting it keeps both.
Proposals are the oldest pairs first, at most ``REVERIE_DREAM_MAX_PROPOSALS`` a
pass and never past ``REVERIE_DREAM_MAX_PENDING`` pending.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from memory_core.consolidation.base import PassContext, StepResult
from memory_core.language.phrases import WHAT_A_SLOT_HOLDS
from memory_core.proposals import ProposalDraft, create_proposals, filter_new, pending_room
from memory_core.supersession.chain import supersede
from memory_core.supersession.conflicts import Held, Standing, standing, statement_of
from memory_core.supersession.slots import base_attribute
from memory_core.traces.undo import changing

_QUOTED = 160  # characters of each statement a proposal's summary quotes


@dataclass
class ResolvePlan:
    settled: list[tuple[Standing, str]] = field(default_factory=list)  # the LLM's yes
    kept: list[tuple[Standing, str]] = field(default_factory=list)  # the LLM's no
    drafts: list[ProposalDraft] = field(default_factory=list)


def plan(ctx: PassContext) -> ResolvePlan:
    with ctx.brain.read() as conn:
        pairs = standing(conn, ctx.embedder_name)
    out = ResolvePlan()
    undecided = []
    for pair in pairs:
        if ctx.judge is None:
            undecided.append(pair)
            continue
        if not ctx.is_new(pair.newer.created_at):
            continue  # judged by an earlier pass
        replaces, why = ctx.judge.replaces(
            pair.older.said, pair.newer.said, scope=pair.older.scope, scope_id=pair.older.scope_id
        )
        if replaces is True:
            out.settled.append((pair, why))
        elif replaces is False:
            out.kept.append((pair, why))
        else:
            undecided.append(pair)
    drafts = filter_new(ctx.brain, ctx.settings, [draft(p) for p in undecided], now=ctx.now)
    room = min(ctx.settings.dream_max_proposals, pending_room(ctx.brain, ctx.settings))
    out.drafts = drafts[:room]
    return out


def draft(pair: Standing) -> ProposalDraft:
    """The ``conflict`` proposal a pair becomes: its first trace is the earlier statement,
    which accepting supersedes by the second."""
    what = _what(pair.older.slot)
    summary = (
        f'Two statements of {what} both stand: "{_quote(pair.older)}" ({_day(pair.older)}) '
        f'and later "{_quote(pair.newer)}" ({_day(pair.newer)}). Accepting marks the '
        "earlier superseded by the later; nothing is deleted."
    )
    scores = {} if pair.similarity is None else {"similarity": round(pair.similarity, 4)}
    return ProposalDraft(
        kind="conflict",
        trace_ids=[pair.older.id, pair.newer.id],
        reason=f"both hold a value of {pair.older.slot}, and the later names another",
        scores=scores,
        summary=summary,
    )


def apply(ctx: PassContext, p: ResolvePlan) -> tuple[int, list[str]]:
    """Supersede what the LLM settled (recorded for the pass's undo) and file the drafts;
    returns how many traces were superseded and the new proposals' ids."""
    superseded = 0
    if p.settled:
        with ctx.brain.transaction() as conn:
            for pair, _ in p.settled:
                older = statement_of(conn, pair.older.id)
                with changing(conn, ctx.pass_id, "resolve", older, ctx.now):
                    superseded += supersede(conn, older, pair.newer.id, at=pair.newer.occurred_at)
    made = create_proposals(ctx.brain, ctx.settings, p.drafts, ctx.pass_id, now=ctx.now)
    return superseded, made


def run(ctx: PassContext) -> StepResult:
    result = StepResult("resolve")
    p = plan(ctx)
    result.items = [
        {"older": pair.older.id, "newer": pair.newer.id, "judged": verdict, "reason": why}
        for verdict, found in (("replaces", p.settled), ("both_hold", p.kept))
        for pair, why in found
    ] + [{"older": d.trace_ids[0], "newer": d.trace_ids[1], "judged": None} for d in p.drafts]
    result.counts["kept"] = len(p.kept)
    if ctx.dry_run:
        result.counts["superseded"] = 0
        result.counts["proposed"] = len(p.drafts)
        return result
    superseded, result.proposals = apply(ctx, p)
    result.counts["superseded"] = superseded
    result.counts["proposed"] = len(result.proposals)
    return result


def _what(slot: str) -> str:
    subject, _, rest = slot.partition("/")
    who = "the user" if subject == "user" else subject.title()
    topic = rest.partition(":")[2]
    template = WHAT_A_SLOT_HOLDS.get(base_attribute(slot), "{who_s} " + rest)
    return template.format(who=who, who_s=f"{who}'s", topic=topic)


def _quote(held: Held) -> str:
    said = " ".join(held.said.split())
    return said if len(said) <= _QUOTED else said[: _QUOTED - 1].rstrip() + "…"


def _day(held: Held) -> str:
    return datetime.fromtimestamp(held.occurred_at, UTC).strftime("%-d %B %Y")
