"""The merge verifier: is a pair of similar texts one fact, or two?

Embeddings find candidates, but cosine cannot tell a paraphrase ("I love
spicy food" / "Spicy food is something I adore") from a changed fact ("I
take 20 mg" / "I take 40 mg", cosine 0.98).  This module decides, and says
why.  Two texts are *not* duplicates when they differ in

* a number or quantity (digits, number words, ordinals, amounts);
* a date or time (a month, weekday, year, clock time, "tomorrow");
* polarity (one negates what the other states);
* a named person, place or thing (a capitalised name only one side has,
  where the other has a name of its own), or a person by role ("my boss" /
  "my brother");
* an object in the same slot ("the guitar" / "the piano": a word after a
  determiner, possessive or preposition, with no close synonym opposite).

Wording that only one side has (an added detail) is not a difference: the
merged text keeps it.  Typos are matched by edit distance (rapidfuzz's
optimal string alignment: adjacent swaps count one edit).  Synonyms in an
object slot are judged by the embedder's similarity of the two words, when
one is given; without it, a changed object counts as a difference (the
cautious answer: not merging costs a little tidiness, merging wrongly loses
a fact).

:func:`merged_text` writes the result of a verified merge: the newer text,
plus every sentence of the older that holds a detail the newer lacks.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

from rapidfuzz.distance import OSA

from memory_core.textutil import stem

# A word's similarity to another, 0..1 (cosine of their embeddings), or None.
WordSimilarity = Callable[[str, str], float | None]

# Past this share of its content words unmatched on both sides, two texts each
# say something of their own: two facts, not one worded twice.
OWN_CONTENT_SHARE = 0.5
# Two words this similar (embedding cosine) are taken as saying the same thing
# when weighing what each text says of its own (not for a swap in one slot).
RELATED_SIMILARITY = 0.6
_TOKEN = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?|\d+(?:[.,:]\d+)*(?:st|nd|rd|th|am|pm|k)?|[$€£%]")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")

NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
    "million": 1_000_000, "billion": 1_000_000_000, "dozen": 12, "half": 0.5,
    "twice": 2, "once": 1, "single": 1, "double": 2, "triple": 3, "couple": 2,
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
    "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "twelfth": 12, "twentieth": 20,
    "thirtieth": 30,
}  # fmt: skip
# Units whose change is a different quantity, even with the same number.
UNITS = frozenset(
    "mg g kg lb lbs pound pounds ounce ounces oz ml l liter liters litre litres km mile miles "
    "meter meters metre metres cm mm inch inches foot feet minute minutes hour hours day days "
    "week weeks month months year years decade decades percent dollar dollars euro euros "
    "cup cups glass glasses pill pills tablet tablets mcg iu".split()
)
MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "april": 4, "apr": 4,
    "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
    "september": 9, "sept": 9, "sep": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
    "december": 12, "dec": 12,
}  # fmt: skip
_AMBIGUOUS_MONTHS = frozenset({"may", "march", "jan", "jun", "dec", "sep", "oct", "aug"})
WEEKDAYS = {
    "monday": 1, "mon": 1, "tuesday": 2, "tue": 2, "tues": 2, "wednesday": 3, "wed": 3,
    "thursday": 4, "thu": 4, "thurs": 4, "friday": 5, "fri": 5, "saturday": 6, "sat": 6,
    "sunday": 7, "sun": 7, "weekend": 8, "weekday": 9, "weekdays": 9, "weekends": 8,
}  # fmt: skip
RELATIVE_TIMES = {
    "today": "today", "tonight": "today", "tonite": "today", "tomorrow": "tomorrow",
    "tmrw": "tomorrow", "tmr": "tomorrow", "tmw": "tomorrow", "yesterday": "yesterday",
    "morning": "morning", "mornings": "morning", "afternoon": "afternoon",
    "afternoons": "afternoon", "evening": "evening", "evenings": "evening",
    "night": "night", "nights": "night", "noon": "noon", "midnight": "midnight",
    "spring": "spring", "summer": "summer", "autumn": "autumn",
    "winter": "winter", "daily": "daily", "weekly": "weekly", "monthly": "monthly",
    "yearly": "yearly", "annually": "yearly", "nightly": "nightly", "hourly": "hourly",
}  # fmt: skip
_TIME_QUALIFIERS = frozenset({"last", "next", "this", "ago", "early", "late", "later"})
NEGATORS = frozenset(
    "not no never nothing nobody none neither nor without cannot nowhere noone "
    "dont doesnt didnt isnt arent wasnt werent cant couldnt wont wouldnt shouldnt havent "
    "hasnt hadnt aint".split()
)
# Verbs and phrases that turn a state off: "I quit smoking", "I gave up meat".
_STOPPING = frozenset({"quit", "quitted", "stopped", "ceased", "gave"})
ROLES = {
    # one canonical name per role, for people described rather than named
    **dict.fromkeys(["mom", "mum", "mother", "mama", "mommy", "mummy", "ma"], "mother"),
    **dict.fromkeys(["dad", "father", "papa", "daddy", "pa"], "father"),
    **dict.fromkeys(["parents", "folks"], "parents"),
    **dict.fromkeys(["sister", "sis"], "sister"),
    **dict.fromkeys(["brother", "bro"], "brother"),
    **dict.fromkeys(["siblings"], "siblings"),
    **dict.fromkeys(["son"], "son"),
    **dict.fromkeys(["daughter"], "daughter"),
    **dict.fromkeys(["kid", "kids", "child", "children"], "children"),
    **dict.fromkeys(["wife"], "wife"),
    **dict.fromkeys(["husband", "hubby"], "husband"),
    **dict.fromkeys(["partner", "spouse"], "partner"),
    **dict.fromkeys(["girlfriend", "gf"], "girlfriend"),
    **dict.fromkeys(["boyfriend", "bf"], "boyfriend"),
    **dict.fromkeys(["fiance", "fiancee"], "fiance"),
    **dict.fromkeys(["grandma", "grandmother", "granny", "nan", "nana"], "grandmother"),
    **dict.fromkeys(["grandpa", "grandfather", "granddad", "grandad"], "grandfather"),
    **dict.fromkeys(["grandson"], "grandson"),
    **dict.fromkeys(["granddaughter"], "granddaughter"),
    **dict.fromkeys(["aunt", "auntie"], "aunt"),
    **dict.fromkeys(["uncle"], "uncle"),
    **dict.fromkeys(["cousin"], "cousin"),
    **dict.fromkeys(["nephew"], "nephew"),
    **dict.fromkeys(["niece"], "niece"),
    **dict.fromkeys(["boss", "manager", "supervisor"], "boss"),
    **dict.fromkeys(["colleague", "coworker", "workmate"], "colleague"),
    **dict.fromkeys(["friend", "buddy", "pal", "mate"], "friend"),
    **dict.fromkeys(["neighbor", "neighbour"], "neighbour"),
    **dict.fromkeys(["roommate", "flatmate", "housemate"], "roommate"),
    **dict.fromkeys(["doctor", "doc", "gp", "physician"], "doctor"),
    **dict.fromkeys(["dentist"], "dentist"),
    **dict.fromkeys(["therapist", "counselor", "counsellor"], "therapist"),
    **dict.fromkeys(["teacher", "tutor"], "teacher"),
    **dict.fromkeys(["coach", "trainer"], "coach"),
    **dict.fromkeys(["landlord", "landlady"], "landlord"),
    **dict.fromkeys(["vet"], "vet"),
    **dict.fromkeys(["lawyer", "attorney"], "lawyer"),
    **dict.fromkeys(["mentor"], "mentor"),
    **dict.fromkeys(["client", "customer"], "client"),
    **dict.fromkeys(["ex"], "ex"),
    **dict.fromkeys(["in-laws", "inlaws"], "in-laws"),
}
# Words after which the next content word names a thing (an object slot).
_SLOT_OPENERS = frozenset(
    "a an the my our your his her their its this that these those some any another every "
    "each of to in at from with for into onto on by about like per".split()
)
# Common adjectives that may stand between a slot opener and its object ("a red car").
_ADJECTIVES = frozenset(
    "red blue green black white yellow orange purple pink brown grey gray silver gold "
    "big small large little tiny huge new old young favourite favorite best worst good bad "
    "nice great short long tall local usual regular same other whole full part early late "
    "second first next last electric vintage cheap expensive free".split()
)
# Words that carry no fact: function words, fillers, intensifiers, chat noise.
FILLER = frozenset(
    """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me might more most must my myself of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    us very was we were what when where which while who whom why will with would you your
    yours yourself yourselves also get got gets getting really actually basically honestly
    literally totally absolutely definitely pretty quite kinda sorta kind sort lot lots
    thing things something stuff anything everything bit little much many lol haha hahaha
    tbh btw imo idk fyi omg ok okay yeah yep yes yup hey hi hmm um uh oh well like just
    u ur ya ye im ive id ill youre thats theres whats its dont doesnt didnt s t ll ve re m d
    currently now still already always usually generally normally typically though anyway
    probably maybe perhaps guess suppose seem seems seemed bc cuz cos coz w pls plz thx
    thanks know mean say said tell told let lemme gonna wanna gotta guys folks man dude
    one ones way even ever
    """.split()
)  # fmt: skip
_SPELLING = {
    "u": "you", "ur": "your", "r": "are", "b4": "before", "bday": "birthday", "bc": "because",
    "cuz": "because", "thx": "thanks", "pls": "please", "plz": "please", "tmrw": "tomorrow",
    "tmr": "tomorrow", "tonite": "tonight", "nite": "night", "wk": "week", "wks": "weeks",
    "yr": "year", "yrs": "years", "mo": "month", "mos": "months", "hr": "hour", "hrs": "hours",
    "min": "minute", "mins": "minutes", "appt": "appointment", "doc": "doctor", "gf": "girlfriend",
    "bf": "boyfriend", "fav": "favourite", "fave": "favourite", "favorite": "favourite",
    "color": "colour", "neighbor": "neighbour", "mum": "mom", "kinda": "kind",
    "gonna": "going", "wanna": "want", "bro": "brother", "sis": "sister", "ppl": "people",
    "convo": "conversation", "info": "information", "w/": "with", "n": "and",
}  # fmt: skip


@dataclass(frozen=True)
class Verdict:
    """The verifier's answer for one pair: ``kind`` names the difference found."""

    duplicate: bool
    kind: str  # duplicate | number | date_time | negation | person | object_place
    reason: str


