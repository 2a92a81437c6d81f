"""Reading a memory's text: its numbers, times, polarity, names, roles and content words.

:func:`analyse` reads a text once (cached) into an :class:`Analysis` the merge
verifier compares; typos are matched by edit distance (rapidfuzz's optimal
string alignment: an adjacent swap counts one edit).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz.distance import OSA

from memory_core import language
from memory_core.language.lexicon import (
    AMBIGUOUS_MONTHS,
    AMBIGUOUS_WEEKDAYS,
    DAY_KINDS,
    FILLER,
    MONTH_NUMBERS,
    NEGATORS,
    NUMBER_WORDS,
    PERIODS,
    RELATIVE_TIMES,
    ROLES,
    SPELLING,
    STOPPING,
    TIME_QUALIFIERS,
    UNITS,
    WEEKDAY_NUMBERS,
)
from memory_core.textutil import stem

_TOKEN = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?|\d+(?:[.,:]\d+)*(?:st|nd|rd|th|am|pm|k)?|[$€£%]")


@dataclass(frozen=True)
class _Token:
    raw: str  # as written
    word: str  # lower-cased, spelling-normalised
    initial: bool  # first word of a sentence


@dataclass(frozen=True)
class Analysis:
    """What the verifier reads from one text."""

    numbers: Counter[str]
    units: frozenset[str]
    times: Counter[str]
    negations: int
    names: frozenset[str]
    roles: frozenset[str]
    content: frozenset[str]  # stems of content words
    sequence: tuple[tuple[str, str], ...]  # (stem, word) of content words in order
    surface: dict[str, str]  # stem -> a word as written, for similarity look-ups


# "User: ", "Assistant: ", "Melanie: " opening a paragraph: who speaks, not what is said.
SPEAKER_LABEL = re.compile(r"^(?:[A-Z][\w'-]*(?: [A-Z][\w'-]*)?: )+", re.MULTILINE)


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    for sentence in language.sentences(SPEAKER_LABEL.sub("", text)):
        raw = _TOKEN.findall(sentence.replace("’", "'"))
        for k, tok in enumerate(raw):
            low = tok.lower()
            if low.endswith("n't"):
                out.append(_Token(tok, low[:-3] or low, k == 0))
                out.append(_Token("not", "not", False))
                continue
            low = low.split("'")[0] if "'" in low and not low.endswith("'s") else low
            if low.endswith("'s"):
                low = low[:-2]
            word = SPELLING.get(low, low)
            out.append(_Token(tok, word, k == 0))
    return out


def _number(word: str) -> str | None:
    if word[:1].isdigit():
        core = re.sub(r"(st|nd|rd|th|am|pm|k)$", "", word)
        core = core.replace(",", "")
        if ":" in core:
            return None  # a clock time
        try:
            value = float(core)
        except ValueError:
            return None
        if word.endswith("k"):
            value *= 1000
        return f"{value:g}"
    if word in NUMBER_WORDS:
        return f"{NUMBER_WORDS[word]:g}"
    return None


def _time(tok: _Token, nxt: _Token | None, prev: _Token | None) -> str | None:
    word = tok.word
    if re.fullmatch(r"\d{1,2}(:\d\d)?(am|pm)|\d{1,2}:\d\d", word):
        return "clock:" + word
    if nxt is not None and word[:1].isdigit() and nxt.word in ("am", "pm", "oclock"):
        return f"clock:{word}{nxt.word}"
    if word in WEEKDAY_NUMBERS:
        if word in AMBIGUOUS_WEEKDAYS and not tok.raw[:1].isupper():
            return None
        return f"weekday:{WEEKDAY_NUMBERS[word]}"
    if word in DAY_KINDS:
        return f"weekday:{DAY_KINDS[word]}"
    if word in MONTH_NUMBERS:
        near_number = any(t is not None and t.word[:1].isdigit() for t in (nxt, prev))
        if word in AMBIGUOUS_MONTHS and not near_number and not tok.raw[:1].isupper():
            return None
        if word in AMBIGUOUS_MONTHS and tok.initial and not near_number:
            return None
        return f"month:{MONTH_NUMBERS[word]}"
    if word in RELATIVE_TIMES:
        return "rel:" + RELATIVE_TIMES[word]
    if word in PERIODS and prev is not None and prev.word in TIME_QUALIFIERS:
        return "period:" + word  # "last month", "next week"
    return None


@lru_cache(maxsize=16_384)
def analyse(text: str) -> Analysis:
    """Read numbers, times, polarity, names, roles and content words from a text."""
    toks = _tokens(text)
    numbers: Counter[str] = Counter()
    times: Counter[str] = Counter()
    units: set[str] = set()
    names: set[str] = set()
    roles: set[str] = set()
    content: set[str] = set()
    surface: dict[str, str] = {}
    sequence: list[tuple[str, str]] = []
    negations = 0
    for k, tok in enumerate(toks):
        word = tok.word
        nxt = toks[k + 1] if k + 1 < len(toks) else None
        prev = toks[k - 1] if k else None
        when = _time(tok, nxt, prev)
        if when is not None:
            # "last week" and "next week" differ; the qualifier belongs to the time
            qualifier = prev.word if prev is not None and prev.word in TIME_QUALIFIERS else ""
            times[f"{qualifier}{when}"] += 1
            continue
        if word in ("am", "pm", "oclock") and prev is not None and prev.word[:1].isdigit():
            continue
        number = _number(word)
        if number is not None and not (word == "one" and not _number_context(nxt)):
            if re.fullmatch(r"(19|20)\d\d", word):
                times[f"year:{word}"] += 1
            else:
                numbers[number] += 1
            continue
        if word in UNITS:
            units.add(stem(word.rstrip("s")) if len(word) > 3 else word)
        if word in NEGATORS or word == "not":
            negations += 1
            continue
        if word in STOPPING:
            if word != "gave" or (nxt is not None and nxt.word == "up"):
                negations += 1
            continue
        role = _role(word)
        if role is not None:
            roles.add(role)
            sequence.append(("role:" + role, word))
            continue
        if _is_name(tok, nxt):
            names.add(word)
        if word in FILLER or len(word) < 2:
            continue
        s = stem(word)
        sequence.append((s, word))
        content.add(s)
        surface.setdefault(s, word)
    return Analysis(
        numbers=numbers,
        units=frozenset(units),
        times=times,
        negations=negations,
        names=frozenset(names),
        roles=frozenset(roles),
        content=frozenset(content),
        sequence=tuple(sequence),
        surface=surface,
    )


_ROLE_STEMS = {stem(k): v for k, v in ROLES.items()}
_LONG_ROLES: dict[str, list[str]] = {}
for _k in ROLES:
    if len(_k) >= 5:
        _LONG_ROLES.setdefault(_k[0], []).append(_k)


@lru_cache(maxsize=65_536)
def _role(word: str) -> str | None:
    """The role a word names, allowing for a plural, a dropped apostrophe or a typo."""
    if word in ROLES:
        return ROLES[word]
    found = _ROLE_STEMS.get(stem(word))
    if found is not None or len(word) < 5:
        return found
    # a mistyped role keeps its first letter (typos there are rare): a few candidates
    return next((ROLES[k] for k in _LONG_ROLES.get(word[0], []) if typo_match(k, word)), None)


def _number_context(nxt: _Token | None) -> bool:
    """ "one" is a number before a unit or a noun-like word, not in "the red one"."""
    return nxt is not None and nxt.word not in FILLER and nxt.word not in ("of",)


def _is_name(tok: _Token, nxt: _Token | None) -> bool:
    """A capitalised word inside a sentence, or one opening it that reads as a name."""
    if not tok.raw[:1].isupper() or tok.word in FILLER or len(tok.word) < 2:
        return False
    return not tok.initial or _looks_like_name(tok, nxt)


def _looks_like_name(tok: _Token, nxt: _Token | None) -> bool:
    """A capitalised first word that is a name: "Anna lives in Rome", "Dr. Patel ..."."""
    if tok.word in FILLER or tok.word in ROLES:
        return False
    return tok.raw.isupper() is False and nxt is not None and nxt.raw[:1].isupper()


@lru_cache(maxsize=262_144)
def typo_match(a: str, b: str) -> bool:
    """Whether two stems are one word mistyped: a small edit distance for their length."""
    if a == b:
        return True
    if min(len(a), len(b)) < 4 or abs(len(a) - len(b)) > 2:
        return False
    limit = 1 if max(len(a), len(b)) < 7 else 2
    return bool(OSA.distance(a, b, score_cutoff=limit) <= limit)


def unmatched(mine: frozenset[str], theirs: frozenset[str]) -> set[str]:
    return {w for w in mine if not any(typo_match(w, o) for o in theirs)}


def unmatched_words(mine: Analysis, theirs: Analysis) -> set[str]:
    """Content stems of ``mine`` the other text lacks, even allowing for a typo in
    either the stem or the word as written ("quarterly" / "quartely")."""
    words = set(theirs.surface.values())
    return {
        s
        for s in unmatched(mine.content, theirs.content)
        if not any(typo_match(mine.surface.get(s, s), w) for w in words)
    }


def fuzzy_names(a: frozenset[str], b: frozenset[str]) -> tuple[set[str], set[str]]:
    return unmatched(a, b), unmatched(b, a)
