"""The offline extractor: sentences picked by patterns, no model, no network.

It is the default when no LLM endpoint is configured and the fallback when the
endpoint fails, so it must be deterministic, cheap (tens of microseconds per
turn) and never raise.  Each kept sentence becomes one fact, verbatim, prefixed
with ``User: `` or ``Assistant: `` so its provenance reads standalone.

The user message is read for all seven categories; the assistant reply only
for ``knowledge`` and ``action_item`` (what the user said about themselves is
what memory is for; the assistant's other sentences mostly echo it).
"""

from __future__ import annotations

import re

from memory_core.extraction.base import Extraction, Fact
from memory_core.textutil import STOPWORDS

_I = re.IGNORECASE


def _any(*patterns: str) -> re.Pattern[str]:
    """One lower-case pattern; matched against the lower-cased sentence (3x faster than re.I)."""
    return re.compile("|".join(f"(?:{p})" for p in patterns))


# First match wins, so the order matters: a correction that mentions a
# preference is a correction; "i'd love to" is a goal before it is a liking.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "correction",
        _any(
            r"\bactually\b",
            r"\bi meant\b",
            r"\bcorrection\b",
            r"\bthat'?s (?:wrong|not right|incorrect|not true|not what i)",
            r"\bi (?:misspoke|was wrong|got it wrong)\b",
            r"\bto clarify\b",
            r"\bnot\s+(?:\S+\s+){0,4}?but\s",
            r",\s+not\s+\w",
            r"^(?:no|nope),\s",
        ),
    ),
    (
        "action_item",
        _any(
            r"\bremind me\b",
            r"\bdon'?t (?:let me )?forget\b",
            r"\bto-?dos?\b",
            r"\bneed to\b",
            r"\bhave to\b",
            r"\bi'll\b",
            r"\bi will\b",
            r"\bwe should\b",
            r"\blet's\b",
            r"\bmake sure\b",
            r"\bfollow up\b",
            r"\bdeadline\b",
        ),
    ),
    (
        "goal",
        _any(
            r"\b(?:want|wanna|plan|planning|trying|hoping|hope|intend|aim|aiming) to\b",
            r"\b(?:i'?d|would) (?:like|love) to\b",
            r"\bmy (?:\w+ )?(?:goal|aim|plan|dream|resolution)\b",
            r"\bgoal\b",
            r"\bworking (?:on|towards?)\b",
            r"\bsaving (?:up )?for\b",
        ),
    ),
    (
        "user_preference",
        _any(
            r"\b(?:i|we)\s+(?:\w+\s+){0,2}?(?:like|love|prefer|hate|dislike|enjoy|adore|loathe)\b",
            r"\bfavou?rite\b",
            r"\bprefer(?:s|red|ence)?\b",
            r"\bcan'?t stand\b",
            r"\b(?:a|not a|big|huge) fan of\b",
            r"\ballergic\b",
            r"\bi'?m (?:a )?(?:vegetarian|vegan)\b",
        ),
    ),
    (
        "emotional_context",
        _any(
            r"\b(?:feel|feeling|felt|feels)\b",
            r"\b(?:stressed|anxious|excited|sad|happy|upset|worried|nervous|frustrated)\b",
            r"\b(?:overwhelmed|angry|lonely|exhausted|thrilled|scared|depressed|proud)\b",
            r"\b(?:grateful|heartbroken|devastated|miserable|relieved|burnt out)\b",
        ),
    ),
    (
        "episodic",
        _any(
            r"\b(?:yesterday|last (?:week|month|year|night|weekend|time|summer|winter)|ago)\b",
            r"\b(?:earlier today|this morning|recently|the other day)\b",
            r"\b(?:i|we)\s+(?:\w+\s+)?(?:went|visited|met|saw|had|was|were|got|moved|bought)\b",
            r"\b(?:i|we)\s+(?:\w+\s+)?(?:tried|did|made|lost|won|spent|ate|watched|took|came)\b",
            r"\b(?:i|we)\s+(?:\w+\s+)?(?:left|joined|graduated|married|finished|started)\b",
            r"\b(?:i|we)\s+(?:just\s+)?\w+ed\b",
        ),
    ),
    (
        "knowledge",
        _any(
            r"\bmy (?:\w+(?:'s)? ){1,2}(?:is|are|was)\b",
            r"\bi (?:live|work|study|grew up) (?:in|at|for|as|on)\b",
            r"\bi'?m (?:a|an) \w+",
            r"\bi have (?:a|an|two|three|four|\d+)\b",
            r"\b(?:is|are|was|were|means|refers to|stands for|consists of|contains)\b",
        ),
    ),
)
_DEFINITIONAL = re.compile(r"\b(?:is|are|was|were|means|refers to|stands for|consists of)\b")
_USER_CATEGORIES = frozenset(name for name, _ in _PATTERNS)
_ASSISTANT_CATEGORIES = frozenset({"knowledge", "action_item"})

_BASE_IMPORTANCE = {
    "correction": 0.6,
    "user_preference": 0.5,
    "goal": 0.5,
    "action_item": 0.45,
    "episodic": 0.4,
    "emotional_context": 0.4,
    "knowledge": 0.35,
}