@dataclass(frozen=True)
class _Token:
    raw: str  # as written
    word: str  # lower-cased, spelling-normalised
    slot: bool  # follows a determiner, possessive, preposition or number
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
    slots: frozenset[str]  # stems of content words in an object slot
    surface: dict[str, str]  # stem -> a word as written, for similarity look-ups


# "User: ", "Assistant: ", "Melanie: " opening a paragraph: who speaks, not what is said.
SPEAKER_LABEL = re.compile(r"^(?:[A-Z][\w'-]*(?: [A-Z][\w'-]*)?: )+", re.MULTILINE)


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    for sentence in _SENTENCE.split(SPEAKER_LABEL.sub("", text)):
        raw = _TOKEN.findall(sentence.replace("’", "'"))
        prev: list[str] = []
        for k, tok in enumerate(raw):
            low = tok.lower()
            if low.endswith("n't"):
                out.append(_Token(tok, low[:-3] or low, _opens(prev), k == 0))
                out.append(_Token("not", "not", False, False))
                prev.append(low)
                continue
            low = low.split("'")[0] if "'" in low and not low.endswith("'s") else low
            if low.endswith("'s"):
                low = low[:-2]
            word = _SPELLING.get(low, low)
            out.append(_Token(tok, word, _opens(prev), k == 0))
            prev.append(word)
    return out


