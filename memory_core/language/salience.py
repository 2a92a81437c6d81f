"""What makes a turn worth keeping, and what marks it as small talk: the cues salience
reads (:mod:`memory_core.consolidation.salience`).

The cues are deliberately plain word patterns, matched lower-cased: a missed
durable cue costs at most a proposal a person rejects, while a false one only
keeps a trace longer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memory_core.language.lexicon import FILLER, PETS, ROLES, SPEAKER_WORDS


def _alternation(words: Iterable[str]) -> str:
    return "|".join(sorted(words, key=len, reverse=True))


# Roles too short or too vague to tell of a relationship after "my": "my ma", "my ex".
_VAGUE_ROLES = frozenset({"ma", "pa", "doc", "ex", "mate"})


def durable_cues(months: Iterable[str]) -> dict[str, re.Pattern[str]]:
    """The patterns of each durable kind of fact (``months``: the month names a date
    may be written with)."""
    month = _alternation(months)
    cues = {
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
            rf"\bmy (?:\w+ )?(?:{_alternation(set(ROLES) - _VAGUE_ROLES)})s?\b"
            rf"|\b(?:married|divorced|engaged|widow|separated)\b|\bmy (?:{_alternation(PETS)})s?\b"
            r"|\bwe adopted\b|\bour (?:dog|cat|son|daughter|kids?|children|baby)\b|\bnamed [a-z]+\b"
            r"|\bcalled [a-z]+\b|\bfianc[eé]|\bgodmother|\bgodfather|\bnew boss\b|\bpregnant\b"
            r"|\bhaving a (?:girl|boy|baby)\b|\barrived\b.*\bkg\b|\b(?:mum|mom|dad)'s\b|\bparents\b"
            r"|\bneighbou?rs?\b|\bnext door\b|\b(?:got|have|adopted) (?:a|two|three) "
            r"(?:dog|cat|puppy|kitten)s?\b"
        ),
        "date": (
            r"birthday|\bbday\b|anniversar|\bwedding\b|due date|deadline|\bappointment|\bappt\b|"
            rf"\bturns \d+|\bborn on\b|\b\d{{1,2}}(?:st|nd|rd|th)?(?: of)? (?:{month})\b|"
            rf"\b(?:{month}) \d{{1,2}}(?:st|nd|rd|th)?\b|\bthe \d{{1,2}}(?:st|nd|rd|th)\b|"
            r"\b\d{1,2}/\d{1,2}\b"
        ),
        "commitment": (
            r"\bi promised\b|\bpromise\b|\bi'?ll (?!(?:talk|chat|see|speak|catch)\b)|"
            r"\bi (?:have|need|got) to\b|\bi must\b|\bi'?ve agreed\b|\bi agreed\b|\bsigned up\b|"
            r"\bcommitt?(?:ed|ment)\b|\bevery (?:monday|tuesday|wednesday|thursday|friday|saturday|"
            r"sunday|week|day|morning|evening|night|month)\b|\bremind me\b|\bhold me to\b|"
            r"\bbooked\b|\bscheduled\b|\bplanning to\b|\bgoing to (?!be\b)\w+"
        ),
        "preference": (
            r"\bprefers\b|"
            r"\bi (?:really |absolutely |much |do )?(?:prefer|love|hate|adore|loathe|like|dislike|"
            r"enjoy|detest)\b|\bfavou?rite\b|\bcan'?t stand\b|\bi'?m (?:a )?(?:vegan|vegetarian|"
            r"pescatarian)|\bi (?:always|never|usually|tend to)\b|\bi'?m not (?:a fan|into)\b|"
            r"\bnot a fan\b|\bi'?m (?:really )?into\b|\bmy go-to\b|"
            r"\bi don'?t (?:eat|drink|like|do)\b"
        ),
        "remember": (
            r"\bremember\b|\bdon'?t (?:let me )?forget\b|\bdo not forget\b|\bkeep in mind\b|"
            r"\bmake a note\b|\bnote that\b|\bfor the record\b|\bfor future reference\b|"
            r"\bnever forget\b|\bkeep this\b|\bjust so you know\b|\bin case (?:it|that) "
        ),
    }
    return {kind: re.compile(pattern) for kind, pattern in cues.items()}


# Greetings, thanks, acknowledgements, encouragement and goodbyes, and the words that
# carry no fact around them.
SMALLTALK = FILLER | frozenset(
    """
    hello hiya heya yo howdy morning evening afternoon night nite gn gm good great
    awesome amazing cool nice wow whoa thank ty cheers bye goodbye later soon talk
    care take sure no nope nah lmao hehe glad happy sound sounds love fun wonderful
    fantastic brilliant perfect exactly agree agreed right true welcome np problem
    worries worry enjoy day weekend luck congrats congratulations appreciate
    appreciated means going fine alright hope hear meet catch chat sweet lovely ace
    aww ah ugh huh sorry see speak ttyl cya brb gtg kk k hugs hug xoxo xx wish best
    keep touch course bet deal fair enough noted gotcha fab lush cute ha wooo woo
    yay hooray phew whew interesting wild crazy shame pity bummer oops message back
    reply help helps helped helpful useful works worked sorted proud support
    supportive supporting inspiring inspired inspiration stay strong safe posted job
    effort positive vibes together anytime excited exciting stoked wait words meant
    world touched heart hearing sharing share shared thoughtful incredible
    impressive impressed beautiful gorgeous stunning adorable super miss missed
    missing long time catching rock rocks hang tough lucky blessed grateful thankful
    thankyou pleasure blast gosh yikes dang damn geez jeez
    """.split()
)
# Words that turn a short line into a fact: times, numbers, a plan.
NOT_SMALLTALK = frozenset(
    """
    yesterday today tomorrow tonight week month year weekend monday tuesday wednesday
    thursday friday saturday sunday last next ago born died moved married
    """.split()
)


def addresses(text: str, name: str) -> bool:
    """Whether ``text`` says ``name`` to the other person: "Thanks, Mel!", "Hey Caroline",
    "Wow, Mel, ..."."""
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


# Questions that ask after the other person or the conversation, not about a thing.
SMALLTALK_QUESTION = re.compile(
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
# A shared photo's caption ("[shares a photo: a dog on a beach]") stands apart.
PHOTO = re.compile(r"\s*\[shares a photo:\s*|\]")
# The speaker as the subject or owner: "I ...", "my ...".
SELF = re.compile(rf"\b(?:{_alternation(SPEAKER_WORDS)})\b")
# What a speaker says of themselves only to be sociable.
SOCIAL = re.compile(
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

# Capitalised words that name no one: the pronoun, days, greetings, holidays.
NOT_NAMES = frozenset(
    """
    i i'm i've i'll i'd ok okay oh ah hey hi hello thanks thank happy merry good yes no
    christmas easter halloween valentine valentine's new year lol omg monday tuesday
    wednesday thursday friday saturday sunday it's that's he's she's what's let's there's
    here's who's where's how's today's tonight's user assistant
    """.split()
)