# A sentence ends at . ! ? followed by a space or the end, or at a line break;
# "3.5" and "v1.2" stay whole.
_SENTENCE = re.compile(r"(?:[^.!?\n]++|[.!?]+(?=\S))*+(?:[.!?]+|\n|$)")
_GREETING = re.compile(
    r"^(?:(?:(?:hey|hi|hello) there|hi|hello|hey|good (?:morning|afternoon|evening)|dear \w+)"
    r"\b[\s,!.:;-]*|(?:thanks|thank you)(?: a lot| so much)?\s*[,!.:;-]+\s*)+",
    _I,
)
_FILLER = re.compile(
    r"^(?:ok(?:ay)?|sure|great|cool|nice|awesome|got it|sounds good|no problem|you'?re welcome"
    r"|bye|goodbye|see you|lol|haha|hmm+|yes|yeah|yep|no|nope|alright|perfect|wow|i see"
    r"|that'?s (?:great|cool|nice|awesome|interesting|fine|ok(?:ay)?))\b",
    _I,
)
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|we|our|us)\b")
_HEDGE = re.compile(r"\b(?:maybe|might|perhaps|probably|i guess|not sure|kind of|sort of)\b")
_REMIND_ME = re.compile(r"\bremind me\b")
_NUMBER = re.compile(r"\b\d+(?:[.,:/]\d+)*%?")
_STRIP = "\"'()[]{}<>.,;:!?*_`~"
# Capitalised only because they start a sentence (stopwords are excluded too).
_NOT_ENTITIES = frozenset(
    """
    yesterday today tomorrow tonight lately recently actually also please maybe sure
    remember remind note btw let let's lets don't dont can't won't i'm i've i'd i'll
    it's that's there's here's what's okay ok yes yeah no nope sorry thanks hi hello
    hey well anyway honestly really just still last next every usually always never
    sometimes correction todo great good nice cool user assistant
    """.split()
)

_MIN_WORDS = 3
_MIN_CHARS = 10
_FILLER_MAX_WORDS = 5
_MAX_ENTITIES = 8
_ASSISTANT_PENALTY = 0.1


def _sentences(text: str) -> list[str]:
    return [s for s in (m.strip() for m in _SENTENCE.findall(text)) if s]


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
        capital = word[0].isupper() and word != "I" and lower not in _NOT_ENTITIES
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


def _importance(
    category: str, low: str, words: list[str], entities: list[str], speaker: str
) -> float:
    """Simple evidence: category, the user speaking of themselves, specificity, length."""
    score = _BASE_IMPORTANCE[category]
    if speaker == "User" and _FIRST_PERSON.search(low):
        score += 0.1
    elif speaker == "Assistant":
        score -= _ASSISTANT_PENALTY
    if _NUMBER.search(low):
        score += 0.1
    if any(not e[0].isdigit() for e in entities):
        score += 0.1
    if len(words) < 5:
        score -= 0.05
    elif 8 <= len(words) <= 40:
        score += 0.05
    elif len(words) > 60:
        score -= 0.05
    if _HEDGE.search(low):
        score -= 0.05
    return score


def _classify(low: str, words: list[str], allowed: frozenset[str]) -> str | None:
    for category, pattern in _PATTERNS:
        if category in allowed and pattern.search(low):
            if category == "knowledge" and not _knowledge_like(low, words):
                return None
            return category
    return None


def _knowledge_like(low: str, words: list[str]) -> bool:
    """A bare "X is Y" counts only with something specific in it (a number, a name)."""
    if not _DEFINITIONAL.search(low):
        return True  # matched a personal-fact pattern ("I work at", "I have two")
    return bool(_NUMBER.search(low)) or any(w[0].isupper() and w != "I" for w in words[1:])


def _facts_from(text: str, speaker: str, allowed: frozenset[str]) -> list[Fact]:
    facts: list[Fact] = []
    for raw in _sentences(text.replace("\u2019", "'")):
        sentence = _GREETING.sub("", raw).strip()
        words = _words(sentence)
        if len(words) < _MIN_WORDS or len(sentence) < _MIN_CHARS:
            continue
        if _FILLER.match(sentence) and len(words) <= _FILLER_MAX_WORDS:
            continue
        low = sentence.lower()
        if sentence.endswith("?") and not _REMIND_ME.search(low):
            continue
        category = _classify(low, words, allowed)
        if category is None:
            continue
        entities = _entities(words)
        score = _importance(category, low, words, entities, speaker)
        importance = round(max(0.05, min(0.95, score)), 2)
        facts.append(Fact(f"{speaker}: {sentence}", category, importance, entities))
    return facts


class OfflineExtractor:
    """Deterministic pattern-based extractor; the default and the fallback."""

    name = "offline"

    def extract(self, user: str, assistant: str, *, when: float | None = None) -> Extraction:
        """One fact per informative sentence; never raises, never blocks."""
        facts = _facts_from(user, "User", _USER_CATEGORIES)
        facts += _facts_from(assistant, "Assistant", _ASSISTANT_CATEGORIES)
        unique = list({f.content: f for f in facts}.values())  # first of each wins its slot
        return Extraction(facts=unique, extractor=self.name)
