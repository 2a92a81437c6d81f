"""Cheap cues of tense, finiteness and subject in a lower-cased sentence.

No tagger: the closed word classes of :mod:`.lexicon` and a few regular expressions
tell tense, finiteness and who a sentence is about well enough for conversation.
"""

from __future__ import annotations

import re

from memory_core.language.lexicon import ADVERBS, AUXILIARIES, IRREGULAR_PAST, SUBJECT_PRONOUNS

# "we adopted", "just booked", "mum booked": an -ed word after these is a past verb
# (elsewhere it is as often an adjective or a participle: "I'm supposed to", "fingers crossed").
_BE = frozenset("am is are be been being get gets getting have has".split())
_SUBJECTS = frozenset(SUBJECT_PRONOUNS) | frozenset(
    "who just also finally never already recently actually only then first accidentally "
    "totally mum mom dad".split()
)

# Opening words that carry no content: "Yeah, ...", "Heads up, ...", "Haha ...".
DISCOURSE_MARKER = re.compile(
    r"^(?:(?:(?:yeah|yes|yep|yup|ok(?:ay)?|so|well|oh|ah|um+|uh+|hmm+|haha+|lol|ugh|anyway"
    r"|also|and|but|btw|fyi|ps|sorry|heads[ -]up|fun fact|quick one|update)\b|re:?\s[^:]{1,40}:)"
    r"[\s,!.:;-]*)+",
    re.IGNORECASE,
)

_FUTURE = re.compile(
    r"\b(?:will|'ll|shall|gonna|going to|tomorrow|next|upcoming|coming|due|until|till"
    r"|starts?|starting|begins?|planning|plan to)\b"
)
_PAST_WORDS = re.compile(r"\b(?:ago|yesterday|last night|since|used to|'d been|had been)\b")
_WORD = re.compile(r"[a-z']+")
_PRESENT_S = re.compile(r"^[a-z]{2,}[^su]s$")
_SUBJECT_WORDS = 4  # "My sister Anna lives ...": how far in a present verb is looked for
_SUBJECT = re.compile(rf"\b(?:{'|'.join(SUBJECT_PRONOUNS)})\b")
_NOT_VERBS = frozenset("this thus plus less hers ours yours theirs".split())
# Words after which an -s word is a plural noun ("two extractions", "the keys").
_NOUN_BEFORE = frozenset(
    "a an the my our your his her their its these those some any no two three "
    "four five six seven eight nine ten few many several all both".split()
)


def is_past(low: str) -> bool:
    """Whether a lower-cased sentence tells of the past (a past verb and no future cue)."""
    if _FUTURE.search(low):
        return False
    if _PAST_WORDS.search(low):
        return True
    words = _WORD.findall(low)
    for i, word in enumerate(words):
        before = words[i - 1] if i else ""
        if word in IRREGULAR_PAST and not _is_be_or_have(before):  # "is stuck", "I've got"
            return True
        if len(word) > 4 and word.endswith("ed") and (i == 0 or before in _SUBJECTS):
            return True
    return False


def _is_be_or_have(word: str) -> bool:
    """An irregular past after these is a participle of the present: "is stuck", "I've got"."""
    return word in _BE or word.endswith(("'m", "'re", "'s", "'ve"))


def has_finite_verb(low: str) -> bool:
    """Whether a lower-cased clause has a verb: an auxiliary, a contraction or a past form.

    A clause without one ("Third night this week.") is a fragment that continues
    the sentence before it.
    """
    words = _WORD.findall(low)
    for i, word in enumerate(words):
        before = words[i - 1] if i else ""
        if word in AUXILIARIES or "'" in word:
            return True
        if (word in IRREGULAR_PAST or (len(word) > 4 and word.endswith("ed"))) and (
            before not in _NOUN_BEFORE  # "my left knee", "the limited edition"
        ):
            return True
        if 1 <= i <= _SUBJECT_WORDS and _present_verb(word, before):
            return True
    return False


def _present_verb(word: str, before: str) -> bool:
    """ "Physio starts ...": an -s word right after a short subject, not after "the"."""
    return bool(_PRESENT_S.match(word)) and word not in _NOT_VERBS and before not in _NOUN_BEFORE


def has_subject_pronoun(low: str) -> bool:
    """Whether a lower-cased sentence has a personal pronoun that can be a subject."""
    return bool(_SUBJECT.search(low))


def starts_with_verb(low: str) -> bool:
    """Whether a lower-cased sentence opens with its verb, the speaker left unsaid
    ("booked the flights", "just finished the book", "flying out on Tuesday")."""
    words = low.split()
    while len(words) > 1 and (words[0] in ADVERBS or words[0] == "been"):
        words = words[1:]
    first = words[0].strip(".,;:!?\"'()") if words else ""
    return first in IRREGULAR_PAST or (len(first) > 4 and first.endswith(("ed", "ing")))
