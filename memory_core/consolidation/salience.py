"""Salience: what decay alone may never forget, and what it forgets first.

Forgetting is by salience, not by age alone.  A trace's text is read for

* *durable* facts -- identity, health, relationships (a person named),
  dates and anniversaries, commitments, preferences, what the user asked to
  keep, news told in capitals -- which are never proposed for pruning by
  decay alone (only a person deletes them);
* *small talk* -- greetings, thanks, acknowledgements, goodbyes, a short
  reply to them -- which decays fastest.

Everything else decays over a horizon that importance and type stretch or
shorten.  Each answer says why, for the proposal a person reads; a rejected
proposal pins the trace.  The cues themselves are :mod:`memory_core.language.salience`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memory_core import language
from memory_core.consolidation.analysis import SPEAKER_LABEL
from memory_core.language import salience as cues
from memory_core.language.lexicon import MONTH_NUMBERS
from memory_core.language.reading import read_statements, surely_sociable

_DURABLE = cues.durable_cues(MONTH_NUMBERS)
# Capitalised words that name no one, months among them.
_NOT_NAMES = cues.NOT_NAMES | frozenset(MONTH_NUMBERS)
# Tags by which a caller asks for a trace to be kept.
LIKES = "likes"
KEEP_TAGS = frozenset({"keep", "pinned", "remember", "important"})

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_SPEAKER = re.compile(r"^(user|assistant):\s*", re.IGNORECASE | re.MULTILINE)
MAX_SMALLTALK_WORDS = 25
MAX_SMALLTALK_REPLY_WORDS = 14
SMALLTALK_OTHER_WORDS = 1


@dataclass(frozen=True)
class Salience:
    """What a trace's text shows: a durable kind (never pruned by decay), or small talk."""

    durable: str | None
    cue: str | None
    smalltalk: bool

    @property
    def why(self) -> str:
        if self.durable is not None:
            return f"durable ({self.durable}: {self.cue!r})"
        return "small talk" if self.smalltalk else "ordinary"


def _parts(text: str) -> tuple[str, str]:
    """The user's and the assistant's part of a turn, without the speakers' labels
    ("User: Caroline: Thanks!" says "Thanks!"); the whole text as the user's otherwise."""
    if not _SPEAKER.match(text):
        return SPEAKER_LABEL.sub("", text), ""
    user: list[str] = []
    assistant: list[str] = []
    current = user
    for chunk in re.split(r"\n\s*\n", text):
        match = _SPEAKER.match(chunk)
        if match:
            current = user if match.group(1).lower() == "user" else assistant
        current.append(SPEAKER_LABEL.sub("", chunk[match.end() :] if match else chunk))
    return "\n".join(user), "\n".join(assistant)


def is_smalltalk(text: str, *, limit: int = MAX_SMALLTALK_WORDS) -> bool:
    """Greeting, thanks, acknowledgement and encouragement words, names said to the other
    person, and at most one other word: nothing a person would want recalled."""
    raw = re.findall(r"[^\W\d_][\w']*|\d", text.replace("’", "'"))
    if not raw:
        return bool(text.strip())  # ":)", "!!"
    if len(raw) > limit or any(w.isdigit() for w in raw):
        return False
    other = 0
    for word in raw:
        low = word.lower().split("'")[0]
        if low in cues.SMALLTALK or (word[:1].isupper() and cues.addresses(text, word)):
            continue
        if low in cues.NOT_SMALLTALK or word[:1].isupper():
            return False
        other += 1
    # A question about something ("What got you into running?") asks for a fact.
    return other <= SMALLTALK_OTHER_WORDS and not (other and "?" in text)


@lru_cache(maxsize=65_536)
def salience(text: str) -> Salience:
    """Read a trace's text for durable facts and small talk."""
    low = text.lower().replace("’", "'")
    for kind, pattern in _DURABLE.items():
        found = pattern.search(low)
        if found is not None:
            return Salience(kind, found.group(0).strip(), smalltalk=False)
    user, assistant = _parts(text)
    if bool(user.strip()) and is_smalltalk(user) and _quiet(assistant) and _sociable(user):
        return Salience(None, None, smalltalk=True)
    name = _named(user)
    if name is not None:
        return Salience("relationship", name, smalltalk=False)
    liked = _preference(user)
    if liked is not None:
        return Salience("preference", liked, smalltalk=False)
    shout = _EMPHASIS.search(user)
    if shout is not None:
        return Salience("emphasis", shout.group(0), smalltalk=False)
    return Salience(None, None, smalltalk=False)


