"""A request to keep something: "Please remember that I'm allergic to penicillin."

What is asked to be kept is the statement after the request, and it is the user's
most explicit word on what matters: :func:`asked_to_keep` takes the request off and
says that there was one, so the statement is read as any other and kept above the
protect threshold.  A sentence that is nothing but the request ("Please remember
that.") asks it of the statement before it (:func:`only_asks_to_keep`).

Requests phrased otherwise ("This one matters, my PIN changed") are the statements
model's ``keep`` judgement (:mod:`memory_core.language.reading`); this reads only
the opening words, which the statement must be freed of to read as a fact.
"""

from __future__ import annotations

import re

_POLITE = r"(?:(?:please|pls|plz|kindly|oh and|and|also|just|bot|@\w+)[\s,]+)*"
_ASK = (
    r"(?:(?:do |always )?remember|don'?t (?:ever )?(?:let me )?forget|do not forget"
    r"|never forget|note to self"
    r"|(?:make|take|keep) (?:a )?note(?: of)?|note(?: down)?|jot (?:this )?down"
    r"|keep in mind|bear in mind|save this|store this|log this"
    r"|for (?:the|your|future) (?:records?|reference)|for future reference)"
)
_OPENING = re.compile(
    rf"^{_POLITE}{_ASK}(?:\s+(?:this|that|the fact that|for (?:later|next time)))?"
    r"(?:\s*[:,;-]+\s*|\s+that\s+|\s+(?=\S))",
    re.IGNORECASE,
)
# "Please update what you know: ...", "Note to self (and you): ...": an opening clause
# about keeping, set off by a colon.
_KEEPING_CLAUSE = re.compile(
    rf"^{_POLITE}(?:remember|note|retain|update|save|store|record|keep|log|add)"
    r"\b[^:]{0,50}:\s+(?=\S)",
    re.IGNORECASE,
)
# "Please remember that.", "Don't forget it!", "note this pls"
_ALONE = re.compile(
    rf"^{_POLITE}{_ASK}(?:\s+(?:this|that|it|this one|all (?:of )?that))?"
    r"(?:[\s,]+(?:please|pls|plz|ok(?:ay)?|thanks?))*[\s.!]*$",
    re.IGNORECASE,
)
# "Remember when we ...?" recalls; "remember to ..." is a reminder, not a fact.
_NOT_A_REQUEST = re.compile(r"^(?:when|how|what|who|where|why|if|whether|to)\b", re.IGNORECASE)


def asked_to_keep(sentence: str) -> tuple[str, bool]:
    """The sentence without an opening request to keep it, and whether it had one."""
    m = _KEEPING_CLAUSE.match(sentence) or _OPENING.match(sentence)
    if m is None:
        return sentence, False
    rest = sentence[m.end() :].strip()
    if not rest or _NOT_A_REQUEST.match(rest) or _ALONE.match(sentence):
        return sentence, False
    return rest[0].upper() + rest[1:], True


def only_asks_to_keep(sentence: str) -> bool:
    """Whether the sentence is a request to keep what was just said, and no more."""
    return _ALONE.match(sentence.strip()) is not None
