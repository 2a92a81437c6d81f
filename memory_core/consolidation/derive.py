"""Derive: what the brain holds on one topic or person, as one insight that keeps up.

Clusters come from average-linkage agglomerative clustering (scikit-learn)
over the vectors of the most recent statements: facts drawn from turns and
memories written directly, never verbatim turns (their facts stand for them),
other insights, anything content-free (greetings, thanks, acknowledgements:
:func:`~memory_core.consolidation.salience.is_smalltalk`) or anything a pending
proposal would prune.  The window is bounded, so the step costs the same on any
brain size.

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
import re
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
from sqlalchemy import text

from memory_core.auth import SYSTEM
from memory_core.consolidation.base import PassContext, StepResult
from memory_core.consolidation.phatic import model_for as phatic_model
from memory_core.consolidation.salience import is_smalltalk, sentences
from memory_core.errors import Conflict
from memory_core.extraction.dates import written_day
from memory_core.extraction.english import IRREGULAR_PAST
from memory_core.proposals.base import ProposalDraft, subject_ids
from memory_core.proposals.create import create_proposals, filter_new, pending_room
from memory_core.supersession.slots import USER, persons_named, subjects_named
from memory_core.textutil import STOPWORDS, stem
from memory_core.traces.model import TURN_TAG, NewTrace, Trace
from memory_core.traces.store import add_traces, rewrite_trace
from memory_core.traces.undo import changing, created

log = logging.getLogger(__name__)

MAX_INSIGHT_CHARS = 900
MAX_CLAIMS = 8  # the most important statements of a cluster make its digest
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
    replaces: Trace | None = None  # the insight this one rewrites


@dataclass(frozen=True)
class _Statement:
    trace: Trace
    said: str  # its first sentence that tells something, without a speaker's label
    subject: str  # whom it is about: a person's name, or "user"


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
        own = [t for t in _cited(insight) if t in statements and t not in claimed]
        insights_by_id[insight.id] = insight
        members[insight.id] = own
        claimed.update(dict.fromkeys(own, insight.id))
    order = np.argsort(-vectors.created_at, kind="stable")
    window = [
        int(i) for i in order if vectors.ids[i] in statements and vectors.ids[i] not in claimed
    ][: ctx.settings.dream_derive_window]
    # A new statement close to what an insight tells joins it.
    unjoined = []
    for i in window:
        home = _closest(ctx, members, insights_by_id, index, i)
        if home is None:
            unjoined.append(i)
        else:
            members[home].append(vectors.ids[i])
    planned: list[Insight] = []
    for insight_id, ids in members.items():
        insight = insights_by_id[insight_id]
        if len(ids) >= ctx.settings.dream_derive_min_cluster and set(ids) != set(_cited(insight)):
            planned.append(_insight(ctx, [statements[t] for t in ids], insight))
    for cluster in _clusters(ctx, unjoined):
        found = [statements[vectors.ids[i]] for i in cluster]
        if 3 * sum(_specific(m.said) for m in found) < len(found):
            continue  # vague ("won't quit on my dreams", "gonna keep going"): no insight
        planned.append(_insight(ctx, found, None))
    return planned[: ctx.settings.dream_derive_max]


def _closest(
    ctx: PassContext,
    members: dict[str, list[str]],
    insights: dict[str, Trace],
    index: dict[str, int],
    row: int,
) -> str | None:
    """The insight whose statements ``row`` is on average as close to as a cluster's
    members are to each other, the closest such; None when none is."""
    vectors = ctx.vectors
    assert vectors is not None
    group = vectors.groups[row]
    best, best_similarity = None, ctx.settings.dream_derive_similarity
    for insight_id, ids in members.items():
        rows = [index[t] for t in ids if t in index]
        insight = insights[insight_id]
        if not rows or (insight.scope, insight.scope_id) != group:
            continue
        similarity = float(np.mean(vectors.matrix[rows] @ vectors.matrix[row]))
        if similarity >= best_similarity:
            best, best_similarity = insight_id, similarity
    return best


def _statements(ctx: PassContext) -> dict[str, _Statement]:
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
    out: dict[str, _Statement] = {}
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
        said = _told(trace.content, speakers.get((trace.scope, trace.scope_id), set()))
        if not said:
            continue
        known = persons_named(said)
        out[trace.id] = _Statement(trace, said, subjects_named(said, known, speaker))
    return out


def _told(content: str, listeners: Collection[str] = ()) -> str:
    """What a memory tells, in its first sentence that tells something: not small talk,
    not a question, not said to the listener ("You're killing it!", "I love the
    thought Nate" when Nate is one of ``listeners``, those who speak in its scope),
    not urging or wishing ("Let's ..."), not a shared photo's caption; empty when no
    sentence does.  Speakers' labels are left out."""
    for said in sentences(content):
        sentence = _OPENER.sub("", _LABELS.sub("", said)).strip()
        if sentence.startswith("a photo of") or sentence.endswith("?") or _NOT_TOLD.match(sentence):
            continue
        if _TO_LISTENER.search(sentence) or is_smalltalk(sentence):
            continue
        last = _STAMP.sub("", sentence).rstrip(" .!").rsplit(" ", 1)[-1]
        if last in listeners:
            continue
        if len(sentence.split()) < _MIN_WORDS:  # "it was amazing", "agree, Mel"
            continue
        return sentence[:1].upper() + sentence[1:]
    return ""


# Said to the listener: "you", or their name closing it ("I 100% agree, Mel.").
_TO_LISTENER = re.compile(
    r"(?i:\b(?:you|your|you're|you've|yours|yourself)\b)|,\s+[A-Z][a-z]+[.!]*$"
    r"|(?i:\bsince we last (?:spoke|talked|chatted))"
)
_LABELS = re.compile(r"^(?:[A-Z][\w.'-]*(?: [A-Z][\w.'-]*)?: )+")
# Interjections and the name of the one spoken to, before what is told: "Yeah,
# Caroline, ...", "Wow, ...".
_OPENER = re.compile(
    r"^(?:(?i:yeah|yes|yep|yup|wow|aw+|oh|ah|haha|lol|omg|hey|hi|so|well|totally|ok|okay"
    r"|100%|by the way|btw)[,!.]*\s+)+(?:[A-Z][a-z]+[,!]\s+)?"
)
_MIN_WORDS = 4
_STAMP = re.compile(r"\s*\(as of [^)]*\)")
# Urging, wishing or cheering rather than telling: "Let's live it up", "Don't miss a
# beat", "Can't wait for the opening", "Congrats on finishing it up".
_NOT_TOLD = re.compile(
    r"(?i)^(?:let's|let us|don't|do not|can't wait|cannot wait|keep it up|congrats"
    r"|congratulations|well done|good luck|sending (?:\w+ )*(?:vibes|love|hugs))\b"
)


def _specific(said: str) -> bool:
    """Whether a statement names something: a number, a date, a name."""
    return bool(_SPECIFIC.search(said))


# A digit, or a capitalised word not opening the sentence (nor "I").
_SPECIFIC = re.compile(r"\d|(?<=[\w,;:] )(?!I\b|I')[A-Z][\w'-]+")


def _clusters(ctx: PassContext, window: list[int]) -> list[list[int]]:
    from sklearn.cluster import AgglomerativeClustering

    vectors = ctx.vectors
    assert vectors is not None
    by_group: dict[tuple[str, str | None], list[int]] = {}
    for i in window:
        by_group.setdefault(vectors.groups[i], []).append(i)
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


def _cited(insight: Trace) -> list[str]:
    return [s["trace"] for s in insight.sources if isinstance(s, dict) and "trace" in s]


def _insight(ctx: PassContext, members: list[_Statement], current: Trace | None) -> Insight:
    chosen = _chosen(members)
    scope, scope_id = members[0].trace.scope, members[0].trace.scope_id
    content, method = _written(ctx, members, chosen)
    return Insight(
        content=content,
        source_ids=sorted(m.trace.id for m in members),
        scope=scope,
        scope_id=scope_id,
        importance=max(m.trace.importance for m in members),
        method=method,
        replaces=current,
    )


def _chosen(members: list[_Statement]) -> list[_Statement]:
    """The statements the digest tells, in the order they happened: the most important
    (the newer on a tie), one of each wording."""
    ranked = sorted(members, key=lambda m: (-m.trace.importance, -m.trace.occurred_at))
    seen: set[str] = set()
    chosen: list[_Statement] = []
    for m in ranked:
        key = " ".join(_ANY_WORD.findall(m.said.lower()))  # a number differing is news
        if key in seen:
            continue
        seen.add(key)
        chosen.append(m)
        if len(chosen) == MAX_CLAIMS:
            break
    return sorted(chosen, key=lambda m: (m.trace.occurred_at, m.trace.id))


def digest(members: list[_Statement]) -> str:
    """The offline insight: whom or what the statements are about, then each as a
    claim with its date, as many as fit."""
    heading = _heading(members)
    claims = [_claim(m) for m in _chosen(members)]
    while (
        len(claims) > 1 and len(heading) + sum(len(c) + 2 for c in claims) + 3 > MAX_INSIGHT_CHARS
    ):
        claims.pop()
    return f"{heading} — {'; '.join(claims)}."[:MAX_INSIGHT_CHARS]


def _heading(members: list[_Statement]) -> str:
    """Whom the statements are about: the one most are about, else each of them."""
    subjects = Counter(m.subject for m in members)
    subject, count = subjects.most_common(1)[0]
    if 2 * count > len(members):
        return _who(subject)
    return " and ".join(_who(s) for s, _ in subjects.most_common(3))


def _who(subject: str) -> str:
    return "The user" if subject == USER else subject.title()


_WORD = re.compile(r"[a-z][a-z'-]+")
_ANY_WORD = re.compile(r"\w+")


def _content_words(said: str) -> list[str]:
    return [w for w in _WORD.findall(said.lower()) if w not in STOPWORDS and w not in _PERSONAL]


_PERSONAL = frozenset("i i'm i've i'd i'll me my mine myself we we're our us".split())


def _claim(m: _Statement) -> str:
    """A statement as a claim in the third person, with the day it was told when it
    names no year of its own."""
    claim = _third_person(m.said).rstrip(" .!")
    if not _YEAR.search(claim):
        told = datetime.fromtimestamp(m.trace.occurred_at, UTC).date()
        claim = f"{claim} ({written_day(told)})"
    return claim


_YEAR = re.compile(r"\b(?:1[89]|20)\d{2}\b")
_OPENINGS = (
    (re.compile(r"^(?:I'm|I am|Im)\s+", re.IGNORECASE), "is "),
    (re.compile(r"^(?:I've|I have)\s+", re.IGNORECASE), "has "),
    (re.compile(r"^I'd\s+", re.IGNORECASE), "would "),
    (re.compile(r"^I'll\s+", re.IGNORECASE), "will "),
    (re.compile(r"^I\s+was\s+", re.IGNORECASE), "was "),
)
_INNER = (
    (re.compile(r"\bI'm\b"), "they're"),
    (re.compile(r"\bI've\b"), "they've"),
    (re.compile(r"\bI'd\b"), "they'd"),
    (re.compile(r"\bI'll\b"), "they'll"),
    (re.compile(r"\bI was\b"), "they were"),
    (re.compile(r"\bI am\b"), "they are"),
    (re.compile(r"\bI\b"), "they"),
    (re.compile(r"\bmyself\b", re.IGNORECASE), "themselves"),
    (re.compile(r"\bmine\b", re.IGNORECASE), "theirs"),
    (re.compile(r"\bme\b"), "them"),
)


def _third_person(said: str) -> str:
    """``said`` (one statement) told of its speaker: "I'm researching adoption" ->
    "is researching adoption", "My mum visited" -> "their mum visited"."""
    first = said.strip()
    for pattern, replacement in _OPENINGS:
        if pattern.match(first):
            first = pattern.sub(replacement, first, count=1)
            break
    else:
        if first.startswith("I "):
            first = _verb_of_third_person(first[2:])
    first = re.sub(r"^My\b", "Their", first)
    first = re.sub(r"\bmy\b", "their", first)
    for pattern, replacement in _INNER:
        first = pattern.sub(replacement, first)
    return first[:1].lower() + first[1:] if first[:1].isupper() and _lower_opening(first) else first


def _lower_opening(claim: str) -> bool:
    """Whether a claim's first word is an ordinary word (not a name) to lower-case."""
    word = claim.split(" ", 1)[0]
    return word in {"Their", "Is", "Has", "Was", "Would", "Will"} or word.lower() in STOPWORDS


_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "am": "is", "can": "can"}


