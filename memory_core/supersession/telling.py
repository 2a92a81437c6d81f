"""Whether a statement replaces what earlier statements of the same thing told.

The words are read by :mod:`memory_core.language.telling` (a change, a look back,
the specifics named); here they are compared: whether a statement is news at all,
whether it names something the earlier ones did not, whether it speaks of a value
already replaced.  Also what the user said in a trace at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory_core.language import first_sentence
from memory_core.language.discourse import statement
from memory_core.language.slots import SINGLE_VALUED
from memory_core.language.telling import (
    changes,
    days,
    names,
    remarks,
    replaces_value,
    specifics,
)
from memory_core.supersession.slots import base_attribute

# The day a fact was stamped with when it was told: " (as of 1 March 2023)".
STAMP = re.compile(r" \(as of [^)]*\)")
_WORD = re.compile(r"[\w'-]+")


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


def tells_news(said: str, earlier: Sequence[str]) -> bool:
    """Whether ``said`` tells something the ``earlier`` statements of the same thing
    did not: it says something changed, or it names a specific (a place, a name, an
    amount) none of them named.  A later remark on the same thing ("still a bit sad
    about Berlin", "the hardest part of the new role is the meetings") names
    nothing new."""
    if changes(said):
        return True
    named = set().union(*(_specifics(e) for e in earlier))
    return bool(_specifics(said) - named)


def names_replaced(said: str, holding: str, before: Sequence[str]) -> bool:
    """Whether ``said`` speaks of a value ``holding`` replaced rather than of a new
    one: it names a specific that a statement ``before`` the holding one named and
    the holding one did not ("found the adoption certificate, it still says Pixel on
    it" after the kitten was renamed Mochi), and tells no change to it ("moved back
    to Leeds" names the old value to return to it).  A word of the present alone
    compares ("she now flatly denies ever hiding from the Scream trailer")."""
    if replaces_value(said):
        return False
    held = " ".join(_WORD.findall(holding.lower()))  # opening a sentence or not
    told = [" ".join(n) for b in before for n in names(STAMP.sub("", b))]
    return any(
        f" {name} " in f" {t} " and f" {name} " not in f" {held} "
        for name in (" ".join(n) for n in names(STAMP.sub("", said)))
        for t in told
    )


def moves_plan(said: str, earlier: Sequence[str]) -> bool:
    """Whether ``said`` changes a plan the ``earlier`` statements told: it says
    something changed ("postponed", "cancelled"), or it gives a day none of them
    gave ("kicks off on 8 January")."""
    if changes(said):
        return True
    told = set().union(*(days(e) for e in earlier))
    return bool(days(said) - told)


def restates_by_words(new: str, old: str, slot: str) -> bool:
    """:func:`restates`, by words alone (no embedder to weigh meaning): the slot holds
    one value at a time (where someone lives, works) and ``new`` says it changed.
    Words cannot tell whether a habit, a liking or a plan is the same one: without
    an embedder those are left unchained."""
    return changes(new) and base_attribute(slot) in SINGLE_VALUED and bool(old.strip())
