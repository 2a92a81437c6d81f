"""Closed word classes of English the offline extractor reads: kinship and role nouns,
titles, discourse markers, and whether a sentence opens with its verb.

Its tense cues are :mod:`memory_core.language.tense`'s.
"""

from __future__ import annotations

import re

from memory_core.language.tense import IRREGULAR_PAST

KIN_AND_ROLES = frozenset(
    """
    mum mom mother mam dad father parents sister brother sibling son daughter kid kids
    child children baby wife husband partner spouse boyfriend girlfriend fiance fiancee
    grandma grandmother granny gran nan nana grandad granddad grandpa grandfather
    grandson granddaughter aunt auntie uncle cousin niece nephew friend bestie boss
    manager colleague coworker flatmate roommate housemate neighbour neighbor landlord
    landlady doctor gp therapist dentist accountant lawyer teacher tutor coach mentor
    cat dog puppy kitten pet horse rabbit hamster lead
    """.split()
)

TITLES = frozenset("dr mr mrs ms miss prof sir dame".split())

# Opening words that carry no content: "Yeah, ...", "Heads up, ...", "Haha ...".
DISCOURSE_MARKER = re.compile(
    r"^(?:(?:(?:yeah|yes|yep|yup|ok(?:ay)?|so|well|oh|ah|um+|uh+|hmm+|haha+|lol|ugh|anyway"
    r"|also|and|but|btw|fyi|ps|sorry|heads[ -]up|fun fact|quick one|update)\b|re:?\s[^:]{1,40}:)"
    r"[\s,!.:;-]*)+",
    re.IGNORECASE,
)

_OPENING_ADVERBS = frozenset(
    "just finally already still currently recently also been never".split()
)
_SUBJECT = re.compile(r"\b(?:i|we|you|he|she|they|it)\b")


def has_subject_pronoun(low: str) -> bool:
    """Whether a lower-cased sentence has a personal pronoun that can be a subject."""
    return bool(_SUBJECT.search(low))


def starts_with_verb(low: str) -> bool:
    """Whether a lower-cased sentence opens with its verb, the speaker left unsaid
    ("booked the flights", "just finished the book", "flying out on Tuesday")."""
    words = low.split()
    while len(words) > 1 and words[0] in _OPENING_ADVERBS:
        words = words[1:]
    first = words[0].strip(".,;:!?\"'()") if words else ""
    return first in IRREGULAR_PAST or (len(first) > 4 and first.endswith(("ed", "ing")))