def _verb_of_third_person(rest: str) -> str:
    """The rest of "I <verb> ..." with its verb as said of someone else: "love" ->
    "loves"; a past or modal verb stays."""
    word, _, tail = rest.partition(" ")
    low = word.lower()
    if low in _IRREGULAR:
        verb = _IRREGULAR[low]
    elif low.endswith("ed") or low in _UNCHANGED or low in IRREGULAR_PAST or not low.isalpha():
        verb = word
    elif low.endswith(("s", "sh", "ch", "x", "z", "o")):
        verb = word + "es"
    elif low.endswith("y") and low[-2:-1] not in "aeiou":
        verb = word[:-1] + "ies"
    else:
        verb = word + "s"
    return f"{verb} {tail}".strip()


_UNCHANGED = frozenset(
    """
    went got had made took saw met came gave found told thought felt left kept began ran
    bought brought caught taught wrote read said did was were could would should might
    must will shall may just really also still never always finally recently
    """.split()
)


def _written(
    ctx: PassContext, members: list[_Statement], chosen: list[_Statement]
) -> tuple[str, str]:
    """The LLM's digest when one is configured, answers and every claim of it is
    traceable; the offline digest otherwise."""
    offline = digest(members)
    if not ctx.settings.llm_base_url:
        return offline, "offline"
    if ctx.dry_run:
        return offline, "llm"  # the real pass asks the LLM; this is its fallback
    from memory_core.errors import ExtractionError
    from memory_core.extraction.llm import LLMExtractor

    dated = [f"[{_day(m)}] {m.trace.content}" for m in chosen]
    client = LLMExtractor.from_settings(ctx.settings)
    try:
        answer, _tokens = client.summarize(dated)
    except ExtractionError as e:
        log.warning("insight by LLM failed, writing it offline: %s", e)
        return offline, "offline"
    finally:
        client.close()
    answer = answer.strip()[:MAX_INSIGHT_CHARS]
    if not traceable(answer, [m.trace.content for m in chosen] + [_day(m) for m in chosen]):
        log.warning("insight by LLM claims what its sources do not say; writing it offline")
        return offline, "offline"
    return answer, "llm"


