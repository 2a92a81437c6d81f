"""What a sentence someone said is, and what a question asks: the learned readings.

:func:`read_statements` judges sentences as a person reading a chat would: whom each
is about (the speaker, someone else, no one), which attribute of a person it states
(identity, work, home, relationship, family, pet, health, medication, habit, likes,
plan, vehicle, education, a one-off event, or none), whether it is worth keeping
for months, whether it is small talk, and whether the speaker asked for it to be
kept.  :func:`read_questions` judges questions asked of memory: the attribute asked
about, and whether it asks how things are now.

Both are the shipped models of :mod:`memory_core.language.textmodel`, trained on
labelled examples (``python -m bench.language --train``); without a shipped model a
reading says nothing (None), and callers keep to what they did before.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from memory_core.language import textmodel
from memory_core.language.sentences import sentences

SPEAKER, OTHER, NONE = "speaker", "other", "none"
ATTRIBUTES = (
    "identity",
    "work",
    "education",
    "residence",
    "relationship",
    "family",
    "pet",
    "health",
    "medication",
    "habit",
    "likes",
    "plan",
    "vehicle",
    "event",
    NONE,
)


# The odds of small talk from which a sentence is taken for it: chosen on the dev half
# for precision (0.985 there, recall 0.85), since what is taken for small talk decays
# first.
SMALL_TALK = 0.8


@dataclass(frozen=True)
class Statement:
    """A sentence as read: the most likely answer of each judgement, with its odds."""

    about: str  # speaker | other | none
    attribute: str  # one of ATTRIBUTES
    attribute_p: float
    durable: float  # the probability that it is worth keeping for months
    smalltalk: float  # the probability that it says nothing but being sociable
    keep: float  # the probability that the speaker asked for it to be kept

    @property
    def says_something(self) -> bool:
        """Whether it states anything of a person at all."""
        return NONE not in (self.about, self.attribute) and self.smalltalk < SMALL_TALK

    @property
    def is_smalltalk(self) -> bool:
        """Whether it surely says nothing but being sociable (precision before recall:
        a statement taken for small talk decays first)."""
        return self.smalltalk >= SMALL_TALK


@dataclass(frozen=True)
class Question:
    """A question as read: the attribute it asks about, and whether of now."""

    attribute: str
    attribute_p: float
    now: float  # the probability that it asks how things are at present


def _yes(judged: dict[str, tuple[str, float]], head: str) -> float:
    label, p = judged[head]
    return p if label == "true" else 1.0 - p


def read_statements(texts: Sequence[str]) -> list[Statement] | None:
    """Each sentence's reading; None when no statements model is shipped."""
    model = textmodel.shipped("statements")
    if model is None:
        return None
    return [
        Statement(
            about=j["about"][0],
            attribute=j["attribute"][0],
            attribute_p=j["attribute"][1],
            durable=_yes(j, "durable"),
            smalltalk=_yes(j, "smalltalk"),
            keep=_yes(j, "keep"),
        )
        for j in model.judge(texts)
    ]


def read_questions(texts: Sequence[str]) -> list[Question] | None:
    """Each question's reading; None when no questions model is shipped."""
    model = textmodel.shipped("questions")
    if model is None:
        return None
    return [
        Question(attribute=j["attribute"][0], attribute_p=j["attribute"][1], now=_yes(j, "now"))
        for j in model.judge(texts)
    ]


# How sure the reading must be that a question asks of an attribute (at 0.4, 0.89 of
# the development questions' attributes named are right).
QUESTION_ATTRIBUTE = 0.4


# A statement may state only an attribute among the statements model's likeliest few
# for it: a reading of the attribute by other means (the nearest of a few examples,
# a word cue) outside them is not taken.
LIKELIEST = 3


def may_state(texts: Sequence[str], attribute: str) -> list[bool]:
    """Whether each text may state ``attribute``: it is among the statements model's
    likeliest attributes for it (all may when no model is shipped or it knows no such
    attribute)."""
    ranks = rank_of(texts, attribute)
    return [True for _ in texts] if ranks is None else [r < LIKELIEST for r in ranks]


def rank_of(texts: Sequence[str], attribute: str) -> list[int] | None:
    """Where ``attribute`` stands among the statements model's readings of each text (0:
    its likeliest), the model read once; None when no model is shipped or it knows no
    such attribute."""
    model = textmodel.shipped("statements")
    known = model.heads["attribute"].classes if model is not None else ()
    if model is None or attribute not in known:
        return None
    if not texts:
        return []
    odds = model.probabilities("attribute", texts)
    at = known.index(attribute)
    return [int((row > row[at]).sum()) for row in odds]


