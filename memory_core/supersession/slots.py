"""What a statement gives a value of: its subject and attribute, read offline.

A *slot* is ``subject/attribute``: ``user/residence`` for "We moved into a flat in
Leeds", ``priya/workplace`` for "My sister Priya started at the bank".  Two
statements of one slot in one scope id state two values of the same thing, so
the later supersedes the earlier (:mod:`memory_core.supersession.chain`).

Detection is cues, not understanding: a sentence's attribute comes from words
that say what kind of fact it is (moved, flat, rent: residence; mg, prescribed:
medication), tried in a fixed order, most specific first.  Attributes that
hold many values at once -- habits, likes, plans -- take a topic too
(``user/habit:coffee``), so that drinking less coffee does not replace running
more.  A sentence that is a question, or says nothing of a known kind, has no
slot.  The subject is the user unless the sentence opens on someone else:
"my sister (Priya)", a relation ("Dad's ..."), or a name already known as a
subject in the scope.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from memory_core.language import sentences
from memory_core.textutil import STOPWORDS

USER = "user"

RELATIONS = {
    "mum": "mum", "mom": "mum", "mother": "mum", "mam": "mum", "mummy": "mum",
    "dad": "dad", "father": "dad", "daddy": "dad", "papa": "dad",
    "sister": "sister", "brother": "brother", "wife": "wife", "husband": "husband",
    "partner": "partner", "boyfriend": "boyfriend", "girlfriend": "girlfriend",
    "fiance": "fiance", "fiancé": "fiance", "fiancée": "fiance", "fiancee": "fiance",
    "son": "son", "daughter": "daughter", "friend": "friend", "flatmate": "flatmate",
    "roommate": "flatmate", "housemate": "flatmate", "boss": "boss", "manager": "boss",
    "colleague": "colleague", "grandma": "grandma", "gran": "grandma", "nan": "grandma",
    "grandmother": "grandma", "nana": "grandma", "nanna": "grandma", "granny": "grandma",
    "grandad": "grandad", "grandpa": "grandad",
    "grandfather": "grandad", "aunt": "aunt", "auntie": "aunt", "uncle": "uncle",
    "cousin": "cousin", "nephew": "nephew", "niece": "niece", "neighbour": "neighbour",
    "neighbor": "neighbour", "stepdad": "stepdad", "stepmum": "stepmum", "stepmom": "stepmum",
    "buddy": "friend", "pal": "friend", "mate": "friend", "bestie": "friend",
    "coworker": "colleague", "co-worker": "colleague", "teammate": "colleague",
    "classmate": "classmate", "landlord": "landlord", "landlady": "landlord",
    "kid": "child", "kids": "children", "children": "children", "parents": "parents",
    # In-laws are relations of their own, not the parent or sibling the word starts with.
    "mother-in-law": "mother-in-law", "father-in-law": "father-in-law",
    "sister-in-law": "sister-in-law", "brother-in-law": "brother-in-law",
    "son-in-law": "son-in-law", "daughter-in-law": "daughter-in-law",
}  # fmt: skip
_REL = "|".join(sorted(RELATIONS, key=len, reverse=True))
# "my (best|older|...) sister(,) Priya": the relation, then perhaps a name.
MY_RELATION = re.compile(
    rf"(?i:\b(?:my|our) (?:(?:best|older|younger|little|big|baby|eldest|oldest|youngest|twin|"
    rf"new|ex|step|elder|old|dear) )*({_REL})\b)(?:,? ([A-Z][a-z]+(?:-[A-Z][a-z]+)?)\b)?",
)
# Someone's relation, named early: "Rachel's pal Morag ...", "Dad's friend ..." -- the
# sentence is about the relation, not the one whose relation it is.
_THEIR_RELATION = re.compile(
    rf"^[A-Z][a-zé]+'s (?i:(?:best|older|younger|little|big|old|new) )?(?i:({_REL}))\b"
    r"(?:,? ([A-Z][a-z]+(?:-[A-Z][a-z]+)?)\b)?"
)
# A sentence opening on a relation word or a name: "Dad's ...", "Tom switched ...".
_OPENING = re.compile(r"^([A-Z][a-zé]+)(?:'s\b|\s)")
# A sentence-opening word is taken for a name when the next word is one of these.
_NAME_FOLLOWERS = frozenset(
    """is was has had 's got gets just still now finally has started starts moved moves
    switched switches left leaves joined joins quit quits lives lived works worked took
    went decided told says said finished began begins changed changes swapped
    stopped stops dropped picked bought adopted became becomes turned upgraded
    downgraded landed accepted retired graduated broke split married proposed""".split()
)


@dataclass(frozen=True)
class Attribute:
    """A kind of fact: its name, its cue and, for attributes that hold many values at
    once, the topics one statement can be about (None: the attribute has one value)."""

    name: str
    cue: re.Pattern[str]
    topics: tuple[tuple[str, re.Pattern[str]], ...] | None = None


def cue(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns))


_DRUG = (
    r"\b[a-z]{3,}(?:in|ine|ol|olol|pril|sartan|statin|xaban|pam|lam|pine|tine|pram|one|ide"
    r"|azole|mab|cillin|mycin|fen|tal|ate)\b"
)
_NUMBER = r"(?:\d+(?:[.,]\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|a|an|half)"
_PER = r"(?:a|per|each|every) (?:day|night|week|month|morning|evening|weekend)"

_HABIT_TOPICS = (
    ("coffee", cue(r"\bcoffee", r"\bespresso", r"\blatte", r"\bflat whites?\b",
                    r"\bcappuccino", r"\bcaffeine", r"\bamericano")),
    ("tea", cue(r"\btea\b", r"\bcuppas?\b")),
    ("alcohol", cue(r"\balcohol", r"\bbeers?\b", r"\bwine\b", r"\bpints?\b", r"\bdrinks?\b",
                     r"\bdrinking\b", r"\bsober\b")),
    ("smoking", cue(r"\bcigarettes?\b", r"\bsmok", r"\bvap(?:e|ing)", r"\bfags?\b")),
    ("screen", cue(r"\bscreen ?time\b", r"\bon my phone\b", r"\bsocial media\b")),
    ("sleep", cue(r"\bsleep", r"\bhours? a night\b", r"\bin bed\b")),
    ("running", cue(r"\brun(?:s|ning)?\b", r"\bran\b", r"\bjog", r"\b(?:km|k|miles?) a week\b")),
    ("walking", cue(r"\bsteps\b", r"\bwalk")),
    ("exercise", cue(r"\bgym\b", r"\bwork ?outs?\b", r"\bworking out\b", r"\blift(?:ing)?\b",
                      r"\bswim", r"\bcycl", r"\byoga\b", r"\bclimb")),
    ("reading", cue(r"\bbooks? a (?:week|month|year)\b", r"\breading\b")),
    ("sugar", cue(r"\bsugar\b", r"\bsweets\b", r"\bchocolate\b", r"\bfizzy\b", r"\bsoda\b")),
    ("water", cue(r"\bwater\b")),
)  # fmt: skip
_LIKE_TOPICS = (
    ("music", cue(r"\bmusic\b", r"\bband\b", r"\balbums?\b", r"\bsongs?\b", r"\bjazz\b",
                   r"\brock\b", r"\bindie\b", r"\bpop\b", r"\bhip.?hop\b", r"\brap\b",
                   r"\bclassical\b", r"\bgigs?\b", r"\blisten")),
    ("films", cue(r"\bfilms?\b", r"\bmovies?\b", r"\bhorror\b", r"\bcinema\b", r"\brom.?coms?\b",
                   r"\bthrillers?\b")),
    ("tv", cue(r"\bshows?\b", r"\bseries\b", r"\btv\b", r"\bsitcoms?\b")),
    ("books", cue(r"\bbooks?\b", r"\bnovels?\b", r"\bauthor\b", r"\bread(?:ing)?\b")),
    ("food", cue(r"\bfood\b", r"\bcuisine\b", r"\beat(?:ing)?\b", r"\bdishes?\b", r"\bspicy\b",
                  r"\bsushi\b", r"\bmeat\b", r"\bvegan\b", r"\bvegetarian\b", r"\bcook")),
    ("drinks", cue(r"\bcoffee\b", r"\btea\b", r"\bwine\b", r"\bbeer\b", r"\bwhisky\b")),
    ("sport", cue(r"\bfootball\b", r"\bsoccer\b", r"\brugby\b", r"\bcricket\b", r"\btennis\b",
                   r"\bbasketball\b", r"\bteam\b", r"\bsupporters?\b")),
    ("games", cue(r"\bgames?\b", r"\bgaming\b")),
    ("weather", cue(r"\bweather\b", r"\bsummer\b", r"\bwinter\b", r"\bcold\b", r"\bheat\b")),
)  # fmt: skip
_PLAN_TOPICS = (
    ("race", cue(r"\bmarathon\b", r"\bhalf\b", r"\brace\b", r"\b10k\b", r"\btriathlon\b",
                  r"\bultra\b")),
    ("trip", cue(r"\btrip\b", r"\bholiday\b", r"\bvacation\b", r"\bflights?\b", r"\bfly(?:ing)?\b",
                  r"\btravel", r"\bvisit(?:ing)?\b", r"\bhoneymoon\b")),
    ("wedding", cue(r"\bwedding\b", r"\bget(?:ting)? married\b")),
    ("move", cue(r"\bmov(?:e|ing) (?:to|out|house|abroad)\b", r"\brelocat")),
    ("study", cue(r"\bcourse\b", r"\bdegree\b", r"\bmasters?\b", r"\bphd\b", r"\bexams?\b",
                   r"\buni(?:versity)?\b", r"\bapply(?:ing)?\b")),
    ("party", cue(r"\bparty\b", r"\bbirthday\b", r"\bcelebrat")),
)  # fmt: skip

# Tried in this order; the first whose cue a sentence holds is its attribute.
ATTRIBUTES: tuple[Attribute, ...] = (
    Attribute(
        "medication",
        cue(
            r"\b\d+(?:\.\d+)? ?(?:mg|mcg|µg|ml|units?|iu)\b",
            r"\b(?:dose|dosage|prescri\w*|medication|meds|inhaler|insulin|antidepressants?"
            r"|blood thinner|statins?|tablets?|pills?)\b",
            r"\b(?:tak(?:e|es|ing|en)|on|onto|off|started|stopped|quit|switched to) (?:\w+ )?"
            + _DRUG,
        ),
    ),
    Attribute(
        "pet",
        cue(
            r"\b(?:dogs?|cats?|pupp(?:y|ies)|pups?|kittens?|kitty|hamsters?|rabbits?|bunn(?:y|ies)"
            r"|guinea pigs?|parrots?|budgies?|tortoises?|turtles?|goldfish|fish|horses?|ponies"
            r"|pony|ferrets?|lizards?|snakes?|gecko|pets?)\b",
        ),
    ),
    Attribute(
        "relationship",
        cue(
            r"\b(?:single|dating|engaged|married|divorced?|separated|widowed|proposed|fianc[eé]e?"
            r"|broke up|break ?up|split up|seeing someone|seeing each other|relationship"
            r"|boyfriend|girlfriend|husband|wife|partner|moved in together|first date|dates?)\b",
        ),
    ),
    Attribute(
        "work",
        cue(
            r"\b(?:work(?:s|ing|ed)? as|job as|role as|position as|trained as|retrain\w* as"
            r"|qualified as|became an?|i'?m (?:now )?an? (?:\w+ )?(?:nurse|teacher|engineer"
            r"|developer|designer|manager|doctor|lawyer|accountant|chef|writer|student|tester"
            r"|analyst|consultant|lead|director|freelancer))\b",
            r"\b(?:promoted|promotion|job title|new role|career|retired|retiring|unemployed"
            r"|out of work|freelanc\w*|self-employed|quit (?:my job|nursing|teaching)"
            r"|lead|manager|head of)\b",
        ),
    ),
    Attribute(
        "work",
        cue(
            r"\b(?:work(?:s|ing|ed)? (?:at|for|in)|job at|shifts? at|joined|hired|employer"
            r"|company|firm|office|started at|new job|offer from|laid off|made redundant"
            r"|redundancy|handed in my notice|left (?:my job|the company)|contract with"
            r"|transferred to|switched (?:over )?to the)\b",
        ),
    ),
    Attribute(
        "residence",
        cue(
            r"\b(?:live[sd]?|living) (?:in|with|at|near|on)\b",
            r"\b(?:mov(?:e|ed|ing) (?:in|into|to|out|back|house|abroad|away)|relocat\w*"
            r"|unpack\w*|keys|landlord|tenancy|lease|mortgage|rent(?:ing|ed)?|flat ?share"
            r"|settled in|neighbou?rhood|(?:new|own|a|the|our|my|her|his|their|big|small|tiny)"
            r" (?:flat|house|home|place|apartment|cottage|bungalow|studio|bedsit|hostel|dorm"
            r"|houseboat|farmhouse|townhouse|terrace|semi))\b",
        ),
    ),
    Attribute(
        "habit",
        cue(
            rf"\b{_NUMBER} (?:\w+ ){{0,3}}{_PER}\b",
            r"\b(?:daily|nightly|weekly|times a (?:day|week)|every day|every night|a day"
            r"|per day|average|cut (?:down|back)|down to|up to|gave up|quit|stopped|started)\b",
        ),
        _HABIT_TOPICS,
    ),
    Attribute(
        "plan",
        cue(
            r"\b(?:plan(?:ning|s|ned)?|going to|gonna|booked|signed up|entered|entry"
            r"|registered|postponed|cancel+ed|moved it to|pushed back|instead|rescheduled"
            r"|next (?:year|month|week|spring|summer|autumn|winter))\b",
        ),
        _PLAN_TOPICS,
    ),
    Attribute(
        "likes",
        cue(
            r"\b(?:love[sd]?|like[sd]?|enjoy\w*|prefer\w*|favou?rite|hate[sd]?|can'?t stand"
            r"|dislike[sd]?|into|obsessed|fan of|gone off|gave up on|refuses? to|sick of"
            r"|tired of|180|on repeat|converted)\b",
        ),
        _LIKE_TOPICS,
    ),
    Attribute(
        "vehicle",
        cue(
            r"\b(?:car|cars|motorbike|motorcycle|scooter|van|electric car|drive an?|driving an?)\b"
        ),
    ),
)

_EARLY = 12  # characters into a sentence that its subject is named by
_WITH_ME = re.compile(r"(?i:me|i) and \S|(?:[A-Z][a-zé]+)? and (?:I|me)\b")


def subjects_named(
    sentence: str,
    known: Collection[str] = (),
    speaker: str | None = None,
    *,
    guess_names: bool = True,
) -> str:
    """Whom ``sentence`` is about: a relation it opens on, a name, or whoever said it
    (``speaker``, when the turn names one; else the user).  A name is one of
    ``known`` or, with ``guess_names``, a capitalised opening word followed by a
    verb of the kind said of people ("Tom switched ...")."""
    # Said of the speaker with someone ("Ines and I got married", "me and my girlfriend
    # Sam are ..."): about the speaker, naming the other.
    said = sentence.strip()
    relation = MY_RELATION.match(said)
    if _WITH_ME.match(said[relation.end() :] if relation else said):
        return speaker_subject(speaker)
    # The statement is about them when they are named early, as its subject.
    if (m := MY_RELATION.search(sentence)) and m.start() <= _EARLY:
        name = m.group(2)
        return (name or RELATIONS[m.group(1).lower()]).lower()
    if m := _THEIR_RELATION.match(sentence.strip()):
        name = m.group(2)
        return (name or RELATIONS[m.group(1).lower()]).lower()
    opening = _OPENING.match(sentence.strip())
    if opening:
        word = opening.group(1)
        low = word.lower()
        if low in RELATIONS:
            return RELATIONS[low]
        if low in known:
            return low
        if not guess_names:
            return speaker_subject(speaker)
        rest = sentence.strip()[len(word) :].split()
        follower = rest[0].lower() if rest else ""
        if (
            low not in STOPWORDS
            and (sentence.strip()[len(word) :].startswith("'s") or follower in _NAME_FOLLOWERS)
            and not low.endswith("s")
        ):
            return low
    return speaker_subject(speaker)


def persons_named(text: str) -> set[str]:
    """The names ``text`` gives people by their relation ("my husband Greg": greg)."""
    return {m.group(2).lower() for m in MY_RELATION.finditer(text) if m.group(2)}


def speaker_subject(speaker: str | None) -> str:
    """The subject of what a speaker says of themselves: their name, or the user."""
    name = (speaker or "").strip().lower().replace("/", " ")
    return name or USER


def base_attribute(slot: str) -> str:
    """A slot's attribute without its topic: "user/habit:coffee" -> "habit"."""
    return slot.split("/", 1)[-1].split(":", 1)[0]


