"""The merge verifier: is a pair of similar texts one fact, or two?

Embeddings find candidates, but cosine cannot tell a paraphrase ("I love
spicy food" / "Spicy food is something I adore") from a changed fact ("I
take 20 mg" / "I take 40 mg", cosine 0.98).  This module decides, and says
why.  Two texts are *not* duplicates when they differ in

* a number or quantity (digits, number words, ordinals, amounts);
* a date or time (a month, weekday, year, clock time, "tomorrow");
* polarity (one negates what the other states);
* a change (one tells that something changed -- "moved", "now", "instead" -- and
  the other does not);
* the attribute stated, as the statements model reads them ("I'm Zoe." is who
  she is, "Zoe has two cats." her pets: two facts, though both name her);
* a named person, place or thing (a capitalised name only one side has,
  where the other has a name of its own), or a person by role ("my boss" /
  "my brother");
* an object in the same slot ("the guitar" / "the piano": a word after a
  determiner, possessive or preposition, with no close synonym opposite).

Wording that only one side has (an added detail) is not a difference: the
merged text keeps it.  Typos count as the same word (see :mod:`.analysis`).  Synonyms in an
object slot are judged by the embedder's similarity of the two words, when
one is given; without it, a changed object counts as a difference (the
cautious answer: not merging costs a little tidiness, merging wrongly loses
a fact).

:func:`merged_text` writes the result of a verified merge: the newer text,
plus every sentence of the older that holds a detail the newer lacks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from memory_core import language
from memory_core.consolidation.analysis import (
    Analysis,
    analyse,
    fuzzy_names,
    typo_match,
    unmatched,
    unmatched_words,
)
from memory_core.language import reading, telling

# A word's similarity to another, 0..1 (cosine of their embeddings), or None.
WordSimilarity = Callable[[str, str], float | None]

# Past this share of its content words unmatched on both sides, two texts each
# say something of their own: two facts, not one worded twice.
OWN_CONTENT_SHARE = 0.5
# Two words this similar (embedding cosine) are taken as saying the same thing
# when weighing what each text says of its own (not for a swap in one slot).
RELATED_SIMILARITY = 0.6
# A text that tells a change holds at least this many words of its own (the word of
# change and what it changed to) when it changes what the other states.
CHANGED_WORDS = 2


@dataclass(frozen=True)
class Verdict:
    """The verifier's answer for one pair: ``kind`` names the difference found."""

    duplicate: bool
    kind: str  # duplicate | number | date_time | negation | change | attribute | person | ...
    reason: str


def verify(
    older: str,
    newer: str,
    *,
    similarity: WordSimilarity | None = None,
) -> Verdict:
    """Decide whether two texts state the same fact (see the module docstring)."""
    a, b = analyse(older), analyse(newer)
    # Two statements of different attributes are two facts, whoever they name ("I'm
    # Zoe." is who she is, "Zoe has two cats." her pets).
    if not reading.may_be_one([older, newer]):
        return Verdict(False, "attribute", "they state different attributes")
    # A value only one side states is an added detail; values each side states
    # that the other lacks are a change.
    if _both_have_own(a.numbers, b.numbers):
        return Verdict(False, "number", _differs("number", a.numbers, b.numbers))
    if a.units and b.units and _both_have_own(a.units, b.units) and a.numbers and b.numbers:
        return Verdict(False, "number", f"differs in a unit: {_list(a.units)} / {_list(b.units)}")
    if _both_have_own(a.times, b.times):
        return Verdict(False, "date_time", _differs("date or time", a.times, b.times))
    if a.negations % 2 != b.negations % 2:
        return Verdict(False, "negation", "one states what the other negates")
    only_a, only_b = fuzzy_names(a.names, b.names)
    only_a -= b.content | set(b.surface.values())
    only_b -= a.content | set(a.surface.values())
    if only_a and only_b:
        return Verdict(False, "person", f"differs in a name: {_list(only_a)} / {_list(only_b)}")
    if _both_have_own(a.roles, b.roles):
        return Verdict(
            False,
            "person",
            f"differs in a person: {_list(a.roles - b.roles)} / {_list(b.roles - a.roles)}",
        )
    own_a = unmatched_words(a, b)
    own_b = unmatched_words(b, a)
    if similarity is not None:  # a synonym opposite counts as said by both, one for one
        own_a, own_b = _pair_related(own_a, own_b, a, b, similarity)
    # One only names someone ("I'm Zoe.") and the other tells something of them ("Zoe
    # has two cats."): naming the same person is not saying the same thing.
    for mine, own in ((a, own_b), (b, own_a)):
        if mine.content and mine.content <= _named(mine) and own:
            return Verdict(False, "person", f"one names whom the other tells of: {_list(own)}")
    # One tells that something changed and, besides the word of change, says what it
    # changed to, where the other tells no change ("the key is under the pot" / "the
    # key moved: it is with the neighbour"): a change, not a repeat.
    for text, own, other in ((older, own_a, newer), (newer, own_b, older)):
        if telling.changes(text) and not telling.changes(other) and len(own) >= CHANGED_WORDS:
            return Verdict(False, "change", f"one tells a change of the other: {_list(own)}")
    if _share(own_a, a) > OWN_CONTENT_SHARE and _share(own_b, b) > OWN_CONTENT_SHARE:
        return Verdict(
            False,
            "different",
            f"each says what the other does not: {_list(own_a)} / {_list(own_b)}",
        )
    swaps = _substitutions(a, b)
    if swaps:
        old, new = swaps[0]
        return Verdict(False, "object_place", f"differs in what it is about: {old} / {new}")
    return Verdict(True, "duplicate", "the same fact, worded differently")


