"""Whom a statement or a question is about: a relation, a name, or whoever speaks.

"My sister Priya started at the bank" is about priya, "Dad's on warfarin" about
dad, "Rachel's pal Morag ..." about morag (the relation, not the one whose
relation it is); "Ines and I got married" and "We moved" are about the speaker.
Readers return None for the speaker (or the asker): who that is, the caller knows.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Sequence

from memory_core.language.lexicon import FIRST_PERSON, STOPWORDS, THIRD_PERSON

# Each relation and the other words for it.  In-laws are relations of their own, not
# the parent or sibling the word starts with.
_SAID_AS = {
    "mum": "mom mother mam mummy", "dad": "father daddy papa",
    "grandma": "gran nan grandmother nana nanna granny", "grandad": "grandpa grandfather",
    "friend": "buddy pal mate bestie", "colleague": "coworker co-worker teammate",
    "flatmate": "roommate housemate", "boss": "manager", "fiance": "fiancé fiancée fiancee",
    "aunt": "auntie", "neighbour": "neighbor", "stepmum": "stepmom", "landlord": "landlady",
    "children": "kids",
} | dict.fromkeys(
    """sister brother wife husband partner boyfriend girlfriend son daughter uncle cousin
    nephew niece stepdad classmate parents mother-in-law father-in-law sister-in-law
    brother-in-law son-in-law daughter-in-law""".split(),
    "",
)  # fmt: skip
# "my kid" is someone's; "a child" in a question is anyone's.
RELATIONS = {"kid": "child"} | {
    w: name for name, other in _SAID_AS.items() for w in (name, *other.split())
}
_REL = "|".join(sorted(RELATIONS, key=len, reverse=True))
_NAME = r"(?:,? ([A-Z][a-z]+(?:-[A-Z][a-z]+)?)\b)?"
# "my (best|older|...) sister(,) Priya": the relation, then perhaps a name.
_MY_RELATION = re.compile(
    rf"(?i:\b(?:my|our) (?:(?:best|older|younger|little|big|baby|eldest|oldest|youngest|twin|"
    rf"new|ex|step|elder|old|dear) )*({_REL})\b){_NAME}",
)
# Someone's relation, named early: "Rachel's pal Morag ...", "Dad's friend ...".
_THEIR_RELATION = re.compile(
    rf"^[A-Z][a-zé]+'s (?i:(?:best|older|younger|little|big|old|new) )?(?i:({_REL}))\b{_NAME}"
)
# A sentence opening on a relation word or a name: "Dad's ...", "Tom switched ...".
_OPENING = re.compile(r"^([A-Z][a-zé]+)(?:'s\b|\s)")
# A sentence-opening word is taken for a name when the next word is one of these.
_NAME_FOLLOWERS = frozenset(
    """is was has had 's got gets just still now finally started starts moved moves
    switched switches left leaves joined joins quit quits lives lived works worked took
    went decided told says said finished began begins changed changes swapped
    stopped stops dropped picked bought adopted became becomes turned upgraded
    downgraded landed accepted retired graduated broke split married proposed""".split()
)
# Said of the speaker with someone: "Ines and I ...", "me and my girlfriend ...".
_WITH_ME = re.compile(r"(?i:me|i) and \S|(?:[A-Z][a-zé]+)? and (?:I|me)\b")
_EARLY = 12  # characters into a sentence that its subject is named by
_WORD = re.compile(r"[a-z']+")


def person_named(
    sentence: str, known: Collection[str] = (), *, guess_names: bool = True
) -> str | None:
    """Whom ``sentence`` is about: a relation it opens on, a name, or None for the
    speaker.  A name is one of ``known`` or, with ``guess_names``, a capitalised
    opening word followed by a verb of the kind said of people ("Tom switched ...")."""
    said = sentence.strip()
    relation = _MY_RELATION.match(said)
    if _WITH_ME.match(said[relation.end() :] if relation else said):
        return None
    # The statement is about them when they are named early, as its subject.
    early = _MY_RELATION.search(said)
    named = early if early and early.start() <= _EARLY else _THEIR_RELATION.match(said)
    if named:
        return (named.group(2) or RELATIONS[named.group(1).lower()]).lower()
    opening = _OPENING.match(said)
    if opening is None:
        return None
    word = opening.group(1)
    low = word.lower()
    if low in RELATIONS:
        return RELATIONS[low]
    if low in known:
        return low
    rest = said[len(word) :]
    follower = rest.split()[0].lower() if rest.split() else ""
    guessed = (
        guess_names
        and low not in STOPWORDS
        and (rest.startswith("'s") or follower in _NAME_FOLLOWERS)
        and not low.endswith("s")
    )
    return low if guessed else None


def persons_meant(
    sentences: Sequence[str], known: Collection[str] = (), *, guess_names: bool = True
) -> Iterator[str | None]:
    """Whom each of ``sentences`` (one after another, as said) is about, as
    :func:`person_named` reads it, except that a sentence naming no one that speaks of
    "him" or "her" and not of the speaker goes on about the one the sentence before it
    was ("My colleague named her spaniel Biscuit. Half the dogs at her park are called
    Biscuit.": both about the colleague).  Read as far as asked."""
    before: str | None = None
    for sentence in sentences:
        named = person_named(sentence, known, guess_names=guess_names)
        if named is None and before is not None:
            said = set(_WORD.findall(sentence.lower()))
            if said & THIRD_PERSON and not said & FIRST_PERSON:
                named = before
        yield named
        before = named


def persons_named(text: str) -> set[str]:
    """The names ``text`` gives people by their relation ("my husband Greg": greg)."""
    return {m.group(2).lower() for m in _MY_RELATION.finditer(text) if m.group(2)}


def person_asked(question: str) -> str | None:
    """Whom a question asks about: a relation or name it holds ("where does my sister
    live", "is Tom still at Tesco"), else None for the asker."""
    if m := _MY_RELATION.search(question):
        return (m.group(2) or RELATIONS[m.group(1).lower()]).lower()
    for word in question.replace("?", " ").split()[1:]:
        bare = word.strip(",.!;:").removesuffix("'s")
        low = bare.lower()
        if bare[:1].isupper() and bare != "I" and low not in STOPWORDS:
            return RELATIONS.get(low, low)
        if low in RELATIONS:
            return RELATIONS[low]
    return None
