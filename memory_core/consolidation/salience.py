"""Salience: what decay alone may never forget, and what it forgets first.

Forgetting is by salience, not by age alone.  A trace's text is read for

* *durable* facts -- identity, health, relationships (a person named),
  dates and anniversaries, commitments, preferences, what the user asked to
  keep, news told in capitals -- which are never proposed for pruning by
  decay alone (only a person deletes them);
* *small talk* -- greetings, thanks, acknowledgements, goodbyes, a short
  reply to them -- which decays fastest.

Everything else decays over a horizon that importance and type stretch or
shorten.  Each answer says why, for the proposal a person reads.  The cues
are deliberately plain word patterns: a missed durable cue costs at most a
proposal a person rejects (and a rejection pins the trace), while a false
one only keeps a trace longer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memory_core import language
from memory_core.consolidation.analysis import SPEAKER_LABEL
from memory_core.consolidation.lexicon import FILLER, ROLES
from memory_core.language.lexicon import MONTH_NUMBERS

# Durable kinds and the word patterns that show them (matched lower-cased).
_DURABLE: dict[str, str] = {
    "identity": (
        r"\bmy name\b|\bi'?m called\b|\bcall me\b|\byears? old\b|\bi was born\b|"
        r"\bi work (?:as|at|for|in)\b|\bmy (?:job|profession|pronouns|nationality)\b|"
        r"\bi live (?:in|on|at|near)\b|\bi'?m from\b|\bi grew up\b|\bnative\b|"
        r"\b(?:moved|moving|relocat\w*) (?:to|in|into|house|out)\b|\bofficially moved\b|"
        r"\bmy (?:address|home town|hometown|flat|apartment|house)\b|\bcitizen|"
        r"\bpromot(?:ed|ion)\b|\bnew job\b|\bi'?m (?:a|an) [a-z]+ (?:at|for|in)\b|"
        r"\b(?:left|right)-handed\b|\breligio|\bi speak\b|\bfluent\b|\bmy (?:first )?language|"
        r"\bi'?m (?:\d+|in my \w+)\b|\bnever learn(?:ed|t) to\b|\bwe'?re at \d+|"
        r"\bgot the job\b|\bown (?:a|our|the) (?:house|home|flat)\b|"
        r"\bbought (?:a|our) (?:house|home|flat|car)\b|\bproposed\b|\bgraduat|"
        r"\bretir(?:ed|ing)\b|\bwe rent\b|\bi rent\b"
    ),
    "health": (
        r"allerg|diagnos|medicat|medicine|prescri|\b\d+(?:\.\d+)? ?(?:mg|mcg|ml|iu)\b|"
        r"\bdose\b|\bdosage\b|blood (?:type|pressure|test|sugar)|"
        r"\b(?:ab|[abo])(?: ?(?:neg|pos)\b|[+-](?!\w))|"
        r"asthma|diabet|epilep|cancer|tumou?r|surgery|\boperation|injur|fractur|sprain|"
        r"chronic|disorder|syndrome|therap|\bphysio|\bgp\b|doctor|\bdr\.? |hospital|clinic|"
        r"inhaler|insulin|pregnan|migraine|thyroid|depress|anxiety|adhd|autis|intoleran|"
        r"coeliac|celiac|epipen|vaccin|\bpills?\b|tablets?\b|\bsymptom|\bhearing aid|"
        r"\bglasses\b|contact lenses|\bscan\b|\bx-ray|\bmri\b|\bdentist|\bvet\b|discharged|"
        r"\b(?:knee|ankle|wrist|shoulder|hip|back|neck|elbow|foot|tooth|teeth|eye|ear|chest|"
        r"stomach|heart|lungs?|skin)(?:'s| is| hurts?| pain|ache)\b|\bsick\b|\bill\b|\bflu\b|"
        r"covid|\bfever\b|\bmeds\b|\bbroke (?:my|his|her)\b"
    ),
    "relationship": (
        r"\bmy (?:\w+ )?(?:"
        + "|".join(sorted(set(ROLES) - {"ma", "pa", "doc", "ex", "mate"}, key=len, reverse=True))
        + r")s?\b|\b(?:married|divorced|engaged|widow|separated)\b|\bmy (?:dog|cat|pet|puppy|"
        r"kitten|horse|rabbit|parrot|hamster)s?\b|\bwe adopted\b|\bour (?:dog|cat|son|daughter|"
        r"kids?|children|baby)\b|\bnamed [a-z]+\b|\bcalled [a-z]+\b|\bfianc[eé]|\bgodmother|"
        r"\bgodfather|\bnew boss\b|\bpregnant\b|\bhaving a (?:girl|boy|baby)\b|\barrived\b.*\bkg\b|"
        r"\b(?:mum|mom|dad)'s\b|\bparents\b|\bneighbou?rs?\b|\bnext door\b|"
        r"\b(?:got|have|adopted) (?:a|two|three) (?:dog|cat|puppy|kitten)s?\b"
    ),
    "date": (
        r"birthday|\bbday\b|anniversar|\bwedding\b|due date|deadline|\bappointment|\bappt\b|"
        r"\bturns \d+|\bborn on\b|\b\d{1,2}(?:st|nd|rd|th)?(?: of)? (?:"
        + "|".join(sorted(MONTH_NUMBERS, key=len, reverse=True))
        + r")\b|\b(?:"
        + "|".join(sorted(MONTH_NUMBERS, key=len, reverse=True))
        + r") \d{1,2}(?:st|nd|rd|th)?\b|\bthe \d{1,2}(?:st|nd|rd|th)\b|\b\d{1,2}/\d{1,2}\b"
    ),
    "commitment": (
        r"\bi promised\b|\bpromise\b|\bi'?ll (?!(?:talk|chat|see|speak|catch)\b)|"
        r"\bi (?:have|need|got) to\b|\bi must\b|\bi'?ve agreed\b|\bi agreed\b|\bsigned up\b|"
        r"\bcommitt?(?:ed|ment)\b|\bevery (?:monday|tuesday|wednesday|thursday|friday|saturday|"
        r"sunday|week|day|morning|evening|night|month)\b|\bremind me\b|\bhold me to\b|"
        r"\bbooked\b|\bscheduled\b|\bplanning to\b|\bgoing to (?!be\b)\w+"
    ),
    "preference": (
        r"\bi (?:really |absolutely |much |do )?(?:prefer|love|hate|adore|loathe|like|dislike|"
        r"enjoy|detest)\b|\bfavou?rite\b|\bcan'?t stand\b|\bi'?m (?:a )?(?:vegan|vegetarian|"
        r"pescatarian)|\bi (?:always|never|usually|tend to)\b|\bi'?m not (?:a fan|into)\b|"
        r"\bnot a fan\b|\bi'?m (?:really )?into\b|\bmy go-to\b|\bi don'?t (?:eat|drink|like|do)\b"
    ),
    "remember": (
        r"\bremember\b|\bdon'?t (?:let me )?forget\b|\bdo not forget\b|\bkeep in mind\b|"
        r"\bmake a note\b|\bnote that\b|\bfor the record\b|\bfor future reference\b|"
        r"\bnever forget\b|\bkeep this\b|\bjust so you know\b|\bin case (?:it|that) "
    ),
}
_DURABLE_RE = {kind: re.compile(pattern) for kind, pattern in _DURABLE.items()}
# Tags by which a caller asks for a trace to be kept.
KEEP_TAGS = frozenset({"keep", "pinned", "remember", "important"})

# Words of greetings, thanks, acknowledgements and goodbyes.
SMALLTALK = frozenset(
    """
    hi hey hello hiya heya yo howdy morning evening afternoon night nite gn gm good great
    awesome amazing cool nice wow whoa thanks thank thx ty cheers bye goodbye later soon
    talk care take sure yes yeah yep yup no nope nah lol lmao haha hahaha hehe glad happy
    sound sounds love fun wonderful fantastic brilliant perfect exactly totally agree agreed
    right true same too welcome np problem worries worry enjoy day weekend luck congrats
    congratulations appreciate appreciated means lot much how doing been going well fine
    alright hope hear meet again catch chat nice sweet lovely ace aww oh ah ugh hmm uh um
    huh sorry see speak ttyl cya brb gtg okay ok kk k hugs hug xoxo xx wish best keep
    touch soon definitely absolutely course bet deal fair enough noted
    got gotcha cool wonderful fab lush cute nice haha ha wooo woo yay hooray phew whew
    interesting wild crazy shame pity bummer oops thanks again message back reply help helps
    helped helpful useful works worked sorted enough proud support supportive supporting
    inspiring inspired inspiration stay strong safe posted job effort positive vibes
    together anytime excited exciting stoked wait kind words mean meant world touched
    heart hearing glad sharing share shared thoughtful awesome incredible impressive
    impressed beautiful gorgeous stunning cute adorable fantastic super totally wonderful
    miss missed missing long time catching awesome rock rocks keep going hang tough proud
    amazing awesome luck lucky blessed grateful thankful thankyou welcome pleasure ya y'all
    bet sounds fun blast lovely gosh wow yikes dang damn geez jeez omg whoa great
    """.split()
)
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
        if low in SMALLTALK or low in FILLER or (word[:1].isupper() and _vocative(text, word)):
            continue
        if low in _NOT_SMALLTALK or word[:1].isupper():
            return False
        other += 1
    # A question about something ("What got you into running?") asks for a fact.
    return other <= SMALLTALK_OTHER_WORDS and not (other and "?" in text)


def _vocative(text: str, name: str) -> bool:
    """A name said to the other person: "Thanks, Mel!", "Hey Caroline", "Wow, Mel, ..."."""
    return (
        re.search(
            rf"(?:^|[,!.?]\s*|\b(?:hey|hi|hello|thanks|thank you|bye|congrats|wow|yeah|yes|oh|"
            rf"sounds \w+|good (?:morning|night)|see you|love you)\s*,?\s*)"
            rf"{re.escape(name)}\s*[,!.?]"
            rf"|(?:^|[,!.?]\s*)(?:hey|hi|hello|thanks|bye|congrats|wow)\s+{re.escape(name)}\b",
            text,
            re.IGNORECASE,
        )
        is not None
    )


# Words that turn a short line into a fact: times, numbers, a plan.
_NOT_SMALLTALK = frozenset(
    """
    yesterday today tomorrow tonight week month year weekend monday tuesday wednesday
    thursday friday saturday sunday last next ago born died moved married
    """.split()
)


@lru_cache(maxsize=65_536)
def salience(text: str) -> Salience:
    """Read a trace's text for durable facts and small talk."""
    low = text.lower().replace("’", "'")
    for kind, pattern in _DURABLE_RE.items():
        found = pattern.search(low)
        if found is not None:
            return Salience(kind, found.group(0).strip(), smalltalk=False)
    user, assistant = _parts(text)
    if bool(user.strip()) and is_smalltalk(user) and _quiet(assistant):
        return Salience(None, None, smalltalk=True)
    name = _named(user)
    if name is not None:
        return Salience("relationship", name, smalltalk=False)
    shout = _EMPHASIS.search(user)
    if shout is not None:
        return Salience("emphasis", shout.group(0), smalltalk=False)
    return Salience(None, None, smalltalk=False)


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
        s.endswith("?") and not _SMALLTALK_QUESTION.search(s.lower().replace("’", "'"))
        for s in sentences(text)
    )