def slot_of(sentence: str, known: Collection[str] = (), speaker: str | None = None) -> str | None:
    """The slot ``sentence`` states a value of, or None: the attribute with the most
    cues in it (the earlier on a tie) that has a topic there when it needs one."""
    text = sentence.strip()
    if not text or text.endswith("?"):
        return None
    low = text.lower().replace("\u2019", "'")
    best: tuple[int, str] | None = None
    for attribute in ATTRIBUTES:
        cues = len(attribute.cue.findall(low))
        if cues == 0 or (best is not None and cues <= best[0]):
            continue
        name = attribute.name
        if attribute.topics is not None:
            topic = next((t for t, cue in attribute.topics if cue.search(low)), None)
            if topic is None:
                continue
            name = f"{name}:{topic}"
        best = (cues, name)
    return None if best is None else f"{subjects_named(text, known, speaker)}/{best[1]}"


# Attributes holding one value at a time: any change of them replaces the value.
SINGLE_VALUED = frozenset({"residence", "work", "relationship", "vehicle"})


def slot_stated(
    text: str, known: Collection[str] = (), speaker: str | None = None
) -> tuple[str, str] | None:
    """The first slot ``text`` states a value of, and the sentence that states it."""
    for sentence in sentences(text):
        slot = slot_of(sentence, known, speaker)
        if slot is not None:
            return slot, sentence
    return None


def slots_of(text: str, known: Collection[str] = (), speaker: str | None = None) -> list[str]:
    """The slots of each statement of ``text``, in order, once each."""
    found: list[str] = []
    for sentence in sentences(text):
        slot = slot_of(sentence, known, speaker)
        if slot is not None and slot not in found:
            found.append(slot)
    return found
