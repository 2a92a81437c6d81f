"""How a statement tells what it tells, read from its words.

Whether it says that something changed ("moved", "now", "no longer"), whether it
looks back at how things were ("found my old map from the Sheffield days"),
whether it is an exclamative remark ("Funny how quiet Sundays are now"), and the
specifics it names (places, names, amounts) that tell one value of a thing from
another.
"""

from __future__ import annotations

import re

from memory_core.language.slots import cue

# Words that say a value changed: a statement holding one is an update of what it states.
_CHANGE = cue(
    r"\b(?:now|nowadays|anymore|any more(?=\s*[.!?,;]|$)|no longer|these days|at the moment"
    r"|currently|switched|switching|switch (?:me|him|her|us|them) (?:on)?to|swapped|moved"
    r"|moving to|relocated|relocating|quit|left my|leaving my|changed|instead|promoted"
    r"|dropped|down to|up to|cut (?:down|back)|stopped"
    r"|gave up|given up|took up|became|become|got (?:married|engaged|divorced|together)|broke up"
    r"|met someone|started (?:dating|seeing)|seeing someone new"
    r"|split up|accepted (?:a|an|the) (?:[\w-]+ ){0,3}(?:offer|job|position|role)"
    r"|separated|traded|sold|upgraded|retired|used to|not .{0,30} anymore|officially"
    r"|no more|from now on|(?:from|starting|as of) (?:today|tomorrow)|went back|back to"
    r"|back home|(?:my|our|his|her|their) new|postponed|rescheduled|pushed back|brought forward"
    r"|delayed|cancell?ed|called off)\b"
)
# A look back: a statement about how things were, not how they are ("found my old
# map from the Sheffield days", "back when he was rewiring flats").
_LOOKING_BACK = cue(
    r"\b(?:used to|back when|back in the day|in those days|(?:thinking|looking|think) back"
    r"|\b(?!these\b)\w+ days\b(?=\s*[.!,;])"
    r"|remember(?:ed|ing)?|nostalgi\w*|reminisc\w*|throwback|from when|once upon"
    r"|(?:my|our|his|her|their|the|\w+'s) old (?!enough\b)\w+|old (?:photos|pictures|videos)"
    r"|(?:the|that) (?:day|week|month|year|time|summer) (?:i|we|he|she) (?:was|were|met|moved"
    r"|had|lived|worked|started)"
    r"|found (?:a|an|the|my|our) (?:old |)(?:photo|picture|video|map|card|letter|certificate"
    r"|ticket|bib|receipt))\b"
)
# A value replaced by another, told in a look back at the old one ("traded in the old
# car for ..."); a word of the present alone ("more time at a desk now than I used
# to") compares with the past rather than telling a change.
_REPLACED = cue(
    r"\b(?:switched|swapped|traded|dropped|moved|quit|sold|replaced|upgraded|gave up"
    r"|given up|took up|instead)\b"
)
# "Funny how ...", "Weird that ...": an exclamative remark.
_REMARK = re.compile(
    r"(?i)^(?:(?:it's|it is|so|how|isn't it)\s+)?(?:funny|weird|strange|crazy|amazing|wild|odd"
    r"|mad|interesting|hilarious|incredible|bizarre|nuts|wonderful|sad|mental)\s+(?:how|that)\b"
)


def _low(text: str) -> str:
    return text.lower().replace("\u2019", "'")


def changes(statement: str) -> bool:
    """Whether a statement says that something changed ("moved", "now", "no longer")."""
    return _CHANGE.search(_low(statement)) is not None


def looks_back(statement: str) -> bool:
    """Whether a statement tells how things were rather than how they are: it looks
    back, and tells no change to how they are now ("Traded in the old car and picked
    up a Tesla" names the old value to replace it)."""
    low = _low(statement)
    rest = _LOOKING_BACK.sub(" ", low)
    return rest != low and _REPLACED.search(rest) is None


def remarks(sentence: str) -> bool:
    """Whether a sentence is an exclamative remark on how things are ("Funny how quiet
    Sundays are now") rather than news."""
    return _REMARK.match(sentence) is not None


_I = re.compile(r"I(?:'[a-z]+)?")
_SPECIFIC = re.compile(r"(?<!^)(?<![.!?] )\b(?:[A-Z][\w'-]+|\d+(?:[.,]\d+)?)")
# Amounts written out ("down to two a day", "a solid seven hours").
_AMOUNT_WORDS = re.compile(
    r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty"
    r"|thirty|forty|fifty|hundred|dozen|none|zero)\b"
)
# The one spoken to: "Thanks, Ben!" names no value.
_VOCATIVE = re.compile(
    r"(?i:\b(?:thanks|thank you|hey|hi|hello|cheers|wow|yeah|yes|oh|aw+|congrats"
    r"|congratulations|sorry|love you|miss you|good luck|bye|see ya)),?\s+[A-Z][a-z]+\b"
)


def specifics(statement: str) -> set[str]:
    """The specifics a statement names (capitalised words, numbers, amounts in
    words), lower-cased, leaving out what names no value: "I" and its contractions,
    and the one spoken to ("Thanks, Ben!")."""
    text = _VOCATIVE.sub(" ", statement)
    found = {w.lower() for w in _SPECIFIC.findall(text) if not _I.fullmatch(w)}
    return found | set(_AMOUNT_WORDS.findall(text.lower()))