def _named(analysis: Analysis) -> set[str]:
    """The content words of a text that are names."""
    return {s for s, w in analysis.sequence if w in analysis.names}


def _pair_related(
    own_a: set[str], own_b: set[str], a: Analysis, b: Analysis, similarity: WordSimilarity
) -> tuple[set[str], set[str]]:
    """Pair words of each side's own with related words opposite, most similar first,
    each word used once; returns what is left unpaired on each side."""
    scored = sorted(
        (
            (similarity(a.surface.get(x, x), b.surface.get(y, y)) or 0.0, x, y)
            for x in own_a
            for y in own_b
        ),
        reverse=True,
    )
    left_a, left_b = set(own_a), set(own_b)
    for sim, x, y in scored:
        if sim < RELATED_SIMILARITY:
            break
        if x in left_a and y in left_b:
            left_a.discard(x)
            left_b.discard(y)
    return left_a, left_b


def _share(words: set[str], analysis: Analysis) -> float:
    return len(words) / max(len(analysis.content), 1)


def _same_word(a: str, b: str) -> bool:
    """One word, mistyped or shortened ("chemistry" / "chem")."""
    if typo_match(a, b):
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 3 and long_.startswith(short)


def _substitutions(a: Analysis, b: Analysis) -> list[tuple[str, str]]:
    """A one-for-one word swap in otherwise identical texts ("my stepson plays
    goalkeeper" / "my nephew plays goalkeeper"): the shape of a changed fact.  A
    rewording moves, adds or rephrases more than one word, so a diff with any
    other change is not a swap."""
    seq_a = [s for s, _ in a.sequence]
    seq_b = []
    for s, w in b.sequence:
        same = next((x for x, y in a.sequence if _same_word(x, s) or _same_word(y, w)), s)
        seq_b.append(same)
    ops = [op for op in SequenceMatcher(None, seq_a, seq_b, autojunk=False).get_opcodes()]
    changed = [op for op in ops if op[0] != "equal"]
    if len(changed) != 1 or changed[0][0] != "replace":
        return []
    _, i1, i2, j1, j2 = changed[0]
    if i2 - i1 > 2 or j2 - j1 > 2:
        return []
    return [(" ".join(seq_a[i1:i2]), " ".join(seq_b[j1:j2]))]


def _both_have_own(a: Counter[str] | frozenset[str], b: Counter[str] | frozenset[str]) -> bool:
    return bool(set(a) - set(b)) and bool(set(b) - set(a))


def _differs(what: str, a: Counter[str], b: Counter[str]) -> str:
    return f"differs in a {what}: {_list(a)} / {_list(b)}"


def _list(values: Sequence[str] | set[str] | frozenset[str] | Counter[str]) -> str:
    shown = [v.split(":", 1)[-1] for v in sorted(values)]
    return ", ".join(shown) or "-"


# -- the merged text -----------------------------------------------------------


def sentences(text: str) -> list[str]:
    return language.sentences(text)


def lost_words(source: str, result: str) -> set[str]:
    """Content words (stems) and numbers of ``source`` that ``result`` does not hold."""
    a, r = analyse(source), analyse(result)
    missing = unmatched(a.content, r.content)
    missing |= {f"#{n}" for n in a.numbers if n not in r.numbers}
    missing |= {t for t in a.times if t not in r.times}
    missing |= unmatched(a.names, r.names | r.content)
    missing |= {f"role:{x}" for x in a.roles - r.roles}
    return missing


def merged_text(older: str, newer: str) -> str:
    """The text of a verified merge: every distinct detail of both, newer wording first.

    When one text already holds every detail of the other, it is the result.
    Otherwise the newer text is kept and each sentence of the older that holds
    a detail the newer lacks is appended.
    """
    if not lost_words(older, newer):
        return newer
    if not lost_words(newer, older):
        return older
    result = newer.rstrip()
    for sentence in sentences(older):
        if lost_words(sentence, result):
            joiner = " " if result.endswith((".", "!", "?")) else ". "
            result = f"{result}{joiner}{sentence}"
    if lost_words(older, result):  # a detail inside a sentence we could not place
        result = f"{newer.rstrip()} | {older.strip()}"
    return result