def attribute_match(question: str, texts: Sequence[str]) -> list[tuple[float, bool]] | None:
    """How likely each text states what ``question`` asks: the chance that the two
    readings name the same attribute (the questions model's odds of each attribute
    asked times the statements model's of each stated, summed), and whether that
    attribute, where the question surely asks one (:func:`questions.attribute_asked`
    would name it), is the text's likeliest.  None when either model is missing."""
    statements, questions = textmodel.shipped("statements"), textmodel.shipped("questions")
    if statements is None or questions is None:
        return None
    asked_classes = questions.heads["attribute"].classes
    (asked,) = questions.probabilities("attribute", [question])
    known = statements.heads["attribute"].classes
    top = int(np.argmax(asked))
    sure = asked_classes[top] != NONE and asked[top] >= QUESTION_ATTRIBUTE
    surely = known.index(asked_classes[top]) if sure and asked_classes[top] in known else None
    weights = np.array(
        [asked[asked_classes.index(a)] if a in asked_classes and a != NONE else 0.0 for a in known]
    )
    out = []
    for text in texts:
        odds = _attribute_odds(text)
        out.append((float(odds @ weights), surely is not None and int(np.argmax(odds)) == surely))
    return out


@lru_cache(maxsize=65_536)
def _attribute_odds(text: str) -> npt.NDArray[np.float64]:
    """The statements model's odds of each attribute for a text, read once per process
    (a question of now reads the same memories' sentences again and again)."""
    model = textmodel.shipped("statements")
    assert model is not None
    (row,) = model.probabilities("attribute", [text])
    return np.asarray(row)


def attributes_allowed(texts: Sequence[str], attributes: Collection[str]) -> list[set[str]]:
    """Of ``attributes``, those each text may state (see :func:`may_state`), the model
    read once per text."""
    model = textmodel.shipped("statements")
    known = model.heads["attribute"].classes if model is not None else ()
    if model is None or not texts:
        return [set(attributes) for _ in texts]
    odds = model.probabilities("attribute", texts)
    return [
        {a for a in attributes if a not in known or (row > row[known.index(a)]).sum() < LIKELIEST}
        for row in odds
    ]


def states_only(text: str, attribute: str) -> bool:
    """Whether every sentence of ``text`` that states something may state ``attribute``
    (:func:`may_state`): "Hi! I'm Kim. I work as a nurse." states more than work --
    who she is -- and a change of job replaces no part of it but the job.  True when
    no model is shipped."""
    parts = sentences(text)
    read = read_statements(parts)
    if read is None:
        return True
    allowed = may_state(parts, attribute)
    return all(ok for r, ok in zip(read, allowed, strict=True) if r.says_something)


# Small talk is short: a text of more words than this says something else too.
SMALL_TALK_WORDS = 25


def only_small_talk(texts: Sequence[str]) -> list[bool]:
    """Whether each text is small talk and nothing more, read whole: short, and surely
    sociable ("Thanks so much, have a great evening!").  All False when no model is
    shipped."""
    sociable = surely_sociable(texts)
    if sociable is None:
        return [False for _ in texts]
    return [len(t.split()) <= SMALL_TALK_WORDS and s for t, s in zip(texts, sociable, strict=True)]


def surely_sociable(texts: Sequence[str]) -> list[bool] | None:
    """Whether the statements model surely reads each text as small talk
    (:attr:`Statement.is_smalltalk`); None when no model is shipped.  A text is read
    once per process: search, forgetting and the phatic judgement ask of the same
    memories and sentences again and again."""
    if textmodel.shipped("statements") is None:
        return None
    return [_sociable(t) for t in texts]


@lru_cache(maxsize=65_536)
def _sociable(text: str) -> bool:
    read = read_statements([text])
    return read is not None and read[0].is_smalltalk


def may_be_one(texts: Sequence[str]) -> bool:
    """Whether two texts may state the same attribute: not when the statements model
    reads each surely (:data:`SURELY`) as an attribute outside the other's likeliest
    few (they may when no model is shipped)."""
    first, second = (_attribute_reading(t) for t in texts)
    if first is None or second is None:
        return True
    (top_a, p_a, likeliest_a), (top_b, p_b, likeliest_b) = first, second
    return min(p_a, p_b) < SURELY or top_a in likeliest_b or top_b in likeliest_a


@lru_cache(maxsize=65_536)
def _attribute_reading(text: str) -> tuple[str, float, frozenset[str]] | None:
    """A text's likeliest attribute, its probability and its likeliest few, read once
    (a pass puts the same memory to the verifier in many pairs); None without a model."""
    model = textmodel.shipped("statements")
    if model is None:
        return None
    known = model.heads["attribute"].classes
    (row,) = model.probabilities("attribute", [text])
    best = int(np.argmax(row))
    return known[best], float(row[best]), frozenset(known[k] for k in np.argsort(-row)[:LIKELIEST])


# How sure the reading of an attribute must be to tell two statements apart by it.
SURELY = 0.5
