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
from memory_core.language.tense import IRREGULAR_PAST
from memory_core.supersession.slots import USER
from memory_core.supersession.telling import STAMP
from memory_core.textutil import STOPWORDS, stem
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
        sentence = _OPENER.sub("", _LABELS.sub("", said)).strip()
        if sentence.startswith("a photo of") or sentence.endswith("?") or _NOT_TOLD.match(sentence):
            continue
        if _TO_LISTENER.search(sentence) or is_smalltalk(sentence):
            continue
        last = STAMP.sub("", sentence).rstrip(" .!").rsplit(" ", 1)[-1]
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
# Urging, wishing or cheering rather than telling: "Let's live it up", "Don't miss a
# beat", "Can't wait for the opening", "Congrats on finishing it up".
_NOT_TOLD = re.compile(
    r"(?i)^(?:let's|let us|don't|do not|can't wait|cannot wait|keep it up|congrats"
    r"|congratulations|well done|good luck|sending (?:\w+ )*(?:vibes|love|hugs))\b"
)


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
    return [w for w in _WORD.findall(said.lower()) if w not in STOPWORDS and w not in _PERSONAL]


_PERSONAL = frozenset("i i'm i've i'd i'll me my mine myself we we're our us".split())


def _claim(m: Statement) -> str:
    """A statement as a claim in the third person, with the day it was told when it
    names no year of its own."""
    claim = _third_person(m.said).rstrip(" .!")
    if not _YEAR.search(claim):
        claim = f"{claim} ({day(m)})"
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
        words = [w for w in _content_words(claim) if w not in _ABOUT_SOMEONE]
        if words and 2 * sum(stem(w) in stems for w in words) < len(words):
            return False
    return True


_ABOUT_SOMEONE = frozenset("user user's they they're their them someone".split())
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
