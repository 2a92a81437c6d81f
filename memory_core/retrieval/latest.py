"""The latest answer first: a question of how things are now ("where do I live these
days?") is answered by the most recent statement of it.

Supersession (:mod:`memory_core.supersession`) links a later statement to the one it
replaces when both read as the same subject and attribute, and ranking sinks the
replaced one.  Reading a statement's attribute on its own misses often ("Keys
collected! The cottage has a garden" is a move), so at search time the question
itself says what is asked.  Among the best :data:`POOL` memories, those that may
answer are statements (not a question or a request) about the subject asked (not
someone else's), and a learned judgement picks the one of them holding the answer
as the search's time stands.  It reads what search already knows of each
(:data:`FEATURES`): how close what it said is to the question beside the others,
where the ranking put it and by which channels, how likely it states what the
question asks (the language package's readings of both,
:func:`~memory_core.language.reading.attribute_match`), how many close ones were
said after it and whether they state it too, whether it looks back, tells a change
or names something new, how old it is, whether it was superseded.  The judgement is
gradient-boosted trees trained on labelled questions of now over a scripted life and
change chains (``python -m bench.latest --train`` writes ``data/latest.json``), each
feature held to move it one way only where the meaning says so (a closer statement
said later never makes an earlier one likelier), and read on relative scales so that
no embedding model's spread of cosines is assumed.

The one picked goes first -- by the search's time, so ``as_of`` answers as it would
have then -- its score lifted just above the best of the others (the factor
``latest``), so the order is the scores'; nothing joins or leaves the results.

A turn is compared by what the user said in it, embedded alone once when the turn
is embedded (``said_embeddings``), or by the closest of its facts when that is
closer; a turn found through a fact is read whole, since the fact is one of its
sentences and not always the one that answers.  A memory written directly is
compared by its own vector.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, text

from memory_core.embeddings import from_blob
from memory_core.language import first_sentence, sentences
from memory_core.language.persons import persons_named
from memory_core.language.reading import attribute_match
from memory_core.language.telling import changes, looks_back, remarks, specifics
from memory_core.retrieval import dense, ranking
from memory_core.supersession.slots import (
    USER,
    speaker_subject,
    subject_asked,
    subjects_named,
)
from memory_core.supersession.telling import said_by, said_in, tells
from memory_core.traces.model import TURN_TAG, Trace

# How many of the best memories the answer is looked for among: one the ranking put
# further down is left where it is.
POOL = 20
# What the judgement reads of each memory of the pool, in the order of its weights.
FEATURES = (
    "similarity_share",  # its cosine to the question over the closest one's
    "closer",  # how many are closer to the question
    "vector_share",  # the vector channel's score over the best one's
    "score_share",  # the ranking's score over the best one's
    "position",  # its place in the ranking
    "lexical",  # whether the BM25 channel found it
    "newer_close",  # how many close ones (at least half as close) were said after it
    "age",  # log(1 + days) from when it was said to the search's time
    "stated",  # it opens on a statement, not a question or a request
    "about",  # it is about the subject asked of
    "superseded",  # a later statement replaced it by the search's time
    "newer",  # how many of the pool were said after it
    "match",  # the chance that one of its sentences states what is asked
    "match_first",  # ... its first sentence
    "likeliest",  # one of its sentences most likely states the attribute surely asked
    "newer_likeliest",  # how many close ones said after it do
    "newer_match",  # how many close ones said after it match at least half as well
    "looks_back",  # it tells how things were ("found my old map from the Sheffield days")
    "change",  # it is told as a change ("moved", "now", "no longer")
    "remark",  # it opens on a remark ("funny how quiet Sundays are")
    "news",  # how many names and numbers it says that no close one before it said
)
# A memory this share as close to the question as the closest one is close.
CLOSE = 0.5
FACTOR = "latest"
# How far above the best of the others the latest answer's score is lifted.
LIFT = 1.001
WEIGHTS = Path(__file__).resolve().parent / "data" / "latest.json"


@dataclass(frozen=True)
class _Statement:
    """What a memory says, as far as answering a question goes."""

    said: str  # what the user said (a turn's user part; a memory's content)
    speaker: str | None
    similarity: float  # cosine to the question
    stated: bool  # it states something (not only asks or requests)


@dataclass(frozen=True)
class Pool:
    """The memories a question of now is answered among, best ranked first, each
    with what the judgement reads of it (a row of :data:`FEATURES`)."""

    memories: list[str]
    rows: npt.NDArray[np.float64]
    when: npt.NDArray[np.float64]  # when each was said


@dataclass(frozen=True)
class Tree:
    """One regression tree of the judgement, as arrays of its nodes (a leaf's feature is
    negative): a row goes left where its feature is at most the node's threshold, and
    takes the value of the leaf it reaches."""

    feature: npt.NDArray[np.int64]
    threshold: npt.NDArray[np.float64]
    left: npt.NDArray[np.int64]
    right: npt.NDArray[np.int64]
    value: npt.NDArray[np.float64]

    def to_json(self) -> dict[str, list[Any]]:
        return {
            "feature": self.feature.tolist(),
            "threshold": self.threshold.tolist(),
            "left": self.left.tolist(),
            "right": self.right.tolist(),
            "value": self.value.tolist(),
        }

    @classmethod
    def from_json(cls, saved: dict[str, list[Any]]) -> Tree:
        return cls(
            np.asarray(saved["feature"], dtype=np.int64),
            np.asarray(saved["threshold"], dtype=np.float64),
            np.asarray(saved["left"], dtype=np.int64),
            np.asarray(saved["right"], dtype=np.int64),
            np.asarray(saved["value"], dtype=np.float64),
        )


@dataclass(frozen=True)
class Chooser:
    """The learned judgement: gradient-boosted trees, their sum the log-odds that a
    memory holds the answer."""

    trees: tuple[Tree, ...]
    prior: float  # the log-odds before any tree

    def scores(self, rows: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Each row's log-odds of holding the answer: every tree walked at once."""
        feature, threshold, left, right, value = self._nodes
        tree = np.arange(len(self.trees))[:, None]
        row = np.arange(len(rows))[None, :]
        node = np.zeros((len(self.trees), len(rows)), dtype=np.int64)
        while (inner := feature[tree, node] >= 0).any():
            read = rows[row, np.where(inner, feature[tree, node], 0)]
            step = np.where(read <= threshold[tree, node], left[tree, node], right[tree, node])
            node = np.where(inner, step, node)
        return np.asarray(self.prior + value[tree, node].sum(axis=0))

    @cached_property
    def _nodes(self) -> tuple[npt.NDArray[Any], ...]:
        """The trees' node arrays stacked, each tree's padded with leaves."""
        size = max(len(t.feature) for t in self.trees)

        def stacked(part: str, pad: float) -> npt.NDArray[Any]:
            arrays = [getattr(t, part) for t in self.trees]
            return np.stack([np.pad(a, (0, size - len(a)), constant_values=pad) for a in arrays])

        return (
            stacked("feature", -1),
            stacked("threshold", 0.0),
            stacked("left", 0),
            stacked("right", 0),
            stacked("value", 0.0),
        )

    def pick(self, rows: npt.NDArray[np.float64]) -> int | None:
        """Of the rows, the one likeliest to hold the answer among those that may: a
        statement (not a question or a request) about the subject asked (not someone
        else's) -- None when none may."""
        may = (rows[:, FEATURES.index("stated")] > 0) & (rows[:, FEATURES.index("about")] > 0)
        if not may.any():
            return None
        return int(np.argmax(np.where(may, self.scores(rows), -np.inf)))

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(FEATURES),
            "prior": self.prior,
            "trees": [t.to_json() for t in self.trees],
        }


