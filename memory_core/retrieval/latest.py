"""The latest answer first: a question of how things are now ("where do I live these
days?") is answered by the most recent statement of it.

Supersession (:mod:`memory_core.supersession`) links a later statement to the one it
replaces when both read as the same subject and attribute, and ranking sinks the
replaced one.  Reading a statement's attribute on its own misses often ("Keys
collected! The cottage has a garden" is a move), so at search time the question
itself says what is asked.  Among the best few memories, its answers are the
statements about the subject it asks of (not someone else's), close enough to it
in meaning (or to another answer), that open on a statement rather than a
question, a request or a remark ("funny how quiet Sundays are").  Walked oldest
first, each answer replaces the one holding unless it looks back ("found my old
map from the Sheffield days") or speaks of a value the one holding replaced ("it
still says Pixel on the certificate" after the kitten was renamed), or the one
holding was told as a change and the later one tells nothing new (a remark on
it); a plan gives way only to a change of it.  The one holding last goes first --
by the search's time, so ``as_of`` answers as it would have then -- even when it
is the only answer among those few: the memories ranked above it are then about
someone else, or ask rather than tell.

Of a question of one attribute ("what is my job"), a statement answers when the
statements model reads it as stating that attribute (surely, or possibly), it is
close to the question (at least half as close as the closest such statement: the
model's reading of a whole turn can rest on a sentence the question is not about),
or it restates one that does: a newer statement of something else is never put
first.  The latest answer's score is lifted just above
the best of the others (the factor ``latest``), so the order is the scores';
nothing joins or leaves the results.

A turn is compared by what the user said in it, embedded alone once when the turn
is embedded (``said_embeddings``), or by the closest of its facts when that is
closer; a turn found through a fact is read whole, since the fact is one of its
sentences and not always the one that answers.  A memory written directly is
compared by its own vector.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, text

from memory_core.embeddings import from_blob
from memory_core.language import first_sentence, sentences
from memory_core.language.persons import persons_named
from memory_core.language.questions import attribute_asked
from memory_core.language.reading import LIKELIEST, rank_of
from memory_core.language.telling import changes, looks_back
from memory_core.retrieval import dense, ranking
from memory_core.supersession.slots import (
    USER,
    speaker_subject,
    subject_asked,
    subjects_named,
)
from memory_core.supersession.telling import (
    moves_plan,
    names_replaced,
    said_by,
    said_in,
    tells,
    tells_news,
)
from memory_core.traces.model import TURN_TAG, Trace

# How many of the best memories are reordered: an answer the ranking put further
# down is left where it is.
DEPTH = 6
# How close (cosine) a statement must be to the question to answer it: at least
# this, and this share of the closest statement about the subject asked -- or
# this close to a statement that is (a restatement of the same thing in other
# words).
MIN_SIMILARITY = 0.1
RELATIVE_SIMILARITY = 0.5
SAME_THING = 0.45
FACTOR = "latest"
# How far above the best of the others the latest answer's score is lifted.
LIFT = 1.001


@dataclass(frozen=True)
class _Statement:
    """What a memory says, as far as answering a question goes."""

    said: str  # what the user said (a turn's user part; a memory's content)
    speaker: str | None
    vector: npt.NDArray[np.float32]  # of what was said
    similarity: float  # cosine to the question
    stated: bool  # it states something (not only asks or requests)


def first(
    conn: Connection,
    ranked: Sequence[ranking.Candidate],
    full: dict[int, Trace],
    scores: dense.VectorScores,
    question: str,
    *,
    model: str,
    memory_of: dict[int, str],
) -> list[ranking.Candidate]:
    """``ranked`` with the memory holding the latest answer to ``question`` (a question
    of now) moved ahead of the others among the first :data:`DEPTH` memories.

    ``full``: the traces of ``ranked`` by seq; ``scores``: the vector channel's, of
    the question embedded by ``model``; ``memory_of``: each trace's memory.
    """
    order: list[str] = []
    for c in ranked:
        memory = memory_of[c.facts.seq]
        if memory not in order:
            order.append(memory)
            if len(order) == DEPTH:
                break
    if len(order) < 2:
        return list(ranked)
    statements = _statements(conn, ranked, full, memory_of, order, scores, model)
    asked = subject_asked(question)
    persons = set().union(*(persons_named(st.said) for st in statements.values()))
    about = {m: st for m, st in statements.items() if st.stated and _about(st, asked, persons)}
    # Of a question of one attribute ("what is my job"), the answers are the statements
    # the statements model surely reads as stating it (its likeliest attribute, however
    # few words they share with the question: "I quit nursing, now I teach") and those
    # that restate one of them ("Tom switched to the Amazon warehouse" after "Tom works
    # nights at the Tesco depot"); a newer statement about something else ("I've joined
    # a choir") is never put first.  Only when none surely states it do the statements
    # that possibly do (among its likeliest few) answer.  Either way an answer is close
    # to the question: a turn read as surely stating it on the strength of another of
    # its sentences ("I have seen them live nine times" read as a home) answers nothing.
    attribute = attribute_asked(question)
    candidates = set(about)
    if attribute is not None:
        states = _states(about, attribute)
        candidates = {m for m, certain in states.items() if certain} or set(states)
    best = max((about[m].similarity for m in candidates), default=0.0)
    floor = max(MIN_SIMILARITY, RELATIVE_SIMILARITY * best)
    close = [m for m in candidates if about[m].similarity >= floor]
    # A statement written as the successor of an answer (supersession judged them one
    # slot when it was written) answers too.
    successors = _successors(ranked, full, memory_of)
    answering = [
        m
        for m in order
        if m in about
        and (
            m in close
            or any(m != n and _restates(about[m], about[n]) for n in close)
            or any(m in successors.get(n, ()) for n in close)
        )
    ]
    if not answering:
        return list(ranked)
    when = {memory_of[c.facts.seq]: c.facts.occurred_at for c in ranked}
    answering.sort(key=lambda m: when[m])
    # A plan is told of again before and after it happens ("we went camping last
    # weekend"): only a change of it ("postponed to June", "kicks off on 8 January")
    # replaces the plan as it stands, and with none the ranking's order is kept.
    latest = _latest(answering, about, plan=attribute == "plan")
    # One superseded by the search's time was replaced by a later statement: it is not
    # the one holding, whatever the reading of either.
    replaced = {memory_of[c.facts.seq] for c in ranked if ranking.SUPERSEDED in c.factors}
    if latest is None or latest == order[0] or latest in replaced:
        return list(ranked)
    ahead = [c for c in ranked if memory_of[c.facts.seq] == latest]
    rest = [c for c in ranked if memory_of[c.facts.seq] != latest]
    # Its score says it: lifted just above the best of the others, the factor shown.
    top = max(c.score for c in rest)
    for c in ahead:
        if c.score > 0 and c.score <= top:
            c.factors[FACTOR] = top * LIFT / c.score
    return ahead + rest


def _successors(
    ranked: Sequence[ranking.Candidate], full: dict[int, Trace], memory_of: dict[int, str]
) -> dict[str, set[str]]:
    """Of each memory among ``ranked``, the memories among them that superseded it."""
    memory_by_id = {full[c.facts.seq].id: memory_of[c.facts.seq] for c in ranked}
    out: dict[str, set[str]] = {}
    for c in ranked:
        later = full[c.facts.seq].superseded_by
        if later is not None and later in memory_by_id:
            out.setdefault(memory_of[c.facts.seq], set()).add(memory_by_id[later])
    return out


def _restates(statement: _Statement, other: _Statement) -> bool:
    """Whether a statement is close enough in meaning to another to say it again."""
    return float(statement.vector @ other.vector) >= SAME_THING


def _states(about: dict[str, _Statement], attribute: str) -> dict[str, bool]:
    """Of ``about``, the memories one of whose sentences may state ``attribute`` (among
    the statements model's likeliest few), each with whether one surely does (its
    likeliest)."""
    pieces = [(m, sentence) for m, st in about.items() for sentence in sentences(st.said)]
    ranks = rank_of([sentence for _, sentence in pieces], attribute)
    if ranks is None:  # no model: every one may, none surely
        return dict.fromkeys((m for m, _ in pieces), False)
    out: dict[str, bool] = {}
    for (m, _), rank in zip(pieces, ranks, strict=True):
        if rank < LIKELIEST:
            out[m] = out.get(m, False) or rank == 0
    return out


def _latest(
    answering: Sequence[str], said: dict[str, _Statement], *, plan: bool = False
) -> str | None:
    """Of the answers, oldest first, the one holding last: each later one replaces the
    one holding unless it looks back ("found my old map from the Sheffield days") or
    names a value the one holding replaced (:func:`names_replaced`).
    A value told as a change ("my GP switched me to bupropion") holds until a later
    answer tells news -- a change, or something none of the answers before it named:
    a later remark on it ("getting the meds right has been half the battle") leaves
    it holding.  A value told plainly gives way to any later answer, which need not
    name anything new to change it ("Kofi went out on his own").  Of a ``plan``, only
    an answer that changes it (:func:`moves_plan`) replaces the one holding, and None
    when none does: no answer is surely the plan as it stands."""
    holding = 0
    replaced = False
    for k, memory in enumerate(answering[1:], start=1):
        words = said[memory].said
        earlier = [said[m].said for m in answering[:k]]
        before = earlier[:holding]
        if (
            looks_back(words)
            or names_replaced(words, earlier[holding], before)
            or (plan and not moves_plan(words, earlier))
        ):
            continue
        if not changes(earlier[holding]) or tells_news(words, earlier):
            holding, replaced = k, True
    return None if plan and not replaced else answering[holding]


def _about(s: _Statement, asked: str, persons: set[str]) -> bool:
    """Whether a statement is about ``asked`` (a subject): said of themselves by the
    one asked of, or naming them.  A capitalised opening word is taken for someone
    only when it names one of ``persons`` ("Greg's back training" after "my husband
    Greg"), not on a guess ("Winter's dragged me down" is about the speaker)."""
    subject = subjects_named(first_sentence(s.said), persons, s.speaker, guess_names=False)
    if asked == USER:  # the asker's own state: a statement about themselves
        return subject == speaker_subject(s.speaker)
    # Named, or not read as anyone's in particular and naming them ("Survived the
    # week; Kofi's van finally passed"): not someone else's ("Rachel's pal Morag").
    return subject == asked or (subject == speaker_subject(s.speaker) and asked in s.said.lower())


def _statements(
    conn: Connection,
    ranked: Sequence[ranking.Candidate],
    full: dict[int, Trace],
    memory_of: dict[int, str],
    memories: Sequence[str],
    scores: dense.VectorScores,
    model: str,
) -> dict[str, _Statement]:
    """What each of ``memories`` states, compared with the question."""
    wanted = set(memories)
    out: dict[str, _Statement] = {}
    turns: dict[str, Trace] = {}
    episodes: dict[str, str] = {}  # of a turn ranked by its facts alone: its episode's id
    told: dict[str, float] = {}  # of a turn, its facts' best similarity to the question
    for c in ranked:
        memory = memory_of[c.facts.seq]
        trace = full[c.facts.seq]
        if memory not in wanted or memory in out:
            continue
        if TURN_TAG in trace.tags:
            turns[memory] = trace
        elif memory.startswith("turn:"):
            if trace.cited:  # a fact: the episode it was drawn from
                episodes.setdefault(memory, trace.cited[0])
            if (vector := _row(scores, trace.seq)) is not None:
                told[memory] = max(told.get(memory, -1.0), float(vector @ scores.query))
        elif (vector := _row(scores, trace.seq)) is not None:
            said = said_by(said_in(trace.content), _speaker(trace)).strip()
            out[memory] = _statement(said, _speaker(trace), vector, scores, tells(said))
    # A turn found through a fact it told is read as the turn: the fact is one of its
    # sentences, not always the one that answers.
    unread = {m: e for m, e in episodes.items() if m not in turns}
    turns.update(_episodes(conn, unread))
    if not turns:
        return out
    vectors = _said_vectors(conn, turns.values(), model)
    for memory, turn in turns.items():
        vector = vectors.get(turn.id)
        if vector is None and (vector := _row(scores, turn.seq)) is None:
            continue
        said = said_in(turn.content).strip()
        # A turn states something when it opens on a statement (not a question or a
        # request).  It is as close to the question as the closest of what it said:
        # all of it, or one of its facts ("I'm a driving examiner from June" in a turn
        # that goes on to ask for advice).
        statement = _statement(said, _speaker(turn), vector, scores, tells(said))
        if told.get(memory, -1.0) > statement.similarity:
            statement = replace(statement, similarity=told[memory])
        out[memory] = statement
    return out


def _statement(
    said: str,
    speaker: str | None,
    vector: npt.NDArray[np.float32],
    scores: dense.VectorScores,
    stated: bool,
) -> _Statement:
    return _Statement(said, speaker, vector, float(vector @ scores.query), stated)


def _row(scores: dense.VectorScores, seq: int) -> npt.NDArray[np.float32] | None:
    """A trace's vector in the index the question was compared with."""
    return scores.vector(seq)


def _episodes(conn: Connection, wanted: dict[str, str]) -> dict[str, Trace]:
    """Of ``wanted`` (memory -> episode id), the episodes still active, by memory."""
    if not wanted:
        return {}
    ids = list(wanted.values())
    marks = ", ".join(f":e{i}" for i in range(len(ids)))
    rows = conn.execute(
        text(f"SELECT * FROM memory_traces WHERE deleted_at IS NULL AND id IN ({marks})"),
        {f"e{i}": e for i, e in enumerate(ids)},
    )
    found = {t.id: t for t in (Trace.from_mapping(r._mapping) for r in rows)}
    return {m: found[e] for m, e in wanted.items() if e in found}


def _speaker(trace: Trace) -> str | None:
    speaker = trace.metadata.get("speaker")
    return speaker if isinstance(speaker, str) else None


def _said_vectors(
    conn: Connection, turns: Iterable[Trace], model: str
) -> dict[str, npt.NDArray[np.float32]]:
    """The vector of what the user said in each turn, where the words were embedded
    alone (by ``model``, the one that embedded the question)."""
    hashes = {t.id: t.content_hash for t in turns}
    marks = ", ".join(f":t{i}" for i in range(len(hashes)))
    rows = conn.execute(
        text(
            "SELECT trace_id, content_hash, vector FROM said_embeddings "
            f"WHERE model = :model AND trace_id IN ({marks})"
        ),
        {"model": model, **{f"t{i}": t for i, t in enumerate(hashes)}},
    )
    return {
        r.trace_id: from_blob(r.vector) for r in rows if hashes.get(r.trace_id) == r.content_hash
    }
