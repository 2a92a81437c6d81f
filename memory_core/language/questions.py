"""What a question asks of memory: which attribute, and whether of how things are now.

A question of now ("where do I live these days?") is answered by the latest
statement of it; a question of another time ("where did I live in 2019?") is not.
Both judgements are the learned reading of questions
(:func:`memory_core.language.reading.read_questions`); without a shipped model a
question asks no attribute and nothing of now.
"""

from __future__ import annotations

from memory_core.language.persons import person_asked
from memory_core.language.reading import NONE, QUESTION_ATTRIBUTE, Question, read_questions
from memory_core.language.slots import SINGLE_VALUED, cue

# A word of the present: asked of anyone, it asks how things are now.
_NOW_WORDS = cue(
    r"\b(?:now|nowadays|these days|currently|at the moment|right now|at present|presently"
    r"|as of now|still|anymore|any more|lately|this (?:year|month|week)|today"
    # as texted: "rn", "atm", "at the mo"
    r"|rn|atm|at the mo)\b"
)
# One of several asked ("her second wedding", "her usual order"): no one value holds.
_ONE_OF_SEVERAL = cue(
    r"\b(?:first|second|third|fourth|fifth|last|other|another|each|every|all|any of|both"
    r"|ever|usually|often|always|sometimes)\b"
)
# A verb in the present tense: "where does she live", "what's my job" -- a query of
# bare words ("otters", "flat in Leeds") asks no time at all.
_PRESENT_VERBS = cue(
    r"\b(?:is|are|am|do|does|isn't|aren't|don't|doesn't"
    # as texted, without the apostrophe: "whats my job", "im", "dont"
    r"|whats|wats|wheres|whos|hows|whens|im|isnt|arent|dont|doesnt)\b",
    r"\w(?:'s|'re|'m)\b",
)
_FIRST_PERSON = cue(r"\b(?:i|i'm|my|me|we|we're|our|us)\b")
# Asked in the present tense, these ask how things stand now (a plan has one date, a
# pupil one school).
_HELD_ONE_AT_A_TIME = SINGLE_VALUED | {"plan", "education"}
# How sure the reading must be that a question asks of now (and, as
# :data:`~memory_core.language.reading.QUESTION_ATTRIBUTE` says, of an attribute).
NOW = 0.5
ATTRIBUTE = QUESTION_ATTRIBUTE


def _read(question: str) -> Question | None:
    read = read_questions([question])
    return None if read is None else read[0]


def attribute_asked(question: str) -> str | None:
    """The attribute a question asks about ("what is my job": work), or None when
    it asks of none or the reading is unsure."""
    read = _read(question)
    if read is None or read.attribute == NONE or read.attribute_p < ATTRIBUTE:
        return None
    return read.attribute


def asks_now(question: str) -> bool:
    """Whether a question asks how things are now (at the time it is asked).

    The reading judges the tense ("where do I live" but not "where did I live");
    a word of the present ("these days") then settles it.  Without one, a query with
    no verb in the present tense asks no time, and of those that have one only a value
    held one at a time is surely asked as of now -- where someone lives or works,
    when a plan stands -- not one of several ("her second wedding"); and of the
    asker's own life any attribute ("how many coffees am I having a day?"), where
    of someone else's such a question may ask what they once told ("what does
    Melanie do to destress?")."""
    read = _read(question)
    if read is None or read.now < NOW:
        return False
    low = question.lower().replace("\u2019", "'")
    if _NOW_WORDS.search(low):
        return True
    if not _PRESENT_VERBS.search(low) or _ONE_OF_SEVERAL.search(low):
        return False
    attribute = None if read.attribute == NONE else read.attribute
    # Of someone, a value held one at a time only as surely as :func:`attribute_asked`
    # reads it: an unsure guess ("what does Jon's dance studio offer": work, at 0.23)
    # asks no value held now.
    if attribute in _HELD_ONE_AT_A_TIME and read.attribute_p >= ATTRIBUTE:
        return True
    return (
        attribute is not None
        and _FIRST_PERSON.search(low) is not None
        and person_asked(question) is None
    )