@lru_cache(maxsize=1)
def chooser() -> Chooser | None:
    """The shipped judgement; None when there is none, or it reads other features."""
    if not WEIGHTS.exists():
        return None
    saved = json.loads(WEIGHTS.read_text())
    if tuple(saved["features"]) != FEATURES:
        return None
    trees = tuple(Tree.from_json(t) for t in saved["trees"])
    return Chooser(trees, float(saved["prior"]))


def first(
    conn: Connection,
    ranked: Sequence[ranking.Candidate],
    full: dict[int, Trace],
    scores: dense.VectorScores,
    question: str,
    *,
    model: str,
    memory_of: dict[int, str],
    now: float,
) -> list[ranking.Candidate]:
    """``ranked`` with the memory holding the latest answer to ``question`` (a question
    of now, asked at ``now``) moved ahead of the others among the first :data:`POOL`
    memories.

    ``full``: the traces of ``ranked`` by seq; ``scores``: the vector channel's, of
    the question embedded by ``model``; ``memory_of``: each trace's memory.
    """
    pool = pool_of(conn, ranked, full, scores, question, model=model, memory_of=memory_of, now=now)
    judge = chooser()
    if pool is None or judge is None:
        return list(ranked)
    picked = judge.pick(pool.rows)
    if picked is None or picked == 0:
        return list(ranked)
    latest = pool.memories[picked]
    ahead = [c for c in ranked if memory_of[c.facts.seq] == latest]
    rest = [c for c in ranked if memory_of[c.facts.seq] != latest]
    # Its score says it: lifted just above the best of the others, the factor shown.
    top = max(c.score for c in rest)
    for c in ahead:
        if c.score > 0 and c.score <= top:
            c.factors[FACTOR] = top * LIFT / c.score
    return ahead + rest