def _opens(prev: list[str]) -> bool:
    """Whether a word after ``prev`` sits in an object slot (one adjective may intervene)."""
    if not prev:
        return False
    last = prev[-1]
    if last in _SLOT_OPENERS or last in NUMBER_WORDS or last[:1].isdigit():
        return True
    return len(prev) > 1 and prev[-2] in _SLOT_OPENERS and last in _ADJECTIVES


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
    if word in WEEKDAYS:
        if word in ("sat", "sun", "wed") and not tok.raw[:1].isupper():
            return None
        return f"weekday:{WEEKDAYS[word]}"
    if word in MONTHS:
        near_number = any(t is not None and t.word[:1].isdigit() for t in (nxt, prev))
        if word in _AMBIGUOUS_MONTHS and not near_number and not tok.raw[:1].isupper():
            return None
        if word in _AMBIGUOUS_MONTHS and tok.initial and not near_number:
            return None
        return f"month:{MONTHS[word]}"
    if word in RELATIVE_TIMES:
        return "rel:" + RELATIVE_TIMES[word]
    return None


@lru_cache(maxsize=16_384)
def analyse(text: str) -> Analysis:  # noqa: PLR0915 -- one pass over the tokens
    """Read numbers, times, polarity, names, roles and content words from a text."""
    toks = _tokens(text)
    numbers: Counter[str] = Counter()
    times: Counter[str] = Counter()
    units: set[str] = set()
    names: set[str] = set()
    roles: set[str] = set()
    content: set[str] = set()
    slots: set[str] = set()
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
            qualifier = prev.word if prev is not None and prev.word in _TIME_QUALIFIERS else ""
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
        if word in _STOPPING:
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
        if tok.slot:
            slots.add(s)
    return Analysis(
        numbers=numbers,
        units=frozenset(units),
        times=times,
        negations=negations,
        names=frozenset(names),
        roles=frozenset(roles),
        content=frozenset(content),
        sequence=tuple(sequence),
        slots=frozenset(slots),
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
    return next((ROLES[k] for k in _LONG_ROLES.get(word[0], []) if _typo_match(k, word)), None)


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
def _typo_match(a: str, b: str) -> bool:
    """Whether two stems are one word mistyped: a small edit distance for their length."""
    if a == b:
        return True
    if min(len(a), len(b)) < 4 or abs(len(a) - len(b)) > 2:
        return False
    limit = 1 if max(len(a), len(b)) < 7 else 2
    return bool(OSA.distance(a, b, score_cutoff=limit) <= limit)


def _unmatched(mine: frozenset[str], theirs: frozenset[str]) -> set[str]:
    return {w for w in mine if not any(_typo_match(w, o) for o in theirs)}


def _unmatched_words(mine: Analysis, theirs: Analysis) -> set[str]:
    """Content stems of ``mine`` the other text lacks, even allowing for a typo in
    either the stem or the word as written ("quarterly" / "quartely")."""
    words = set(theirs.surface.values())
    return {
        s
        for s in _unmatched(mine.content, theirs.content)
        if not any(_typo_match(mine.surface.get(s, s), w) for w in words)
    }


def _fuzzy_names(a: frozenset[str], b: frozenset[str]) -> tuple[set[str], set[str]]:
    return _unmatched(a, b), _unmatched(b, a)


def verify(
    older: str,
    newer: str,
    *,
    similarity: WordSimilarity | None = None,
) -> Verdict:
    """Decide whether two texts state the same fact (see the module docstring)."""
    a, b = analyse(older), analyse(newer)
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
    only_a, only_b = _fuzzy_names(a.names, b.names)
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
    own_a = _unmatched_words(a, b)
    own_b = _unmatched_words(b, a)
    if similarity is not None:  # a synonym opposite counts as said by both, one for one
        own_a, own_b = _pair_related(own_a, own_b, a, b, similarity)
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
    if _typo_match(a, b):
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
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def lost_words(source: str, result: str) -> set[str]:
    """Content words (stems) and numbers of ``source`` that ``result`` does not hold."""
    a, r = analyse(source), analyse(result)
    missing = _unmatched(a.content, r.content)
    missing |= {f"#{n}" for n in a.numbers if n not in r.numbers}
    missing |= {t for t in a.times if t not in r.times}
    missing |= _unmatched(a.names, r.names | r.content)
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
