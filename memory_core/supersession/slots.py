"""What a statement gives a value of: its slot, ``subject/attribute``.

``user/residence`` for "We moved into a flat in Leeds", ``priya/work`` for "My
sister Priya started at the bank", ``user/habit:coffee`` for an attribute holding
many values at once.  Two statements of one slot in one scope id state two values
of the same thing, so the later supersedes the earlier
(:mod:`memory_core.supersession.chain`).  The attribute and the person are read by
:mod:`memory_core.language`; the subject is the speaker unless the sentence is about
someone else.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

from memory_core.language import sentences
from memory_core.language.persons import (
    person_asked,
    person_named,
    persons_meant,
    persons_named,
)
from memory_core.language.slots import attribute_stated

__all__ = [
    "USER",
    "base_attribute",
    "persons_named",
    "slot_of",
    "slot_stated",
    "slots_of",
    "speaker_subject",
    "subject_asked",
    "subjects_named",
]

USER = "user"


def speaker_subject(speaker: str | None) -> str:
    """The subject of what a speaker says of themselves: their name, or the user."""
    name = (speaker or "").strip().lower().replace("/", " ")
    return name or USER


def subjects_named(
    sentence: str,
    known: Collection[str] = (),
    speaker: str | None = None,
    *,
    guess_names: bool = True,
) -> str:
    """Whom ``sentence`` is about: the person it names (a relation, one of ``known``,
    or with ``guess_names`` a name guessed from its opening), or whoever said it
    (``speaker``, when the turn names one; else the user)."""
    named = person_named(sentence, known, guess_names=guess_names)
    return speaker_subject(speaker) if named is None else named


def subject_asked(question: str) -> str:
    """Whom a question asks about: the person it names, else the user."""
    return person_asked(question) or USER


def base_attribute(slot: str) -> str:
    """A slot's attribute without its topic: "user/habit:coffee" -> "habit"."""
    return slot.split("/", 1)[-1].split(":", 1)[0]


def slot_of(sentence: str, known: Collection[str] = (), speaker: str | None = None) -> str | None:
    """The slot ``sentence`` states a value of, or None when it states no attribute."""
    said = sentence.strip()
    return _slot(said, person_named(said, known), speaker)


def slot_stated(
    text: str, known: Collection[str] = (), speaker: str | None = None
) -> tuple[str, str] | None:
    """The first slot ``text`` states a value of, and the sentence that states it."""
    return next(((slot, s) for slot, s in _slots(text, known, speaker) if slot), None)


def slots_of(text: str, known: Collection[str] = (), speaker: str | None = None) -> list[str]:
    """The slots of each statement of ``text``, in order, once each."""
    return list(dict.fromkeys(slot for slot, _ in _slots(text, known, speaker) if slot))


def _slots(
    text: str, known: Collection[str], speaker: str | None
) -> Iterator[tuple[str | None, str]]:
    """Each sentence of ``text`` with the slot it states (None: none), read as far as
    asked; its subject read with the sentences before it ("... her park" goes on about
    the one named before)."""
    said = [sentence.strip() for sentence in sentences(text)]
    for sentence, person in zip(said, persons_meant(said, known), strict=True):
        yield _slot(sentence, person, speaker), sentence


def _slot(sentence: str, person: str | None, speaker: str | None) -> str | None:
    """``subject/attribute`` of a sentence about ``person`` (None: the speaker), or None
    when it states no attribute."""
    attribute = attribute_stated(sentence)
    if attribute is None:
        return None
    return f"{speaker_subject(speaker) if person is None else person}/{attribute}"
