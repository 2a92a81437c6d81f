"""A digest: what statements say of whom they are about, as dated claims.

Derive (:mod:`.derive`) builds an insight from a cluster of statements; this
module says which sentence of a memory tells something (:func:`told`), how the
chosen statements read as claims in the third person with their dates
(:func:`offline_digest`), and whether an insight someone else wrote (an LLM) claims only
what its sources say (:func:`traceable`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime

from memory_core.consolidation.salience import is_smalltalk, sentences
from memory_core.language.days import written_day
from memory_core.language.lexicon import FIRST_PERSON, STOPWORDS
from memory_core.language.phrases import (
    ABOUT_SOMEONE,
    NOT_TOLD,
    OPENER,
    TO_LISTENER,
    third_person,
)
from memory_core.supersession.slots import USER
from memory_core.supersession.telling import STAMP
from memory_core.textutil import stem
from memory_core.traces.model import Trace

MAX_INSIGHT_CHARS = 900
MAX_CLAIMS = 8  # the most important statements of a cluster make its digest


@dataclass(frozen=True)
class Statement:
    trace: Trace
    said: str  # its first sentence that tells something, without a speaker's label
    subject: str  # whom it is about: a person's name, or "user"


def told(content: str, listeners: Collection[str] = ()) -> str:
    """What a memory tells, in its first sentence that tells something: not small talk,
    not a question, not said to the listener ("You're killing it!", "I love the
    thought Nate" when Nate is one of ``listeners``, those who speak in its scope),
    not urging or wishing ("Let's ..."), not a shared photo's caption; empty when no
    sentence does.  Speakers' labels are left out."""
    for said in sentences(content):
        sentence = OPENER.sub("", _LABELS.sub("", said)).strip()
        if sentence.startswith("a photo of") or sentence.endswith("?") or NOT_TOLD.match(sentence):
            continue
        if TO_LISTENER.search(sentence) or is_smalltalk(sentence):
            continue
        last = STAMP.sub("", sentence).rstrip(" .!").rsplit(" ", 1)[-1]
        if last in listeners:
            continue
        if len(sentence.split()) < _MIN_WORDS:  # "it was amazing", "agree, Mel"
            continue
        return sentence[:1].upper() + sentence[1:]
    return ""


_LABELS = re.compile(r"^(?:[A-Z][\w.'-]*(?: [A-Z][\w.'-]*)?: )+")
_MIN_WORDS = 4


def specific(said: str) -> bool:
    """Whether a statement names something: a number, a date, a name."""
    return bool(_SPECIFIC.search(said))


# A digit, or a capitalised word not opening the sentence (nor "I").
_SPECIFIC = re.compile(r"\d|(?<=[\w,;:] )(?!I\b|I')[A-Z][\w'-]+")


def chosen(members: list[Statement]) -> list[Statement]:
    """The statements the digest tells, in the order they happened: the most important
    (the newer on a tie), one of each wording."""
    ranked = sorted(members, key=lambda m: (-m.trace.importance, -m.trace.occurred_at))
    seen: set[str] = set()
    chosen: list[Statement] = []
    for m in ranked:
        key = " ".join(_ANY_WORD.findall(m.said.lower()))  # a number differing is news
        if key in seen:
            continue
        seen.add(key)
        chosen.append(m)
        if len(chosen) == MAX_CLAIMS:
            break
    return sorted(chosen, key=lambda m: (m.trace.occurred_at, m.trace.id))


def offline_digest(members: list[Statement], told: list[Statement]) -> str:
    """The insight written offline: whom the ``members`` are about, then each of the
    statements ``told`` (:func:`chosen` of them) as a claim with its date, as many as
    fit."""
    heading = _heading(members)
    claims = [_claim(m) for m in told]
    while len(claims) > 1 and len(f"{heading} — {'; '.join(claims)}.") > MAX_INSIGHT_CHARS:
        claims.pop()
    return f"{heading} — {'; '.join(claims)}."[:MAX_INSIGHT_CHARS]


def _heading(members: list[Statement]) -> str:
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
    return [w for w in _WORD.findall(said.lower()) if w not in STOPWORDS and w not in FIRST_PERSON]


def _claim(m: Statement) -> str:
    """A statement as a claim in the third person, with the day it was told when it
    names no year of its own."""
    claim = third_person(m.said).rstrip(" .!")
    if not _YEAR.search(claim):
        claim = f"{claim} ({day(m)})"
    return claim


_YEAR = re.compile(r"\b(?:1[89]|20)\d{2}\b")


def day(m: Statement) -> str:
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
        words = [w for w in _content_words(claim) if w not in ABOUT_SOMEONE]
        if words and 2 * sum(stem(w) in stems for w in words) < len(words):
            return False
    return True


_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
