"""The one sentence splitter: it keeps "Dr. Okafor", "Ursula K. Le Guin" and "7 a.m." whole.

Every reader of sentences asks :func:`sentences` (the offline extractor, the salience
of a turn, the merge verifier, the statements of supersession, a memory's abstract).

A regular expression cuts at every ``.``, ``!`` or ``?`` followed by a space,
and at line breaks; that is right for most chat text and costs microseconds.
Each cut after a period is then judged: after a title ("Dr.") or an initial
before a name ("K. Le Guin"), or after a dotted word before a lower-case one
("7 a.m. out"), it surely is no sentence end and the pieces are rejoined;
after a short capitalised word ("St. Louis", "Jan. The"), a dotted word
before a capital ("U.S. Geological") or any period before a lower-case word or
a digit ("approx. 3"), it may or may not be, and that run goes to pysbd, whose
rules know abbreviations but cost a few hundred microseconds a call.  pysbd
itself still cuts after some abbreviations before a lower-case word ("approx.
3 hrs", "Sat. mornings"); such cuts are mended.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

# A piece ends at . ! ? followed by a space or the end, or at a line break;
# "3.5" and "v1.2" stay whole.
_PIECE = re.compile(r"(?:[^.!?\n]++|[.!?]+(?=\S))*+(?:[.!?]+|\n|$)")
# The word before a final period: "Dr.", "K.", "a.m.", "approx.".
_LAST_WORD = re.compile(r"(\S+)\.$")
_SHORT_CAPITAL = 4  # "Dr", "Mrs", "St", "Tues", "Jan": abbreviations more often than names
_SHORT_ABBREVIATION = 6  # "approx", "appt", "Sat": mended when pysbd cuts after them

Segment = Callable[[str], list[str]]
_END, _JOIN, _ASK = "end", "join", "ask"
# Titles before a name: a period after them never ends a sentence.
_TITLES = frozenset("dr mr mrs ms mx prof rev fr sr jr".split())
_LOWER_ABBREVIATIONS = frozenset("etc vs approx incl esp est dept avg min max fig".split())


def sentences(text: str, segment: Segment | None = None) -> list[str]:
    """The sentences of ``text``, stripped; a line break ends one too.  ``segment`` splits
    the runs only an abbreviation list can judge (pysbd's, by default)."""
    pieces = [p.strip() for p in _PIECE.findall(text)]
    pieces = [p for p in pieces if p]
    sentences: list[str] = []
    run: list[str] = []
    ask = False  # the run has a cut only pysbd can judge
    for i, piece in enumerate(pieces):
        run.append(piece)
        following = pieces[i + 1] if i + 1 < len(pieces) else ""
        verdict = _cut(piece, following) if following else _END
        if verdict != _END:
            ask = ask or verdict == _ASK
            continue
        if ask:
            sentences += _segment_run(" ".join(run), run, segment or _pysbd)
        else:
            sentences.append(" ".join(run))
        run, ask = [], False
    return sentences


def _cut(piece: str, following: str) -> str:
    """Whether the period ending ``piece`` ends a sentence, surely does not, or may not."""
    m = _LAST_WORD.search(piece)
    if m is None:
        return _END  # ended by ! ? or a line break
    word = m[1].lstrip("\"'([")
    first = next((c for c in following if c.isalnum()), "")
    if not first:
        return _END  # "... there. 😂"
    starts_upper = first.isupper()
    if word.lower() in _TITLES or (len(word) == 1 and word.isupper() and starts_upper):
        return _JOIN  # "Dr. Okafor", "Ursula K. Le Guin"
    if "." in word:
        return _ASK if starts_upper else _JOIN  # "U.S. Geological" / "7 a.m. out", "e.g. the"
    if not starts_upper:
        # pysbd cuts here too, right or wrong; the word's shape decides better
        return _JOIN if _abbreviation_before(word, first) else _END
    short_capital = word.isalpha() and word[0].isupper() and len(word) <= _SHORT_CAPITAL
    return _ASK if short_capital else _END  # "St. Louis", "Jan. The" / "home. Then"


def _segment_run(text: str, run: list[str], segment: Segment) -> list[str]:
    try:
        found = [s.strip() for s in segment(text)]
    except Exception:  # a foreign library on a hot path: keep the plain pieces
        log.exception("pysbd failed on %d characters; keeping the plain split", len(text))
        return run
    return _mend([s for s in found if s])


def _mend(sentences: list[str]) -> list[str]:
    """Rejoin cuts made after a short abbreviation before a lower-case word or a number."""
    mended: list[str] = []
    for sentence in sentences:
        if mended and _continues(mended[-1], sentence):
            mended[-1] = f"{mended[-1]} {sentence}"
        else:
            mended.append(sentence)
    return mended


def _continues(before: str, sentence: str) -> bool:
    m = _LAST_WORD.search(before)
    if m is None or sentence[0].isupper():
        return False
    first = next((c for c in sentence if c.isalnum()), "")
    return "." in m[1] or len(m[1]) == 1 or _abbreviation_before(m[1], first)


def _abbreviation_before(word: str, first: str) -> bool:
    """Whether ``word.`` before a lower-case word or a number (``first`` is its first
    character) is an abbreviation: "Sat. mornings", "approx. 3", "appt. with", "etc. and",
    not "seriously. that"."""
    if word.lower() in _LOWER_ABBREVIATIONS:
        return True
    return (
        word.isalpha()
        and len(word) <= _SHORT_ABBREVIATION
        and (word[0].isupper() or not first.isalpha() or not _has_vowel(word))
    )


def _has_vowel(word: str) -> bool:
    return any(c in "aeiouyAEIOUY" for c in word)


def _pysbd(text: str) -> list[str]:
    import pysbd  # type: ignore[import-untyped]  # loads only for an ambiguous period

    segmenter: Any = pysbd.Segmenter(language="en", clean=False)
    return list(segmenter.segment(text))


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (all of it, stripped, when it has none)."""
    found = sentences(text)
    return found[0] if found else text.strip()