# Questions that ask after the other person or the conversation, not about a thing.
_SMALLTALK_QUESTION = re.compile(
    r"^\W*(?:(?:hey|hi|hello|oh|wow|so|and|thanks|ok|okay|yeah)\W+)?(?:[a-z]+[,!]\s*)?(?:"
    r"how(?:'s| is| are| have| has| was| were)? (?:you|ya|u|it|things|everything|life|"
    r"your (?:day|week|weekend|evening|morning))\b(?: (?:been|going|doing|goin|holding up|"
    r"treating you))?(?: lately| today| these days| recently)?|"
    r"how (?:have|has) (?:you|things|life) been(?: lately)?|how about you|what about you|"
    r"and you|you\??|what'?s (?:up|new|happening|going on|been up)(?: with you)?(?: lately)?|"
    r"anything new(?: with you)?|right|isn'?t it|don'?t you think|you know|ya know|"
    r"really|seriously|how come|why not|who knows|what do you think|you too"
    r")(?: since (?:we )?(?:last )?(?:talked|chatted|spoke|time))?\W*$"
)


def _of_self(sentence: str) -> bool:
    low = sentence.lower().replace("’", "'")
    return bool(_SELF.search(low)) and not _SOCIAL.search(low) and not is_smalltalk(sentence)