def pool_of(
    conn: Connection,
    ranked: Sequence[ranking.Candidate],
    full: dict[int, Trace],
    scores: dense.VectorScores,
    question: str,
    *,
    model: str,
    memory_of: dict[int, str],
    now: float,
) -> Pool | None:
    """The first :data:`POOL` memories of ``ranked`` and what the judgement reads of
    each; None when there are fewer than two."""
    order: list[str] = []
    found: dict[str, list[ranking.Candidate]] = {}
    for c in ranked:
        memory = memory_of[c.facts.seq]
        if memory not in found:
            if len(order) == POOL:
                continue
            order.append(memory)
        found.setdefault(memory, []).append(c)
    if len(order) < 2:
        return None
    statements = _statements(conn, ranked, full, memory_of, order, scores, model)
    asked = subject_asked(question)
    persons = set().union(*(persons_named(st.said) for st in statements.values()))
    said = [statements[m].said if m in statements else "" for m in order]
    match, match_first, likeliest = _matches(question, said)
    similarity = np.array([statements[m].similarity if m in statements else 0.0 for m in order])
    vector = np.array([max(c.vector_score or 0.0 for c in found[m]) for m in order])
    score = np.array([max(c.score for c in found[m]) for m in order])
    when = np.array([min(c.facts.occurred_at for c in found[m]) for m in order])
    close = similarity >= CLOSE * similarity.max()
    matching = match >= CLOSE * match.max()
    named = [specifics(words) for words in said]

    def before_close(k: int) -> list[int]:
        return [j for j in range(len(order)) if close[j] and when[j] < when[k]]

    rows = []
    for k, memory in enumerate(order):
        st = statements.get(memory)
        newer = when > when[k]
        rows.append(
            [
                _share(similarity[k], similarity),
                float((similarity > similarity[k]).sum()),
                _share(vector[k], vector),
                _share(score[k], score),
                float(k),
                float(any(c.bm25_rank is not None for c in found[memory])),
                float((newer & close).sum()),
                math.log1p(max(now - when[k], 0.0) / 86_400.0),
                float(st is not None and st.stated),
                float(st is not None and _about(st, asked, persons)),
                float(any(ranking.SUPERSEDED in c.factors for c in found[memory])),
                float(newer.sum()),
                match[k],
                match_first[k],
                float(likeliest[k]),
                float((newer & close & likeliest).sum()),
                float((newer & close & matching).sum()),
                float(looks_back(said[k])),
                float(changes(said[k])),
                float(remarks(first_sentence(said[k]))),
                float(len(named[k].difference(*(named[j] for j in before_close(k))))),
            ]
        )
    return Pool(order, np.asarray(rows, dtype=np.float64), when)


def _share(value: float, values: npt.NDArray[np.float64]) -> float:
    best = float(values.max())
    return float(value / best) if best > 0 else 0.0


def _matches(
    question: str, said: Sequence[str]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Of each text: the best chance that one of its sentences states what ``question``
    asks, that chance for its first sentence, and whether one of them most likely
    states the attribute the question surely asks (all nothing without the models)."""
    pieces = [(k, piece) for k, words in enumerate(said) for piece in sentences(words)]
    n = len(said)
    match, match_first, likeliest = np.zeros(n), np.zeros(n), np.zeros(n, dtype=bool)
    read = attribute_match(question, [piece for _, piece in pieces])
    if read is None:
        return match, match_first, likeliest
    seen: set[int] = set()
    for (k, _), (p, top) in zip(pieces, read, strict=True):
        match[k] = max(match[k], p)
        likeliest[k] |= top
        if k not in seen:
            match_first[k] = p
            seen.add(k)
    return match, match_first, likeliest


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
    return _Statement(said, speaker, float(vector @ scores.query), stated)


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
