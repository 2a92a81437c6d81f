"""How a statement tells what it tells: news or a remark, a change or a look back.

Read offline from its words: whether a statement says that something changed
("moved", "now", "no longer"), whether it names something earlier statements of
the same thing did not, whether it looks back at how things were ("found my old
map from the Sheffield days"), and what the user said in a trace at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory_core.extraction.discourse import statement
from memory_core.language import first_sentence
from memory_core.language.lexicon import MONTHS
from memory_core.supersession.slots import SINGLE_VALUED, base_attribute, cue

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
_SPECIFIC = re.compile(r"(?<!^)(?<![.!?] )\b(?:[A-Z][\w'-]+|\d+(?:[.,]\d+)?)")


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


def looks_back(statement: str) -> bool:
    """Whether a statement tells how things were rather than how they are: it looks
    back, and tells no change to how they are now ("Traded in the old car and picked
    up a Tesla" names the old value to replace it)."""
    low = statement.lower().replace("\u2019", "'")
    rest = _LOOKING_BACK.sub(" ", low)
    return rest != low and _REPLACED.search(rest) is None


# A value replaced by another, told in a look back at the old one ("traded in the old
# car for ..."); a word of the present alone ("more time at a desk now than I used
# to") compares with the past rather than telling a change.
_REPLACED = cue(
    r"\b(?:switched|swapped|traded|dropped|moved|quit|sold|replaced|upgraded|gave up"
    r"|given up|took up|instead)\b"
)


def tells(said: str) -> bool:
    """Whether what was said opens on a statement: news comes first ("Started
    levothyroxine 50 mcg. Do I take it before breakfast?"); what opens on a
    question or a request asks for something ("Any tips for keeping Dad busy?
    He was used to his own place."), and an exclamation of how things are ("Funny
    how quiet Sundays are now") remarks on them rather than telling news."""
    opening = first_sentence(said)
    return bool(said) and statement(opening) is not None and not _REMARK.match(opening)


# "Funny how ...", "Weird that ...": an exclamative remark.
_REMARK = re.compile(
    r"(?i)^(?:(?:it's|it is|so|how|isn't it)\s+)?(?:funny|weird|strange|crazy|amazing|wild|odd"
    r"|mad|interesting|hilarious|incredible|bizarre|nuts|wonderful|sad|mental)\s+(?:how|that)\b"
)


def said_in(content: str) -> str:
    """What the user said in a trace's words: a turn's user paragraphs ("User: ...",
    "User (Ana): ..."), without their labels; any other content whole."""
    if not content.startswith("User"):
        return content
    parts = [p for p in content.split("\n\n") if p.startswith("User")]
    return " ".join(p.split(": ", 1)[1] if ": " in p else p for p in parts)


def said_by(content: str, speaker: str | None) -> str:
    """A memory's words without the speaker's label it may open with ("Ana: ...")."""
    if speaker and content.startswith(f"{speaker}: "):
        return content[len(speaker) + 2 :]
    return content


def changes(statement: str) -> bool:
    """Whether a statement says that something changed ("moved", "now", "no longer")."""
    return _CHANGE.search(statement.lower().replace("\u2019", "'")) is not None


def restates(new: str, old: str) -> bool:
    """Whether ``new`` plausibly gives another value of what ``old`` stated: it says
    something changed, or the two name different specifics (places, names, amounts).
    A second mention of the same values ("I love painting", later "painting again
    today") is not an update."""
    if changes(new):
        return True
    theirs, ours = _specifics(old), _specifics(new)
    return bool(theirs) and bool(ours) and not ours <= theirs


def tells_news(statement: str, earlier: Sequence[str]) -> bool:
    """Whether ``statement`` tells something the ``earlier`` statements of the same
    thing did not: it says something changed, or it names a specific (a place, a
    name, an amount) none of them named.  A later remark on the same thing ("still
    a bit sad about Berlin", "the hardest part of the new role is the meetings")
    names nothing new."""
    if changes(statement):
        return True
    named = set().union(*(_specifics(e) for e in earlier))
    return bool(_specifics(statement) - named)


def names_replaced(statement: str, holding: str, before: Sequence[str]) -> bool:
    """Whether ``statement`` speaks of a value ``holding`` replaced rather than of a
    new one: it names a specific that a statement ``before`` the holding one named
    and the holding one did not ("found the adoption certificate, it still says
    Pixel on it" after the kitten was renamed Mochi), and tells no change to it
    ("moved back to Leeds" names the old value to return to it).  A word of the
    present alone compares ("she now flatly denies ever hiding from the Scream
    trailer")."""
    if _REPLACED.search(statement.lower()) or _BACK.search(statement.lower()):
        return False
    held = " ".join(_WORD.findall(holding.lower()))  # opening a sentence or not
    told = [" ".join(n) for b in before for n in _names(b)]
    return any(
        f" {name} " in f" {t} " and f" {name} " not in f" {held} "
        for name in (" ".join(n) for n in _names(statement))
        for t in told
    )


def _names(statement: str) -> list[tuple[str, ...]]:
    """The names a statement gives, each a run of capitalised words ("Dearborn Truck",
    "Berlin"), and its numbers, as lower-case words."""
    runs = (m.group(0).split() for m in _NAME_RUN.finditer(STAMP.sub("", statement)))
    names = (tuple(w.lower() for w in run if not _I.fullmatch(w)) for run in runs)
    return [n for n in names if n]


_WORD = re.compile(r"[\w'-]+")
_NAME_RUN = re.compile(r"(?<!^)(?<![.!?] )\b(?:[A-Z][\w'-]*(?: [A-Z][\w'-]*)*|\d+(?:[.,]\d+)?)\b")
_BACK = cue(r"\b(?:back (?:to|in|on|with|home)|went back|moved back|again)\b")


def moves_plan(statement: str, earlier: Sequence[str]) -> bool:
    """Whether ``statement`` changes a plan the ``earlier`` statements told: it says
    something changed ("postponed", "cancelled"), or it gives a day none of them
    gave ("kicks off on 8 January")."""
    if changes(statement):
        return True
    told = set().union(*(_days(e) for e in earlier))
    return bool(_days(statement) - told)


def _days(statement: str) -> set[str]:
    """The days of the year a statement names ("8 January", "March 3rd")."""
    return {
        f"{int(m['d1'] or m['d2'])} {(m['m1'] or m['m2'])[:3]}"
        for m in _DAY_OF_YEAR.finditer(statement.lower())
    }


_MONTH = "|".join(f"{m}|{m[:3]}" for m in MONTHS)
_DAY_OF_YEAR = re.compile(
    rf"\b(?:(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m1>{_MONTH})"
    rf"|(?P<m2>{_MONTH})\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?)\b"
)


def _specifics(statement: str) -> set[str]:
    """The specifics a statement names (capitalised words, numbers, amounts in
    words), leaving out what names no value: "I" and its contractions, the one
    spoken to ("Thanks, Ben!"), and the day a fact was stamped with when it was
    told ("(as of 1 March 2023)")."""
    text = _VOCATIVE.sub(" ", STAMP.sub("", statement))
    found = {w.lower() for w in _SPECIFIC.findall(text) if not _I.fullmatch(w)}
    return found | set(_AMOUNT_WORDS.findall(text.lower()))


# Amounts written out ("down to two a day", "a solid seven hours").
_AMOUNT_WORDS = re.compile(
    r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty"
    r"|thirty|forty|fifty|hundred|dozen|none|zero)\b"
)


_I = re.compile(r"I(?:'[a-z]+)?")
# The day a fact was stamped with when it was told: " (as of 1 March 2023)".
STAMP = re.compile(r" \(as of [^)]*\)")
_VOCATIVE = re.compile(
    r"(?i:\b(?:thanks|thank you|hey|hi|hello|cheers|wow|yeah|yes|oh|aw+|congrats"
    r"|congratulations|sorry|love you|miss you|good luck|bye|see ya)),?\s+[A-Z][a-z]+\b"
)


def restates_by_words(new: str, old: str, slot: str) -> bool:
    """:func:`restates`, by words alone (no embedder to weigh meaning): the slot holds
    one value at a time (where someone lives, works) and ``new`` says it changed.
    Words cannot tell whether a habit, a liking or a plan is the same one: without
    an embedder those are left unchained."""
    return changes(new) and base_attribute(slot) in SINGLE_VALUED and bool(old.strip())