def _day(m: _Statement) -> str:
    return written_day(datetime.fromtimestamp(m.trace.occurred_at, UTC).date())


def traceable(insight: str, sources: list[str]) -> bool:
    """Whether every claim of ``insight`` can be traced to ``sources``: each of its
    numbers is theirs, and at least half of its words are (by their stems; the words
    that say whom it is about aside)."""
    told = " ".join(sources).lower()
    numbers = set(_NUMBER.findall(told))
    stems = {stem(w) for w in _WORD.findall(told)}
    for claim in re.split(r"[;\n]|(?<=[.!?])\s+", insight):
        if any(n not in numbers for n in _NUMBER.findall(claim)):
            return False
        words = [w for w in _content_words(claim) if w not in _ABOUT_SOMEONE]
        if words and 2 * sum(stem(w) in stems for w in words) < len(words):
            return False
    return True


_ABOUT_SOMEONE = frozenset("user user's they they're their them someone".split())
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


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
                    occurred_at=ctx.now,
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
                        occurred_at=ctx.now,
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
            scores={"importance": t.importance, "sources": float(len(_cited(t)))},
            summary=f"prune: {' '.join(t.content.split())[:69]}",
        )
        for t in (Trace.from_row(r) for r in rows)
    ]
    drafts = filter_new(ctx.brain, ctx.settings, drafts, now=ctx.now)
    return drafts[: min(ctx.settings.dream_max_proposals, pending_room(ctx.brain, ctx.settings))]


def run(ctx: PassContext) -> StepResult:
    insights = plan(ctx)
    drafts = outdated(ctx)
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
    if ctx.dry_run and ctx.settings.llm_base_url:
        result.notes.append(
            "dry run: the LLM is not asked; each text shown is the offline digest the pass "
            "writes if the LLM fails or claims what its sources do not say"
        )
    if ctx.vectors is None:
        result.notes.append("no insights: no embeddings")
    return result
