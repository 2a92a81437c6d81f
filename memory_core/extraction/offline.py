"""The offline extractor: statements picked by rules, no model, no network.

It is the default when no LLM endpoint is configured and the fallback when the
endpoint fails, so it must be deterministic, cheap (well under a millisecond
per turn) and never raise.  Only the user's words are read: what the assistant
says is not a fact about the user (the user's own "you're right that I'm a Mac
person" is).  Each statement of the user becomes one fact, prefixed ``User: ``:

* sentences are split without cutting "Dr. Okafor" or "Ursula K. Le Guin"
  (:mod:`~memory_core.language.sentences`);
* questions, requests, hypotheticals, greetings and filler are dropped, what
  only makes sense after the statement before it joins it (a verbless fragment,
  "I'd been on 50 mg since March", "Flight's at 7:15 out of Newark"), and a
  subject "he" or "she" is named (:mod:`~memory_core.language.discourse`);
* given the turn's time, relative times become dates ("yesterday" -> "on 7 May
  2023", :mod:`~memory_core.language.times`) and a past event that names no
  time gets the day it was told ("(as of 8 January 2024)");
* the category comes from the patterns below; the importance rewards what makes
  a fact worth keeping -- it is about the user, and it is specific (a name, a
  number, a date, "my sister") -- so "I like music." scores under "My sister
  Marta is vegan.", and "I love it." (what is "it"?) is no fact at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime

from memory_core.extraction.base import Extraction, Fact
from memory_core.language import sentences
from memory_core.language.days import written_day
from memory_core.language.discourse import (
    expand_shorthand,
    is_fragment,
    kept_statement,
    refers_back,
    resolve_pronouns,
)
from memory_core.language.facts import (
    ABSOLUTE_TIME,
    CATEGORY_CUES,
    DEFINITIONAL,
    ENDS_ON_PRONOUN,
    FILLER_REPLY,
    HEDGE,
    NOT_ENTITIES,
    NUMBER,
    OF_THE_SPEAKER,
    PERFECT,
    PERSONAL_FACT,
    POSSESSION,
    SUBORDINATE,
)
from memory_core.language.grammar import is_past, starts_with_verb
from memory_core.language.keeping import only_asks_to_keep
from memory_core.language.lexicon import KIN_AND_ROLES, WEEKDAYS
from memory_core.language.reading import NONE, SPEAKER, Statement, read_statements
from memory_core.language.times import month_named, names_day, resolve_times
from memory_core.textutil import STOPWORDS

_BASE_IMPORTANCE = {
    "correction": 0.6,
    "user_preference": 0.5,
    "goal": 0.5,
    "action_item": 0.45,
    "episodic": 0.4,
    "emotional_context": 0.4,
    "knowledge": 0.35,
}

_PRONOUN_TAIL = 12  # searched in the last characters only: "$" alone does not stop a scan
_END = re.compile(r"[.!?]*$")
_STRIP = "\"'()[]{}<>.,;:!?*_`~"

_MIN_WORDS = 3
_DURABLE = 0.6  # the statements model's odds that a statement is worth keeping for months
_ASKED_TO_KEEP = 0.9  # its odds that the user asked for a statement to be kept
_MIN_CHARS = 10
_FILLER_MAX_WORDS = 5
_MAX_ENTITIES = 8
_CONTENT_WORDS = 2  # fewer, and a statement with nothing specific says too little ("I love it.")
_VAGUE_PENALTY = 0.25
_NOT_ABOUT_USER_PENALTY = 0.2
# Categories whose statements say something without naming anything ("I hate
# waking up early."); the others need a name, a number, a date or "my ...".
_GENERAL_CATEGORIES = frozenset({"user_preference", "goal", "emotional_context", "action_item"})


@dataclass
class _Statement:
    text: str  # as the fact will read
    said: str  # before relative times were resolved: for entities
    dated: bool  # names a time of its own
    named: bool  # a "he" or "she" in it was replaced by a name
    about_user: bool  # first person, a verb-first sentence, or a named subject
    keep: bool = False  # the user asked for it to be kept
    read: Statement | None = None  # the statements model's reading of what was said


def _words(sentence: str) -> list[str]:
    """Whitespace tokens without surrounding punctuation (faster than a word regex)."""
    return [w for w in (t.strip(_STRIP) for t in sentence.split()) if w and w[0].isalnum()]


def _entities(words: list[str]) -> list[str]:
    """Runs of capitalised words (not a sentence's common first word) and numbers."""
    found: list[str] = []
    run: list[str] = []
    for i, word in enumerate(words):
        lower = word.lower()
        is_number = word[0].isdigit()
        capital = word[0].isupper() and word != "I" and lower not in NOT_ENTITIES
        capital = capital and lower not in WEEKDAYS  # relative: its date is in the text
        if capital and i == 0 and lower in STOPWORDS:
            capital = False
        if capital:
            run.append(word.removesuffix("'s"))
            continue
        if run:
            found.append(" ".join(run))
            run = []
        if is_number:
            found.append(word)
    if run:
        found.append(" ".join(run))
    return list(dict.fromkeys(found))[:_MAX_ENTITIES]


def _statements(text: str, today: date | None) -> list[_Statement]:
    """The user's statements, fragments joined, pronouns named, times resolved."""
    kept: list[_Statement] = []
    history: list[str] = []
    joinable = False  # the last sentence was a kept statement a fragment may continue
    month: tuple[int, int] | None = None  # the month named last, for "on the 9th"
    for sentence in sentences(text.replace("\u2019", "'")):
        if kept and only_asks_to_keep(sentence):
            kept[-1].keep = True  # "... Please remember that."
            joinable = False
            continue
        said, keep = kept_statement(sentence)
        if said is None:
            history.append(sentence)
            if today:
                month = month_named(sentence, today) or month
            joinable = False
            continue
        continues = refers_back(said)
        said, named = resolve_pronouns(expand_shorthand(said), history)
        history.append(said)
        written, dated = resolve_times(said, today, month) if today else (said, False)
        if today:
            month = month_named(said, today) or month
        # Of nothing and no one of the user's, on no day of its own ("Flight's at 7:15
        # out of Newark.", "Legs are wrecked."): it goes on with what the user just
        # told, and alone would not say what it is about.  One with its own day
        # ("Physio starts next Friday.") tells something else.
        about_user = named or _about_user(said)
        goes_on = not (about_user or dated or names_day(said))
        if joinable and (continues or goes_on or is_fragment(said)):
            last = kept[-1]
            last.text = f"{last.text} {written}"
            last.said = f"{last.said} {said}"
            last.dated = last.dated or dated
            last.keep = last.keep or keep
            continue
        kept.append(_Statement(written, said, dated, named, about_user, keep))
        joinable = len(said.split()) >= _MIN_WORDS
    readings = read_statements([s.said for s in kept]) if kept else None
    for s, read in zip(kept, readings or (), strict=False):
        s.read = read
    return kept


def _about_user(sentence: str) -> bool:
    low = sentence.lower()
    if OF_THE_SPEAKER.search(low):
        return True
    return starts_with_verb(low) or low.split(maxsplit=1)[0].strip(_STRIP) in KIN_AND_ROLES


def _specific(low: str, words: list[str], statement: _Statement) -> bool:
    """Whether the statement names something: a number, a name, a date, "my sister"."""
    return bool(
        statement.dated
        or statement.named
        or NUMBER.search(low)
        or POSSESSION.search(low)
        or any(w[0].isupper() and w != "I" and w.lower() not in NOT_ENTITIES for w in words[1:])
    )


def _importance(
    category: str, low: str, words: list[str], specific: bool, statement: _Statement
) -> float:
    """Simple evidence: category, about the user, specificity, length, hedging."""
    score = _BASE_IMPORTANCE[category]
    if statement.about_user:
        score += 0.1
    elif not statement.dated:  # neither the user's nor dated: commentary, not memory
        score -= _NOT_ABOUT_USER_PENALTY
    if NUMBER.search(low):
        score += 0.1
    if statement.named or any(w[0].isupper() and w != "I" for w in words[1:]):
        score += 0.1
    if statement.dated:
        score += 0.1
    if not specific and not _general(category, low, words):
        score -= _VAGUE_PENALTY
    if len(words) < 5:
        score -= 0.05
    elif 8 <= len(words) <= 40:
        score += 0.05
    elif len(words) > 60:
        score -= 0.05
    if HEDGE.search(low):
        score -= 0.05
    return score


def _general(category: str, low: str, words: list[str]) -> bool:
    """Whether a statement that names nothing still says something ("I hate rain.")."""
    if category not in _GENERAL_CATEGORIES and not PERSONAL_FACT.search(low):
        return False
    return sum(w.lower() not in STOPWORDS for w in words) >= _CONTENT_WORDS


def _classify(low: str, words: list[str], specific: bool) -> str | None:
    """The first category whose pattern the main clause (a correction: the sentence) has."""
    main = SUBORDINATE.split(low, maxsplit=1)[0]
    for category, pattern in CATEGORY_CUES:
        if category == "emotional_context" and specific:
            continue  # "Spent the weekend painting, very proud": what happened matters more
        if pattern.search(low if category == "correction" else main):
            if category == "knowledge" and not _knowledge_like(low, words):
                break
            return category
    if specific:
        return "episodic" if is_past(main) else "knowledge"
    return None


def _knowledge_like(low: str, words: list[str]) -> bool:
    """A bare "X is Y" counts only with something specific in it (a number, a name)."""
    if not DEFINITIONAL.search(low):
        return True  # matched a personal-fact pattern ("I work at", "I have two")
    return bool(NUMBER.search(low)) or any(w[0].isupper() and w != "I" for w in words[1:])


def _stamped(statement: _Statement, low: str, today: date | None) -> str:
    """A past event that names no time gets the day it was told."""
    text = statement.text
    if today is None or statement.dated or ABSOLUTE_TIME.search(low):
        return text
    main = SUBORDINATE.split(low, maxsplit=1)[0]
    if not (is_past(main) or PERFECT.search(main)):
        return text
    end = _END.search(text)
    cut = end.start() if end else len(text)
    return f"{text[:cut]} (as of {written_day(today)}){text[cut:]}"


def _fact(statement: _Statement, today: date | None) -> Fact | None:
    said = _words(statement.said)
    contracted = sum("'" in w for w in said)  # "She's vegan." says three words
    if len(said) + contracted < _MIN_WORDS or len(statement.said) < _MIN_CHARS:
        return None
    words = said if statement.text == statement.said else _words(statement.text)
    if FILLER_REPLY.match(statement.text) and len(words) <= _FILLER_MAX_WORDS:
        return None
    low = statement.text.lower()
    specific = _specific(low, words, statement)
    # A lasting attribute of the user's tells as much as a name or a date in it.
    telling = specific or _of_the_user(statement)
    if not telling and ENDS_ON_PRONOUN.search(low[-_PRONOUN_TAIL:]):
        return None  # "I love it.": what "it" is was said elsewhere, so this says nothing
    category = _classify(low, words, specific) or _read_category(statement, low)
    if category is None and statement.keep:
        category = "knowledge"  # asked to be kept, so kept whatever it is
    if category is None:
        return None
    if category == "action_item" and (statement.dated or ABSOLUTE_TIME.search(low)):
        # A to-do with its date is an event on the user's calendar ("dentist on 8
        # November 2023 at 3:30", "the tax is due by 31 January 2025"): kept as what
        # happens then, whether or not the agent keeps to-dos.
        category = "episodic"
    score = _importance(category, low, words, telling, statement)
    importance = round(max(0.05, min(0.95, score)), 2)
    entities = _entities(said)
    read = statement.read
    return Fact(
        f"User: {_stamped(statement, low, today)}",
        category,
        importance,
        entities,
        attribute=read.attribute if read is not None and read.attribute != NONE else None,
        keep=statement.keep or (read is not None and read.keep >= _ASKED_TO_KEEP),
    )


def _of_the_user(statement: _Statement) -> bool:
    """Whether the statements model reads it as a lasting attribute of the user's ("I
    quit nursing, now I am a teacher"): as telling as a name or a date in it."""
    read = statement.read
    return (
        read is not None
        and read.about == SPEAKER
        and read.attribute != NONE
        and read.durable >= _DURABLE
        and read.smalltalk < _DURABLE
    )


def _read_category(statement: _Statement, low: str) -> str | None:
    """What the patterns missed, as the statements model reads it: a whole statement,
    not a fragment left alone ("Simple and freeing.", of what was said before it)."""
    if not _of_the_user(statement) or is_fragment(statement.said):
        return None
    return "episodic" if is_past(SUBORDINATE.split(low, maxsplit=1)[0]) else "knowledge"


def _day(when: float | None) -> date | None:
    """The UTC day of an epoch time; None when there is none or it is out of range."""
    if when is None:
        return None
    try:
        return datetime.fromtimestamp(when, UTC).date()
    except (OverflowError, OSError, ValueError):
        return None


class OfflineExtractor:
    """Deterministic rule-based extractor; the default and the fallback."""

    name = "offline"

    def extract(self, user: str, assistant: str, *, when: float | None = None) -> Extraction:
        """One fact per statement the user makes; never raises, never blocks.

        ``assistant`` is not read: its sentences are not facts about the user.
        """
        today = _day(when)
        facts = [f for s in _statements(user, today) if (f := _fact(s, today)) is not None]
        unique = list({f.content: f for f in facts}.values())  # first of each wins its slot
        return Extraction(facts=unique, extractor=self.name)
