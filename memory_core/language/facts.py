"""What kind of fact a statement is, by its words: the offline extractor's cues.

The first category whose cues a statement's main clause holds is its category (a
correction is read in the whole sentence); the other patterns tell what makes a
statement specific (a number, "my ...", a time of its own), hedged, or a filler
reply, and where its main clause ends.
"""

from __future__ import annotations

import re

from memory_core.language.lexicon import MONTHS


def _any(*patterns: str) -> re.Pattern[str]:
    """One lower-case pattern; matched against the lower-cased sentence (3x faster than re.I)."""
    return re.compile("|".join(f"(?:{p})" for p in patterns))


# "I live in manchester": about the user's life even with no name capitalised.
PERSONAL_FACTS = (
    r"\bmy (?:\w+(?:'s)? ){1,2}(?:is|are|was)\b",
    r"\bi (?:live|work|study|grew up) (?:in|at|for|as|on)\b",
    r"\bi'?m (?:a|an) \w+",
    r"\bi have (?:a|an|two|three|four|\d+)\b",
)
PERSONAL_FACT = _any(*PERSONAL_FACTS)

# First match wins, so the order matters: a correction that mentions a
# preference is a correction; "i'd love to" is a goal before it is a liking.
CATEGORY_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "correction",
        _any(
            r"^actually\b",
            r",\s*actually,",
            r"\bi meant\b",
            r"\bcorrection\b",
            r"\bthat'?s (?:wrong|not right|incorrect|not true|not what i)",
            r"\bi (?:misspoke|was wrong|got it wrong)\b",
            r"\bto clarify\b",
            r"\bnot\s+(?:\S+\s+){0,4}?but\s",
            r",\s+not\s+\w",
            r"^(?:no|nope),\s",
        ),
    ),
    (
        "action_item",
        _any(
            r"\bremind me\b",
            r"\bdon'?t (?:let me )?forget\b",
            r"\bto-?dos?\b",
            r"\bneed to\b",
            r"\bhave to\b",
            r"\bi'll\b",
            r"\bi will\b",
            r"\bwe should\b",
            r"\blet's\b",
            r"\bmake sure\b",
            r"\bfollow up\b",
            r"\bdeadline\b",
        ),
    ),
    (
        "goal",
        _any(
            r"\b(?:want|wanna|plan|planning|trying|hoping|hope|intend|aim|aiming) to\b",
            r"\b(?:i'?m|i am|we'?re|we are) planning\b",
            r"\b(?:decided|deciding|determined|going) to\b",
            r"\b(?:i'?d|would) (?:like|love) to\b",
            r"\bmy (?:\w+ )?(?:goal|aim|plan|dream|resolution)\b",
            r"\bgoal\b",
            r"\bworking (?:on|towards?)\b",
            r"\bsaving (?:up )?for\b",
        ),
    ),
    (
        "user_preference",
        _any(
            r"\b(?:i|we)\s+(?:\w+\s+){0,2}?(?:like|love|prefer|hate|dislike|enjoy|adore|loathe)\b",
            r"\bfavou?rite\b",
            r"\bprefer(?:s|red|ence)?\b",
            r"\bcan'?t stand\b",
            r"\b(?:a|not a|big|huge) fan of\b",
            r"\ballergic\b",
            r"\bi'?m (?:a )?(?:vegetarian|vegan)\b",
        ),
    ),
    (
        "emotional_context",
        _any(
            r"\b(?:feel|feeling|felt|feels)\b",
            r"\b(?:stressed|anxious|excited|sad|happy|upset|worried|nervous|frustrated)\b",
            r"\b(?:overwhelmed|angry|lonely|exhausted|thrilled|scared|depressed|proud)\b",
            r"\b(?:grateful|heartbroken|devastated|miserable|relieved|burnt out)\b",
        ),
    ),
    (
        "episodic",
        _any(
            r"\b(?:yesterday|last (?:week|month|year|night|weekend|time|summer|winter)|ago)\b",
            r"\b(?:earlier today|this morning|recently|the other day)\b",
            r"\b(?:i|we)\s+(?:\w+\s+)?(?:went|visited|met|saw|had|was|were|got|moved|bought)\b",
            r"\b(?:i|we)\s+(?:\w+\s+)?(?:tried|did|made|lost|won|spent|ate|watched|took|came)\b",
            r"\b(?:i|we)\s+(?:\w+\s+)?(?:left|joined|graduated|married|finished|started)\b",
            r"\b(?:i|we)\s+(?:just\s+)?\w+[^\We]ed\b",
        ),
    ),
    (
        "knowledge",
        _any(
            *PERSONAL_FACTS,
            r"\b(?:is|are|was|were|means|refers to|stands for|consists of|contains)\b",
        ),
    ),
)
DEFINITIONAL = re.compile(r"\b(?:is|are|was|were|means|refers to|stands for|consists of)\b")


FILLER_REPLY = re.compile(
    r"^(?:ok(?:ay)?|sure|great|cool|nice|awesome|got it|sounds good|no problem|you'?re welcome"
    r"|bye|goodbye|see you|lol|haha|hmm+|yes|yeah|yep|no|nope|alright|perfect|wow|i see"
    r"|that'?s (?:great|cool|nice|awesome|interesting|fine|ok(?:ay)?))\b",
    re.IGNORECASE,
)
OF_THE_SPEAKER = re.compile(r"\b(?:i|me|my|mine|myself|we|our|ours|us)\b")
POSSESSION = re.compile(r"\b(?:my|our)\s+\w")
PERFECT = re.compile(r"\b(?:i|we)(?:'ve|\s+have)\s+(?:\w+\s+)?(?:been|\w+ed|\w+en|read|got)\b")
# Where a main clause ends: "Starting The Silmarillion next, though Tomás says I'll hate it."
# "so" joins clauses after a comma or before a subject ("..., so she's on drops", "so
# we left"); elsewhere it intensifies ("so stressed about the kitchen").
SUBORDINATE = re.compile(
    r",?\s+(?:though|although|but|because|since|while|whereas)\s|,\s+so\s"
    r"|\s+so\s+(?=(?:i|we|he|she|they|it|you|that|there)\b)"
)
# An absolute time of its own: a year, a month ("since 2019", "in May").
ABSOLUTE_TIME = re.compile(rf"\b(?:1[89]\d\d|2\d\d\d|{'|'.join(MONTHS)})\b")
ENDS_ON_PRONOUN = re.compile(r"\b(?:it|that|this|them)\W*$")
HEDGE = re.compile(r"\b(?:maybe|might|perhaps|probably|i guess|not sure|kind of|sort of)\b")
NUMBER = re.compile(r"\b\d+(?:[.,:/]\d+)*%?")
# Capitalised only because they start a sentence (stopwords are excluded too).
NOT_ENTITIES = frozenset(
    """
    yesterday today tomorrow tonight lately recently actually also please maybe sure
    remember remind note btw let let's lets don't dont can't won't i'm i've i'd i'll
    it's that's there's here's what's okay ok yes yeah no nope sorry thanks hi hello
    hey well anyway honestly really just still last next every usually always never
    sometimes correction todo great good nice cool user assistant
    """.split()
)