def sentences(text: str) -> list[str]:
    """A turn's sentences without the speakers' labels ("User: Gina: Thanks!" says
    "Thanks!"), a shared photo's caption one of its own; the whole text when it has none."""
    bare = SPEAKER_LABEL.sub("", _SPEAKER.sub("", text))
    found = [s for s in language.sentences(_PHOTO.sub("\n", bare)) if s.strip(" .")]
    return found or [bare.strip()]


# A shared photo's caption ("[shares a photo: a dog on a beach]") stands apart.
_PHOTO = re.compile(r"\s*\[shares a photo:\s*|\]")
# The speaker as the subject or owner: "I ...", "my ...".
_SELF = re.compile(r"\b(?:i|i'm|im|i've|i'd|i'll|my|mine|me|myself)\b")
# What a speaker says of themselves only to be sociable.
_SOCIAL = re.compile(
    r"thank|appreciat|\bglad\b|\bagree|\bi hope\b|\bi bet\b|\bi know\b|can'?t wait|"
    r"cannot wait|\bi'?m (?:so |really |very )?(?:happy|proud|excited|thrilled|sorry) for you\b|"
    r"\bproud of you\b|\bmiss (?:you|u|ya)\b|\blove (?:you|u|ya)\b|\bi'?m (?:always )?here\b|"
    r"\btalk|\bchat|catch up|see you|hear from|to hear|let me know|keep me posted|"
    r"\bi (?:feel you|get it|understand|see|mean|guess|think so|wish you)\b|\bme too\b|"
    r"\bsame here\b|\bi'?m sure\b|\btell me\b|\bwish me\b|"
    r"\bmeans? (?:a lot|so much|the world|everything|a great deal)\b|\b(?:inspires?|motivates?|"
    r"encourages?) me\b|\bmade my day\b|\bcheering me\b|\bby my side\b|\bgot my back\b|"
    r"\bhave my back\b|\bbelieving in me\b|\bbelieve in me\b|\bfaith in me\b"
)


MAX_PHATIC_WORDS = 80

# Words in capitals, two or more: news told with emphasis ("I GOT THE JOB").
_EMPHASIS = re.compile(r"\b[A-Z]{2,}\b[\s,.!]+\b[A-Z]{2,}\b")

# Capitalised words that name no one: the pronoun, days, months, greetings, holidays.
_NOT_NAMES = frozenset(
    """
    i i'm i've i'll i'd ok okay oh ah hey hi hello thanks thank happy merry good yes no
    christmas easter halloween valentine valentine's new year lol omg monday tuesday
    wednesday thursday friday saturday sunday it's that's he's she's what's let's there's
    here's who's where's how's today's tonight's user assistant
    """.split()
) | frozenset(MONTH_NUMBERS)


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
            if _vocative(sentence, word.split("'")[0]):
                continue
            if k > 0 or (word.endswith("'s") and len(words) > 1):
                return str(word)
    return None
