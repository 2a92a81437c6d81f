"""How a statement is told, and how it is retold: the phrases the digest reads in what
people say, the third person it retells a statement in, and how a proposal names what
a slot holds.
"""

from __future__ import annotations

import re

from memory_core.language.lexicon import ADVERBS, AUXILIARIES, IRREGULAR_PAST, STOPWORDS

# Said to the listener: "you", or their name closing it ("I 100% agree, Mel.").
TO_LISTENER = re.compile(
    r"(?i:\b(?:you|your|you're|you've|yours|yourself)\b)|,\s+[A-Z][a-z]+[.!]*$"
    r"|(?i:\bsince we last (?:spoke|talked|chatted))"
)
# Interjections and the name of the one spoken to, before what is told: "Yeah,
# Caroline, ...", "Wow, ...".
OPENER = re.compile(
    r"^(?:(?i:yeah|yes|yep|yup|wow|aw+|oh|ah|haha|lol|omg|hey|hi|so|well|totally|ok|okay"
    r"|100%|by the way|btw)[,!.]*\s+)+(?:[A-Z][a-z]+[,!]\s+)?"
)
# Urging, wishing or cheering rather than telling: "Let's live it up", "Don't miss a
# beat", "Can't wait for the opening", "Congrats on finishing it up".
NOT_TOLD = re.compile(
    r"(?i)^(?:let's|let us|don't|do not|can't wait|cannot wait|keep it up|congrats"
    r"|congratulations|well done|good luck|sending (?:\w+ )*(?:vibes|love|hugs))\b"
)
# The words of a retold statement that say whom it is about.
ABOUT_SOMEONE = frozenset("user user's they they're their them someone".split())

# What a proposal calls the value of a slot, by the slot's attribute.
WHAT_A_SLOT_HOLDS = {
    "residence": "where {who} lives",
    "work": "{who_s} work",
    "relationship": "{who_s} relationship",
    "vehicle": "{who_s} vehicle",
    "habit": "{who_s} habit of {topic}",
    "medication": "{who_s} dose of {topic}",
}

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
_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "am": "is", "can": "can"}


def third_person(said: str) -> str:
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


def _verb_of_third_person(rest: str) -> str:
    """The rest of "I <verb> ..." with its verb as said of someone else: "love" ->
    "loves"; a past or modal verb, or an adverb before the verb, stays."""
    word, _, tail = rest.partition(" ")
    low = word.lower()
    if low in _IRREGULAR:
        verb = _IRREGULAR[low]
    elif (
        low.endswith("ed")
        or low in IRREGULAR_PAST
        or low in AUXILIARIES
        or low in ADVERBS
        or low in ("read", "really")  # a past written as its present; an intensifier
        or not low.isalpha()
    ):
        verb = word
    elif low.endswith(("s", "sh", "ch", "x", "z", "o")):
        verb = word + "es"
    elif low.endswith("y") and low[-2:-1] not in "aeiou":
        verb = word[:-1] + "ies"
    else:
        verb = word + "s"
    return f"{verb} {tail}".strip()
