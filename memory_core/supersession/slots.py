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

from memory_core.extraction.discourse import statement
from memory_core.textutil import STOPWORDS

USER = "user"

_RELATIONS = {
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
_REL = "|".join(sorted(_RELATIONS, key=len, reverse=True))
# "my (best|older|...) sister(,) Priya": the relation, then perhaps a name.
_MY_RELATION = re.compile(
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


def _cue(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns))


_DRUG = (
    r"\b[a-z]{3,}(?:in|ine|ol|olol|pril|sartan|statin|xaban|pam|lam|pine|tine|pram|one|ide"
    r"|azole|mab|cillin|mycin|fen|tal|ate)\b"
)
_NUMBER = r"(?:\d+(?:[.,]\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|a|an|half)"
_PER = r"(?:a|per|each|every) (?:day|night|week|month|morning|evening|weekend)"

_HABIT_TOPICS = (
    ("coffee", _cue(r"\bcoffee", r"\bespresso", r"\blatte", r"\bflat whites?\b",
                    r"\bcappuccino", r"\bcaffeine", r"\bamericano")),
    ("tea", _cue(r"\btea\b", r"\bcuppas?\b")),
    ("alcohol", _cue(r"\balcohol", r"\bbeers?\b", r"\bwine\b", r"\bpints?\b", r"\bdrinks?\b",
                     r"\bdrinking\b", r"\bsober\b")),
    ("smoking", _cue(r"\bcigarettes?\b", r"\bsmok", r"\bvap(?:e|ing)", r"\bfags?\b")),
    ("screen", _cue(r"\bscreen ?time\b", r"\bon my phone\b", r"\bsocial media\b")),
    ("sleep", _cue(r"\bsleep", r"\bhours? a night\b", r"\bin bed\b")),
    ("running", _cue(r"\brun(?:s|ning)?\b", r"\bran\b", r"\bjog", r"\b(?:km|k|miles?) a week\b")),
    ("walking", _cue(r"\bsteps\b", r"\bwalk")),
    ("exercise", _cue(r"\bgym\b", r"\bwork ?outs?\b", r"\bworking out\b", r"\blift(?:ing)?\b",
                      r"\bswim", r"\bcycl", r"\byoga\b", r"\bclimb")),
    ("reading", _cue(r"\bbooks? a (?:week|month|year)\b", r"\breading\b")),
    ("sugar", _cue(r"\bsugar\b", r"\bsweets\b", r"\bchocolate\b", r"\bfizzy\b", r"\bsoda\b")),
    ("water", _cue(r"\bwater\b")),
)  # fmt: skip
_LIKE_TOPICS = (
    ("music", _cue(r"\bmusic\b", r"\bband\b", r"\balbums?\b", r"\bsongs?\b", r"\bjazz\b",
                   r"\brock\b", r"\bindie\b", r"\bpop\b", r"\bhip.?hop\b", r"\brap\b",
                   r"\bclassical\b", r"\bgigs?\b", r"\blisten")),
    ("films", _cue(r"\bfilms?\b", r"\bmovies?\b", r"\bhorror\b", r"\bcinema\b", r"\brom.?coms?\b",
                   r"\bthrillers?\b")),
    ("tv", _cue(r"\bshows?\b", r"\bseries\b", r"\btv\b", r"\bsitcoms?\b")),
    ("books", _cue(r"\bbooks?\b", r"\bnovels?\b", r"\bauthor\b", r"\bread(?:ing)?\b")),
    ("food", _cue(r"\bfood\b", r"\bcuisine\b", r"\beat(?:ing)?\b", r"\bdishes?\b", r"\bspicy\b",
                  r"\bsushi\b", r"\bmeat\b", r"\bvegan\b", r"\bvegetarian\b", r"\bcook")),
    ("drinks", _cue(r"\bcoffee\b", r"\btea\b", r"\bwine\b", r"\bbeer\b", r"\bwhisky\b")),
    ("sport", _cue(r"\bfootball\b", r"\bsoccer\b", r"\brugby\b", r"\bcricket\b", r"\btennis\b",
                   r"\bbasketball\b", r"\bteam\b", r"\bsupporters?\b")),
    ("games", _cue(r"\bgames?\b", r"\bgaming\b")),
    ("weather", _cue(r"\bweather\b", r"\bsummer\b", r"\bwinter\b", r"\bcold\b", r"\bheat\b")),
)  # fmt: skip
_PLAN_TOPICS = (
    ("race", _cue(r"\bmarathon\b", r"\bhalf\b", r"\brace\b", r"\b10k\b", r"\btriathlon\b",
                  r"\bultra\b")),
    ("trip", _cue(r"\btrip\b", r"\bholiday\b", r"\bvacation\b", r"\bflights?\b", r"\bfly(?:ing)?\b",
                  r"\btravel", r"\bvisit(?:ing)?\b", r"\bhoneymoon\b")),
    ("wedding", _cue(r"\bwedding\b", r"\bget(?:ting)? married\b")),
    ("move", _cue(r"\bmov(?:e|ing) (?:to|out|house|abroad)\b", r"\brelocat")),
    ("study", _cue(r"\bcourse\b", r"\bdegree\b", r"\bmasters?\b", r"\bphd\b", r"\bexams?\b",
                   r"\buni(?:versity)?\b", r"\bapply(?:ing)?\b")),
    ("party", _cue(r"\bparty\b", r"\bbirthday\b", r"\bcelebrat")),
)  # fmt: skip

# Tried in this order; the first whose cue a sentence holds is its attribute.
ATTRIBUTES: tuple[Attribute, ...] = (
    Attribute(
        "medication",
        _cue(
            r"\b\d+(?:\.\d+)? ?(?:mg|mcg|µg|ml|units?|iu)\b",
            r"\b(?:dose|dosage|prescri\w*|medication|meds|inhaler|insulin|antidepressants?"
            r"|blood thinner|statins?|tablets?|pills?)\b",
            r"\b(?:tak(?:e|es|ing|en)|on|onto|off|started|stopped|quit|switched to) (?:\w+ )?"
            + _DRUG,
        ),
    ),
    Attribute(
        "pet",
        _cue(
            r"\b(?:dogs?|cats?|pupp(?:y|ies)|pups?|kittens?|kitty|hamsters?|rabbits?|bunn(?:y|ies)"
            r"|guinea pigs?|parrots?|budgies?|tortoises?|turtles?|goldfish|fish|horses?|ponies"
            r"|pony|ferrets?|lizards?|snakes?|gecko|pets?)\b",
        ),
    ),
    Attribute(
        "relationship",
        _cue(
            r"\b(?:single|dating|engaged|married|divorced?|separated|widowed|proposed|fianc[eé]e?"
            r"|broke up|break ?up|split up|seeing someone|seeing each other|relationship"
            r"|boyfriend|girlfriend|husband|wife|partner|moved in together|first date|dates?)\b",
        ),
    ),
    Attribute(
        "work",
        _cue(
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
        _cue(
            r"\b(?:work(?:s|ing|ed)? (?:at|for|in)|job at|shifts? at|joined|hired|employer"
            r"|company|firm|office|started at|new job|offer from|laid off|made redundant"
            r"|redundancy|handed in my notice|left (?:my job|the company)|contract with"
            r"|transferred to|switched (?:over )?to the)\b",
        ),
    ),
    Attribute(
        "residence",
        _cue(
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
        _cue(
            rf"\b{_NUMBER} (?:\w+ ){{0,3}}{_PER}\b",
            r"\b(?:daily|nightly|weekly|times a (?:day|week)|every day|every night|a day"
            r"|per day|average|cut (?:down|back)|down to|up to|gave up|quit|stopped|started)\b",
        ),
        _HABIT_TOPICS,
    ),
    Attribute(
        "plan",
        _cue(
            r"\b(?:plan(?:ning|s|ned)?|going to|gonna|booked|signed up|entered|entry"
            r"|registered|postponed|cancel+ed|moved it to|pushed back|instead|rescheduled"
            r"|next (?:year|month|week|spring|summer|autumn|winter))\b",
        ),
        _PLAN_TOPICS,
    ),
    Attribute(
        "likes",
        _cue(
            r"\b(?:love[sd]?|like[sd]?|enjoy\w*|prefer\w*|favou?rite|hate[sd]?|can'?t stand"
            r"|dislike[sd]?|into|obsessed|fan of|gone off|gave up on|refuses? to|sick of"
            r"|tired of|180|on repeat|converted)\b",
        ),
        _LIKE_TOPICS,
    ),
    Attribute(
        "vehicle",
        _cue(
            r"\b(?:car|cars|motorbike|motorcycle|scooter|van|electric car|drive an?|driving an?)\b"
        ),
    ),
)

# The words questions of an attribute use.
_ASKED = (
    ("work", _cue(r"\b(?:job|jobs|career|employer|profession|occupation|work(?:ing)? (?:at|as|for)"
                  r"|where do (?:i|they|you|(?:he|she) does) work|role at work|what do i do)\b")),
    ("residence", _cue(r"\b(?:where (?:do|does|am|is|are) \w+ (?:live|living|based|staying)"
                       r"|live|living|address|hometown|which (?:town|city|country))\b")),
    ("relationship", _cue(r"\b(?:single|dating|seeing anyone|seeing someone|relationship"
                          r"|married|engaged|boyfriend|girlfriend)\b")),
    ("pet", _cue(r"\b(?:pets?|dogs?|cats?|pupp(?:y|ies)|kittens?)\b")),
    ("medication", _cue(r"\b(?:medication|meds|dose|dosage|pills?|prescri\w*|tablets?)\b")),
    ("habit", _cue(r"\b(?:how (?:much|many|often)|a day|a week|per day|per week|daily|weekly)\b")),
    ("plan", _cue(r"\b(?:plan|plans|planning|when is|when's|going to)\b")),
    ("likes", _cue(r"\b(?:like|likes|into|favou?rite|enjoy|fan of|hate|can't stand)\b")),
    ("vehicle", _cue(r"\b(?:car|drive|vehicle)\b")),
)  # fmt: skip
_EARLY = 12  # characters into a sentence that its subject is named by
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")


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
    # The statement is about them when they are named early, as its subject.
    if (m := _MY_RELATION.search(sentence)) and m.start() <= _EARLY:
        name = m.group(2)
        return (name or _RELATIONS[m.group(1).lower()]).lower()
    if m := _THEIR_RELATION.match(sentence.strip()):
        name = m.group(2)
        return (name or _RELATIONS[m.group(1).lower()]).lower()
    opening = _OPENING.match(sentence.strip())
    if opening:
        word = opening.group(1)
        low = word.lower()
        if low in _RELATIONS:
            return _RELATIONS[low]
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


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (all of it when it has no sentence)."""
    found = _SENTENCE.match(text)
    return found.group(0).strip() if found else text


def persons_named(text: str) -> set[str]:
    """The names ``text`` gives people by their relation ("my husband Greg": greg)."""
    return {m.group(2).lower() for m in _MY_RELATION.finditer(text) if m.group(2)}


def speaker_subject(speaker: str | None) -> str:
    """The subject of what a speaker says of themselves: their name, or the user."""
    name = (speaker or "").strip().lower().replace("/", " ")
    return name or USER


def subject_asked(question: str) -> str:
    """Whom a question asks about: a relation or name it holds ("where does my sister
    live", "is Tom still at Tesco"), else the user."""
    if m := _MY_RELATION.search(question):
        return (m.group(2) or _RELATIONS[m.group(1).lower()]).lower()
    words = question.replace("?", " ").split()
    for word in words[1:]:
        bare = word.strip(",.!;:").removesuffix("'s")
        low = bare.lower()
        if bare[:1].isupper() and bare != "I" and low not in STOPWORDS:
            return _RELATIONS.get(low, low)
        if low in _RELATIONS:
            return _RELATIONS[low]
    return USER


def attribute_asked(question: str) -> str | None:
    """The attribute a question's words cue: as a statement of it would, or by the
    words a question of it uses ("what is my job", "where do I live")."""
    low = question.lower().replace("\u2019", "'")
    for name, cue in _ASKED:
        if cue.search(low):
            return name
    slot = slot_of(question.replace("?", ".").rstrip() or question)
    return None if slot is None else base_attribute(slot)


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


# Words that say a value changed: a statement holding one is an update of what it states.
_CHANGE = _cue(
    r"\b(?:now|nowadays|anymore|any more|no longer|these days|at the moment|currently"
    r"|switched|switching|moved|moving to|relocated|relocating|quit|left my|leaving my"
    r"|changed|instead|promoted|dropped|down to|up to|cut (?:down|back)|stopped|gave up"
    r"|given up|took up|became|got (?:married|engaged|divorced)|broke up|split up"
    r"|separated|traded|sold|upgraded|retired|used to|not .{0,30} anymore|officially"
    r"|no more|from now on|went back|back to)\b"
)
_SPECIFIC = re.compile(r"(?<!^)(?<![.!?] )\b(?:[A-Z][\w'-]+|\d+(?:[.,]\d+)?)")


# A question about how things are now: a word of the present ("these days"), or a
# verb in the present tense asking a value held one at a time ("where do I live",
# "what's my job") -- not a word of the past ("where did I live", "what was my
# first job", "what has she done").
_NOW_WORDS = _cue(
    r"\b(?:now|nowadays|these days|currently|at the moment|right now|at present|still"
    r"|anymore|any more|lately|this (?:year|month|week)|today)\b"
)
_PAST_WORDS = _cue(
    r"\b(?:did|was|were|had|used to|back then|at (?:that|the) (?:time|point)|before"
    r"|previously|originally|formerly|first|ago|last (?:year|month|week|time)"
    r"|has|have|might|would|could)\b",
    r"\bin (?:19|20)\d\d\b",
)
_PRESENT_VERBS = _cue(r"\b(?:is|are|am|do|does|isn't|aren't|don't|doesn't)\b", r"\w(?:'s|'re|'m)\b")


def asks_now(question: str) -> bool:
    """Whether a question asks how things are now (at the time it is asked)."""
    low = question.lower().replace("\u2019", "'")
    if _NOW_WORDS.search(low) is not None:
        return "did" not in low.split()
    if _PAST_WORDS.search(low) or not _PRESENT_VERBS.search(low):
        return False
    # Without a word of the present, only a value held one at a time is surely asked
    # as of now ("where does she live"); "what is the name of her puppy" may ask of
    # any puppy she had.
    return attribute_asked(question) in SINGLE_VALUED


# A look back: a statement about how things were, not how they are ("found my old
# map from the Sheffield days", "back when he was rewiring flats").
_LOOKING_BACK = _cue(
    r"\b(?:used to|back when|back in the day|in those days|(?:thinking|looking|think) back"
    r"|\w+ days\b(?=\s*[.!,;])"
    r"|remember(?:ed|ing)?|nostalgi\w*|reminisc\w*|throwback|from when|once upon"
    r"|(?:my|our|his|her|their|the|\w+'s) old (?!enough\b)\w+"
    r"|(?:the|that) (?:day|week|month|year|time|summer) (?:i|we|he|she) (?:was|were|met|moved"
    r"|had|lived|worked|started)"
    r"|found (?:a|an|the|my|our) (?:old |)(?:photo|picture|video|map|card|letter|certificate"
    r"|ticket|bib|receipt))\b"
)


def looks_back(statement: str) -> bool:
    """Whether a statement tells how things were rather than how they are."""
    return _LOOKING_BACK.search(statement.lower().replace("\u2019", "'")) is not None


def tells(said: str) -> bool:
    """Whether what was said opens on a statement: news comes first ("Started
    levothyroxine 50 mcg. Do I take it before breakfast?"); what opens on a
    question or a request asks for something ("Any tips for keeping Dad busy?
    He was used to his own place."), and an exclamation of how things are ("Funny
    how quiet Sundays are now") remarks on them rather than telling news."""
    opening = first_sentence(said)
    return bool(said) and statement(opening) is not None and not _REMARK.match(opening)


# "Funny how ...", "Weird that ...": an exclamative remark.
_REMARK = re.compile(
    r"(?i)^(?:(?:it's|it is|so|how|isn't it)\s+)?(?:funny|weird|strange|crazy|amazing|wild|odd"
    r"|mad|interesting|hilarious|incredible|bizarre|nuts|wonderful|sad|mental)\s+(?:how|that)\b"
)


def said_in(content: str) -> str:
    """What the user said in a trace's words: a turn's user paragraphs ("User: ...",
    "User (Ana): ..."), without their labels; any other content whole."""
    if not content.startswith("User"):
        return content
    parts = [p for p in content.split("\n\n") if p.startswith("User")]
    return " ".join(p.split(": ", 1)[1] if ": " in p else p for p in parts)


def said_by(content: str, speaker: str | None) -> str:
    """A memory's words without the speaker's label it may open with ("Ana: ...")."""
    if speaker and content.startswith(f"{speaker}: "):
        return content[len(speaker) + 2 :]
    return content


def changes(statement: str) -> bool:
    """Whether a statement says that something changed ("moved", "now", "no longer")."""
    return _CHANGE.search(statement.lower().replace("\u2019", "'")) is not None


def restates(new: str, old: str) -> bool:
    """Whether ``new`` plausibly gives another value of what ``old`` stated: it says
    something changed, or the two name different specifics (places, names, amounts).
    A second mention of the same values ("I love painting", later "painting again
    today") is not an update."""
    if changes(new):
        return True
    theirs, ours = _specifics(old), _specifics(new)
    return bool(theirs) and bool(ours) and not ours <= theirs


def _specifics(statement: str) -> set[str]:
    """The specifics a statement names (capitalised words, numbers), leaving out what
    names no value: "I" and its contractions, the one spoken to ("Thanks, Ben!"),
    and the day a fact was stamped with when it was told ("(as of 1 March 2023)")."""
    text = _VOCATIVE.sub(" ", _STAMP.sub("", statement))
    return {w.lower() for w in _SPECIFIC.findall(text) if not _I.fullmatch(w)}


_I = re.compile(r"I(?:'[a-z]+)?")
_STAMP = re.compile(r" \(as of [^)]*\)")
_VOCATIVE = re.compile(
    r"(?i:\b(?:thanks|thank you|hey|hi|hello|cheers|wow|yeah|yes|oh|aw+|congrats"
    r"|congratulations|sorry|love you|miss you|good luck|bye|see ya)),?\s+[A-Z][a-z]+\b"
)


# Attributes holding one value at a time: any change of them replaces the value.
SINGLE_VALUED = frozenset({"residence", "work", "relationship", "vehicle"})


def restates_by_words(new: str, old: str, slot: str) -> bool:
    """:func:`restates`, by words alone (no embedder to weigh meaning): the slot holds
    one value at a time (where someone lives, works) and ``new`` says it changed.
    Words cannot tell whether a habit, a liking or a plan is the same one: without
    an embedder those are left unchained."""
    return changes(new) and base_attribute(slot) in SINGLE_VALUED and bool(old.strip())


def slot_stated(
    text: str, known: Collection[str] = (), speaker: str | None = None
) -> tuple[str, str] | None:
    """The first slot ``text`` states a value of, and the sentence that states it."""
    for sentence in _SENTENCE.findall(text):
        slot = slot_of(sentence, known, speaker)
        if slot is not None:
            return slot, sentence.strip()
    return None


def slots_of(text: str, known: Collection[str] = (), speaker: str | None = None) -> list[str]:
    """The slots of each statement of ``text``, in order, once each."""
    found: list[str] = []
    for sentence in _SENTENCE.findall(text):
        slot = slot_of(sentence, known, speaker)
        if slot is not None and slot not in found:
            found.append(slot)
    return found
