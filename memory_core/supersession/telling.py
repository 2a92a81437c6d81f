"""Whether a statement replaces what earlier statements of the same thing told.

The words are read by :mod:`memory_core.language.telling` (a change, a look back,
the specifics named); here they are compared: whether a statement may give another value of what an
earlier one stated.  Also what the user said in a trace at all.
"""

from __future__ import annotations

import re

from memory_core.language import first_sentence
from memory_core.language.discourse import statement
from memory_core.language.slots import SINGLE_VALUED
from memory_core.language.telling import changes, remarks, specifics
from memory_core.supersession.slots import base_attribute

# The day a fact was stamped with when it was told: " (as of 1 March 2023)".
STAMP = re.compile(r" \(as of [^)]*\)")


def tells(said: str) -> bool:
    """Whether what was said opens on a statement: news comes first ("Started
    levothyroxine 50 mcg. Do I take it before breakfast?"); what opens on a
    question or a request asks for something ("Any tips for keeping Dad busy?
    He was used to his own place."), and an exclamation of how things are ("Funny
    how quiet Sundays are now") remarks on them rather than telling news."""
    opening = first_sentence(said)
    return bool(said) and statement(opening) is not None and not remarks(opening)


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


def _specifics(said: str) -> set[str]:
    """The specifics a statement names, without the day it was stamped with."""
    return specifics(STAMP.sub("", said))


def restates(new: str, old: str) -> bool:
    """Whether ``new`` plausibly gives another value of what ``old`` stated: it says
    something changed, or the two name different specifics (places, names, amounts).
    A second mention of the same values ("I love painting", later "painting again
    today") is not an update."""
    if changes(new):
        return True
    theirs, ours = _specifics(old), _specifics(new)
    return bool(theirs) and bool(ours) and not ours <= theirs


def restates_by_words(new: str, old: str, slot: str) -> bool:
    """:func:`restates`, by words alone (no embedder to weigh meaning): the slot holds
    one value at a time (where someone lives, works) and ``new`` says it changed.
    Words cannot tell whether a habit, a liking or a plan is the same one: without
    an embedder those are left unchained."""
    return changes(new) and base_attribute(slot) in SINGLE_VALUED and bool(old.strip())