def _preference(said: str) -> str | None:
    """The first sentence whose likeliest reading by the statements model is a
    preference (likes or dislikes, habits of taste: "I really don't like phone calls",
    "Shorter races suit me better"); None without a shipped model.  However unsure:
    a preference decayed away is lost, a sentence kept that was none costs little (of
    the held-out statements' preferences, 0.805 kept against 0.732 when it had to be
    sure, at the cost of 8 of 543 sentences kept that state none)."""
    parts = language.sentences(said)
    read = read_statements(parts) if parts else None
    for sentence, statement in zip(parts, read or [], strict=False):
        if statement.attribute == LIKES:
            return sentence.strip()
    return None


def _sociable(said: str) -> bool:
    """Whether the statements model, too, reads every sentence as only sociable (True
    without a shipped model): words of thanks and warmth can carry what someone told
    ("Thanks, Caroline. They're a real support." -- how she feels about her family)."""
    sociable = surely_sociable(language.sentences(said))
    return sociable is None or all(sociable)


def _quiet(assistant: str) -> bool:
    """Whether the assistant's part of a turn adds nothing: none, small talk, or a short
    line without numbers."""
    return not assistant.strip() or (
        is_smalltalk(assistant, limit=MAX_SMALLTALK_REPLY_WORDS)
        or (len(_WORD.findall(assistant.lower())) <= MAX_SMALLTALK_REPLY_WORDS
            and not re.search(r"\d", assistant))
    )  # fmt: skip


def may_be_phatic(text: str, previous: str | None = None) -> bool:
    """Whether a turn is one the phatic judgement may be asked about: ordinary to the word
    rules (no durable cue, no name, not already small talk), without a number, at most
    ``MAX_PHATIC_WORDS`` words from the user, a quiet assistant, no sentence in which
    the speaker tells of themselves beyond a social formula ("I'm lucky to have people
    who are always there for me" is about the speaker; "I appreciate it" is not), and
    not the reply to a question about something (``previous``, the turn before it in
    its conversation, asking "What genre is it?" makes "A mix of drama and romance!"
    an answer; "How's it going?" asks nothing)."""
    if previous is not None and asks_something(previous):
        return False
    found = salience(text)
    if found.durable is not None or found.smalltalk or re.search(r"\d", text):
        return False
    user, assistant = _parts(text)
    if not user.strip() or len(_WORD.findall(user.lower())) > MAX_PHATIC_WORDS:
        return False
    return _quiet(assistant) and not any(_of_self(s) for s in sentences(user))


def asks_something(text: str) -> bool:
    """Whether a turn asks a question that is not small talk ("What's it about?" asks
    something; "How's it going?" and "What about you?" do not)."""
    return any(
        s.endswith("?") and not cues.SMALLTALK_QUESTION.search(s.lower().replace("’", "'"))
        for s in sentences(text)
    )


def _of_self(sentence: str) -> bool:
    low = sentence.lower().replace("’", "'")
    sociable = is_smalltalk(sentence) and _sociable(sentence)
    return bool(cues.SELF.search(low)) and not cues.SOCIAL.search(low) and not sociable


def sentences(text: str) -> list[str]:
    """A turn's sentences without the speakers' labels ("User: Gina: Thanks!" says
    "Thanks!"), a shared photo's caption one of its own; the whole text when it has none."""
    bare = SPEAKER_LABEL.sub("", _SPEAKER.sub("", text))
    found = [s for s in language.sentences(cues.PHOTO.sub("\n", bare)) if s.strip(" .")]
    return found or [bare.strip()]


MAX_PHATIC_WORDS = 80

# Words in capitals, two or more: news told with emphasis ("I GOT THE JOB").
_EMPHASIS = re.compile(r"\b[A-Z]{2,}\b[\s,.!]+\b[A-Z]{2,}\b")


def _named(text: str) -> str | None:
    """A person or place the text names: a capitalised word inside a sentence
    ("lunch with Priya"), or a name's possessive opening one ("Dev's parents")."""
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text.strip()):
        words = re.findall(r"[^\W\d_][\w']*", sentence)
        for k, word in enumerate(words):
            low = word.lower()
            if low in _NOT_NAMES or low.split("'")[0] in _NOT_NAMES:
                continue
            if not word[:1].isupper() or word.isupper():
                continue
            if cues.addresses(sentence, word.split("'")[0]):
                continue
            if k > 0 or (word.endswith("'s") and len(words) > 1):
                return str(word)
    return None
