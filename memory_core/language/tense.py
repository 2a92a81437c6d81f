"""The cheap tense cues of English: whether a sentence tells of the past, whether a
clause has a verb of its own.

No tagger: a few lists (auxiliaries, irregular past forms, the words a past verb
follows) and regular expressions over a lower-cased sentence tell tense and
finiteness well enough for conversation.  The grammar of times asks them which way
a bare "Friday" points; the offline extractor, whether a statement is an event.
"""

from __future__ import annotations

import re

AUXILIARIES = frozenset(
    """
    am is are was were be been being 'm 're 's 've 'd 'll have has had do does did
    will would shall should can could may might must ought wo ca isn't aren't wasn't
    weren't haven't hasn't hadn't don't doesn't didn't won't wouldn't can't couldn't
    shouldn't mustn't
    """.split()
)

# Simple past forms only (not participles such as "torn" or "done", which are
# as often adjectives); forms shared with the present ("put", "read") are left out.
IRREGULAR_PAST = frozenset(
    """
    ate awoke became began bent bit bled blew broke brought built bought burnt caught
    chose came crept dealt did dove drew dreamt drank drove dug fed felt fell fled flew
    forgot forgave froze fought found got gave went grew hung had heard hid held kept
    knelt knew laid led leant leapt learnt left lent lay lit lost made meant met paid
    rode rang rose ran said saw sought sold sent shook shone shot showed shrank sang
    sank sat slept slid spoke sped spent spun spat split stood stole stuck stung stank
    strode struck swore swept swam swung took taught tore told thought threw understood
    woke wore wove wept won wound wrote was were
    """.split()
)

# "we adopted", "just booked", "mum booked": an -ed word after these is a past verb
# (elsewhere it is as often an adjective or a participle: "I'm supposed to", "fingers crossed").
_BE = frozenset("am is are be been being get gets getting have has".split())
_SUBJECTS = frozenset(
    "i we you he she they it who just also finally never already recently actually only then "
    "first accidentally totally mum mom dad".split()
)
_FUTURE = re.compile(
    r"\b(?:will|'ll|shall|gonna|going to|tomorrow|next|upcoming|coming|due|until|till"
    r"|starts?|starting|begins?|planning|plan to)\b"
)
_PAST_WORDS = re.compile(r"\b(?:ago|yesterday|last night|since|used to|'d been|had been)\b")
_WORD = re.compile(r"[a-z']+")
_PRESENT_S = re.compile(r"^[a-z]{2,}[^su]s$")
_SUBJECT_WORDS = 4  # "My sister Anna lives ...": how far in a present verb is looked for
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
