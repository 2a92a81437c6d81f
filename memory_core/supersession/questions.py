"""What a question asks: of whom, of which attribute, and whether of how things are now.

A question of now ("where do I live these days?") is answered by the latest
statement of it (:mod:`memory_core.retrieval.latest`); a question of another time
("where did I live in 2019?") is not reordered so.
"""

from __future__ import annotations

from memory_core.supersession.slots import (
    MY_RELATION,
    RELATIONS,
    SINGLE_VALUED,
    USER,
    base_attribute,
    cue,
    slot_of,
)
from memory_core.textutil import STOPWORDS

# The words questions of an attribute use.
_ASKED = (
    ("work", cue(r"\b(?:job|jobs|career|employer|profession|occupation|work(?:ing)? (?:at|as|for)"
                 r"|where do (?:i|they|you|(?:he|she) does) work|role at work|what do i do)\b")),
    ("residence", cue(r"\b(?:where (?:do|does|am|is|are) \w+ (?:live|living|based|staying)"
                      r"|live|living|address|hometown|which (?:town|city|country))\b")),
    ("relationship", cue(r"\b(?:single|dating|seeing anyone|seeing someone|relationship"
                         r"|married|engaged|boyfriend|girlfriend)\b")),
    ("pet", cue(r"\b(?:pets?|dogs?|cats?|pupp(?:y|ies)|kittens?)\b")),
    ("medication", cue(r"\b(?:medication|meds|dose|dosage|pills?|prescri\w*|tablets?)\b")),
    ("habit", cue(r"\b(?:how (?:much|many|often)|a day|a week|per day|per week|daily|weekly)\b")),
    ("plan", cue(r"\b(?:plan|plans|planning|when is|when's|going to|when (?:do|does|am|are)"
                 r" \w+ (?:\w+ ){0,2}(?:start|begin|leave|move|fly|go|get)\w*)\b")),
    ("likes", cue(r"\b(?:like|likes|into|favou?rite|enjoy|fan of|hate|can't stand)\b")),
    ("vehicle", cue(r"\b(?:car|drive|vehicle)\b")),
)  # fmt: skip


def subject_asked(question: str) -> str:
    """Whom a question asks about: a relation or name it holds ("where does my sister
    live", "is Tom still at Tesco"), else the user."""
    if m := MY_RELATION.search(question):
        return (m.group(2) or RELATIONS[m.group(1).lower()]).lower()
    words = question.replace("?", " ").split()
    for word in words[1:]:
        bare = word.strip(",.!;:").removesuffix("'s")
        low = bare.lower()
        if bare[:1].isupper() and bare != "I" and low not in STOPWORDS:
            return RELATIONS.get(low, low)
        if low in RELATIONS:
            return RELATIONS[low]
    return USER


def attribute_asked(question: str) -> str | None:
    """The attribute a question's words cue: as a statement of it would, or by the
    words a question of it uses ("what is my job", "where do I live")."""
    low = question.lower().replace("\u2019", "'")
    for name, words in _ASKED:
        if words.search(low):
            return name
    slot = slot_of(question.replace("?", ".").rstrip() or question)
    return None if slot is None else base_attribute(slot)


# A question about how things are now: a word of the present ("these days"), or a
# verb in the present tense asking a value held one at a time ("where do I live",
# "what's my job") -- not a word of the past ("where did I live", "what was my
# first job", "what has she done").
_NOW_WORDS = cue(
    r"\b(?:now|nowadays|these days|currently|at the moment|right now|at present|still"
    r"|anymore|any more|lately|this (?:year|month|week)|today)\b"
)
_PAST_WORDS = cue(
    r"\b(?:did|was|were|had|used to|back then|at (?:that|the) (?:time|point)|before"
    r"|previously|originally|formerly|first|ago|last (?:year|month|week|time)"
    r"|has|have|might|would|could)\b",
    r"\bin (?:19|20)\d\d\b",
)
_PRESENT_VERBS = cue(r"\b(?:is|are|am|do|does|isn't|aren't|don't|doesn't)\b", r"\w(?:'s|'re|'m)\b")


def asks_now(question: str) -> bool:
    """Whether a question asks how things are now (at the time it is asked)."""
    low = question.lower().replace("\u2019", "'")
    if _NOW_WORDS.search(low) is not None:
        return "did" not in low.split()
    if _PAST_WORDS.search(low) or not _PRESENT_VERBS.search(low):
        return False
    # Without a word of the present, only a value held one at a time is surely asked
    # as of now: where someone lives or works ("where does she live"), or when a plan
    # stands ("when is my driving test") -- not "what is the name of her puppy", which
    # may ask of any puppy she had, nor one of several ("her second wedding").
    if _ONE_OF_SEVERAL.search(low):
        return False
    attribute = attribute_asked(question)
    if attribute in _HELD_ONE_AT_A_TIME:
        return True
    # Of the asker's own life, any attribute asked in the present tense is asked as of
    # now ("how many coffees am I having a day?"); of someone else's, such a question
    # may ask what they once told ("what does Melanie do to destress?").
    return (
        attribute is not None
        and _FIRST_PERSON.search(low) is not None
        and subject_asked(question) == USER
    )


_FIRST_PERSON = cue(r"\b(?:i|i'm|my|me)\b")


_ONE_OF_SEVERAL = cue(
    r"\b(?:first|second|third|fourth|fifth|last|other|another|each|every|all|any of|both"
    r"|ever|usually|often|always|sometimes)\b"
)


# Asked in the present tense, these ask how things stand now (a plan has one date).
_HELD_ONE_AT_A_TIME = SINGLE_VALUED | {"plan"}
