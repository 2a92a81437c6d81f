"""What makes a sentence stand on its own: statements, fragments, pronouns, shorthand.

* :func:`statement` strips greetings and discourse markers ("Yeah, ...",
  "Heads up, ...") and a trailing question tag ("..., any tips?"), and turns
  away questions, requests to the assistant and hypotheticals;
  :func:`kept_statement` also says whether the user asked for it to be kept;
* :func:`is_fragment` tells a verbless sentence ("Third night this week.")
  that continues the one before it;
* :func:`resolve_pronouns` names who a sentence-initial "he" or "she" is
  ("She's vegan." after "My sister Marta is coming." -> "Marta's vegan.");
* :func:`expand_shorthand` writes chat shorthand out ("7 y.o." -> "7-year-old").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory_core.language.grammar import (
    DISCOURSE_MARKER,
    has_finite_verb,
    has_subject_pronoun,
    starts_with_verb,
)
from memory_core.language.keeping import asked_to_keep
from memory_core.language.lexicon import KIN_AND_ROLES, MONTHS, WEEKDAYS

_GREETING = re.compile(
    r"^(?:(?:(?:hey|hi|hello) there|hi|hello|hey|good (?:morning|afternoon|evening)|morning"
    r"|dear \w+)\b[\s,!.:;-]*|(?:thanks|thank you)(?: a lot| so much)?\s*[,!.:;-]+\s*)+",
    re.IGNORECASE,
)
# "..., any tricks?" after a statement: the statement stands, the tag asks for help.
_QUESTION_TAG = re.compile(
    r",\s*(?:any\s+\w+(?:\s+\w+)?|thoughts|ideas|suggestions|advice|tips|right|ok(?:ay)?"
    r"|you know|what do you think|how about you)\s*\?+$",
    re.IGNORECASE,
)
_TRAILING_MARKERS = frozenset("btw tbh lol haha imo fyi ugh ouch".split())
_TRAILING_MARKER = re.compile(
    r",?\s+(?:btw|tbh|lol|haha|imo|fyi|ugh|ouch)\b(?=[\s.!?]*$)", re.IGNORECASE
)
_REQUEST = re.compile(
    r"^(?:(?:can|could|would|will) you|please|pls|give me|tell me|show me|help me|explain"
    r"|suggest|recommend|list|write|describe|summari[sz]e|translate|let me know)\b",
    re.IGNORECASE,
)
# "Please remind me ...": the request is for something to be kept, so it is kept.
_POLITE_REMINDER = re.compile(
    r"^(?:please|pls|plz)\s+(?=remind me\b|don'?t let me forget\b)", re.IGNORECASE
)
_HYPOTHETICAL = re.compile(
    r"^(?:if\b.*\b(?:could|would|'d|were)\b|what if\b|imagine\b|i wish\b)", re.IGNORECASE
)
# A question without its mark: "how do I get red wine out of a carpet".
_INTERROGATIVE = re.compile(
    r"^(?:who|what|when|where|why|how|which|is it|are there|do you|does|did you|should i)\b",
    re.IGNORECASE,
)
_REFERS_BACK = re.compile(
    r"(?:(?:her|his|its|their)\s+names?\b"
    r"|(?:(?:if|when|once|because|though|although|and|but|so)\s+)?(?:it|that|this|they)\b"
    r"(?!\s+(?:is|are|was|were)\s+(?:a|an|no|some|many|lots|plenty)\b)"
    r"|\w+(?:ed|en|ing)?\s+(?:there|it|that|them)\b(?=\s*(?:since|for|until|till|[.!]|$)))",
    re.IGNORECASE,
)
_RELATIVE_CLAUSE = re.compile(r",?\s+(?:which|who|where|because|since|so that)\b")

_SHORTHAND = (
    (re.compile(r"\b(\d+)[\s-]*y\.?\s?o\.?(?=[\s,;)]|$)", re.IGNORECASE), r"\1-year-old"),
    (re.compile(r"\byrs\b", re.IGNORECASE), "years"),
    (re.compile(r"\bhrs\b", re.IGNORECASE), "hours"),
    (re.compile(r"\bmins\b", re.IGNORECASE), "minutes"),
    (re.compile(r"\bwks\b", re.IGNORECASE), "weeks"),
    (re.compile(r"\bappt\b", re.IGNORECASE), "appointment"),
    (re.compile(r"\bw/o\b", re.IGNORECASE), "without"),
    (re.compile(r"\bw/(?=\s)", re.IGNORECASE), "with"),
    # Shorthand and the usual misspellings: "tmrw", "tommorow", "tomorow".
    (re.compile(r"\b(?:tmrw|tmr|tmrrw|tom+or+ow)\b", re.IGNORECASE), "tomorrow"),
    (re.compile(r"\bb/c\b", re.IGNORECASE), "because"),
    (re.compile(r"\bbday\b", re.IGNORECASE), "birthday"),
)

_ANY_SHORTHAND = re.compile(r"\d\s*y\.?\s?o\b|yrs|hrs|mins|wks|appt|w/|tmr|tom+or+ow|b/c|bday")

# Who "he" and "she" may stand for, in the order a reader looks: a titled name,
# a named relation ("my sister Marta", "our cat Miso"), "her name's Pickle",
# a relation without a name ("my son", "Mum"), any other name.
_TITLED = r"\b(?:Dr|Mr|Mrs|Ms|Miss|Prof)\.?\s+(?:[A-Z]\.\s*)*[A-Z][\w'-]+(?:\s+[A-Z][\w-]+)*"
_KIN = "|".join(sorted(KIN_AND_ROLES, key=len, reverse=True))
_MENTION = re.compile(
    rf"(?P<titled>{_TITLED})"
    rf"|\b(?:[Mm]y|[Oo]ur)\s+(?:\w+\s+)?(?:{_KIN})\b,?\s+"
    rf"(?P<named>{_TITLED}|[A-Z][\w-]+(?:\s+[A-Z][\w-]+)?)"
    r"|\b(?:named|called|name's|name is)\s+(?P<called>[A-Z][\w-]+)"
    rf"|(?P<relation>\b(?:[Mm]y|[Oo]ur)\s+(?:{_KIN})\b|^(?:{_KIN.title()})\b)"
    r"|(?<=[a-z,] )(?P<name>[A-Z][a-z][\w-]*(?:\s+[A-Z][\w-]+)*)"
)
_SUBJECT_PRONOUN = re.compile(
    r"(?:^|(?<=[,;:] )|(?<=\band )|(?<=\bbut )|(?<=\bso ))(?P<pronoun>[Hh]e|[Ss]he)\b(?=['\s])"
)
_HE_OR_SHE = re.compile(r"\b(?:he|she)\b", re.IGNORECASE)
_AGE = re.compile(
    r"\b(?:[Hh]e|[Ss]he)(?:'s|\s+is|\s+was|\s+turned|\s+turns)\s+\d{1,3}\b"
    r"(?![.,:]\d)(?=\s*(?:[,.;!?)]|$|(?:and|but|now|next|this|in|on)\b))"
)
_MALE = frozenset(
    "son brother dad father husband boyfriend grandad granddad grandpa uncle nephew".split()
)
_FEMALE = frozenset(
    "daughter sister mum mom mother mam wife girlfriend grandma grandmother granny gran nan "
    "nana aunt auntie niece".split()
)
_NOT_NAMES = frozenset(
    [m.capitalize() for m in MONTHS] + [d.capitalize() for d in WEEKDAYS] + ["I", "OK", "Ok"]
)
# "Jon, ...": a capitalised word set off by a comma at the opening.
_VOCATIVE = re.compile(r"^([A-Z][a-z]{1,14}),\s+(?=[a-z]|I\b)")
_NOT_VOCATIVES = frozenset(
    """yesterday today tonight tomorrow now then later earlier recently lately sometimes
    overall instead afterwards anyway besides meanwhile otherwise however therefore also
    plus first second third next last finally again still yes yeah no nope okay ok well
    so oh wow man dude guys look listen see right sure true alright please sadly""".split()
)
_APPOSITIVE_WORDS = 4  # a comma this soon after the opening name sets off an appositive
_PLACE_PREPOSITIONS = frozenset("in at to from into near around through via".split())
_LOOK_BACK = 3  # sentences searched for who a pronoun means


def statement(sentence: str) -> str | None:
    """The sentence as a statement without greetings and markers, or None if it is not one."""
    return kept_statement(sentence)[0]


def kept_statement(sentence: str) -> tuple[str | None, bool]:
    """The sentence as a statement (or None, as :func:`statement`), and whether the
    user asked for it to be kept ("Please remember that I'm allergic to penicillin.":
    the statement is "I'm allergic to penicillin.")."""
    text = _without_vocative(DISCOURSE_MARKER.sub("", _GREETING.sub("", sentence)).strip())
    text, asked = asked_to_keep(text)
    return _as_statement(text), asked


def _as_statement(text: str) -> str | None:
    text = _POLITE_REMINDER.sub("", text)  # a reminder asked for is the user's to keep
    last = text.rsplit(maxsplit=1)[-1].strip(".!?").lower() if text else ""
    if last in _TRAILING_MARKERS:
        text = _TRAILING_MARKER.sub("", text)
    if text.endswith("?"):
        tag = _QUESTION_TAG.search(text)
        if tag is None or _INTERROGATIVE.match(text):
            return None
        text = text[: tag.start()] + "."
    if not text or _REQUEST.match(text) or _HYPOTHETICAL.match(text):
        return None
    if _INTERROGATIVE.match(text) and not text.endswith("."):
        return None
    return text[0].upper() + text[1:]


def _without_vocative(text: str) -> str:
    """The sentence without the name of the one spoken to opening it ("Jon, my store
    has been a roller coaster" says "my store has been a roller coaster").  An
    opening word that is a time ("Yesterday, ..."), an adverb ("Honestly, ...") or a
    subject set off by an appositive ("Sarah, my sister, moved") stays."""
    m = _VOCATIVE.match(text)
    if m is None:
        return text
    word, rest = m.group(1), text[m.end() :]
    if (
        word in _NOT_NAMES
        or word.lower() in _NOT_VOCATIVES
        or word.endswith("ly")
        or "," in " ".join(rest.split()[:_APPOSITIVE_WORDS])
    ):
        return text
    return rest


def is_fragment(sentence: str) -> bool:
    """Whether the sentence's main clause has no verb ("Shoulder surgery on the 10th.")."""
    low = sentence.lower()
    if has_subject_pronoun(low) or starts_with_verb(low):  # "I ...", "Booked the ..."
        return False
    main = _RELATIVE_CLAUSE.split(low, maxsplit=1)[0]
    return bool(main.strip()) and not has_finite_verb(main)


def refers_back(sentence: str) -> bool:
    """Whether the sentence only makes sense with the one before it: it names what that
    one told of ("Her name's Pickle."), its subject points back ("It's the best part
    of my week.", "Been there since 2019.", "If it comes through I start in Jan."), or
    it leaves out the thing it speaks of ("Eyeing the Cardiff one next.", "I'd been on
    50 mg since March.")."""
    return bool(
        _REFERS_BACK.match(sentence)
        or _LEFT_OUT.search(sentence)
        or (_OBJECT_POINTS_BACK.search(sentence) and not _names_anything(sentence))
    )


def _names_anything(sentence: str) -> bool:
    """Whether a capitalised word past the first names something (not a day or month)."""
    return any(
        w[:1].isupper() and w != "I" and w.lower().strip(".,;:!?") not in _TIMES
        for w in sentence.split()[1:]
    )


# What was done to the thing just named, naming nothing of its own ("I have to let
# them know by Friday.").
_OBJECT_POINTS_BACK = re.compile(r"(?<=[a-z] )(?:them|it)\b(?!'s| (?:is|was|are|were)\b)")
_TIMES = frozenset(MONTHS) | frozenset(WEEKDAYS)
# One more of what was just named ("the Cardiff one"), an amount of it ("on 50 mg").
_LEFT_OUT = re.compile(
    r"\bthe (?:[\w-]+ )?ones?\b(?! (?:of|who|that|which|i|we|you)\b)"
    r"|\b(?:on|at|to|from) \d+(?:[.,]\d+)?\s*(?:mg|mcg|ml|units?)\b",
    re.IGNORECASE,
)


def expand_shorthand(sentence: str) -> str:
    """Chat shorthand written out, so facts read plainly ("appt w/ Dr. Fenwick")."""
    if not _ANY_SHORTHAND.search(sentence.lower()):
        return sentence
    for pattern, replacement in _SHORTHAND:
        sentence = pattern.sub(replacement, sentence)
    return sentence


def resolve_pronouns(sentence: str, history: Sequence[str]) -> tuple[str, bool]:
    """A subject "he"/"she" replaced by whom it means, and whether any was.

    The antecedent is the first person-like mention in the nearest text before
    the pronoun: the sentence so far, then up to three sentences back.  A bare
    number said of a person is an age ("she's 4" -> "Pickle's 4 years old").
    """
    if not _HE_OR_SHE.search(sentence):
        return sentence, False
    sentence = _AGE.sub(r"\g<0> years old", sentence)
    resolved = False
    while m := _SUBJECT_PRONOUN.search(sentence):
        male = m["pronoun"].lower() == "he"
        texts = [sentence[: m.start()], *reversed(history[-_LOOK_BACK:])]
        who = next((w for t in texts if (w := _first_mention(t, male))), None)
        if who is None:
            break
        if m.start() == 0:
            who = who[0].upper() + who[1:]
        sentence = sentence[: m.start()] + who + sentence[m.end() :]
        resolved = True
    return sentence, resolved


def _first_mention(text: str, male: bool) -> str | None:
    for m in _MENTION.finditer(text):
        if m["titled"] or m["called"]:
            return m["titled"] or m["called"]
        if m["named"]:
            return m["named"]
        if m["relation"]:
            kin = m["relation"].split()[-1].lower()
            if kin in (_FEMALE if male else _MALE):
                continue  # "she" is not "my son"
            return m["relation"]
        name = m["name"]
        before = text[: m.start()].split()
        if name in _NOT_NAMES or (before and before[-1].lower() in _PLACE_PREPOSITIONS):
            continue
        return name
    return None
