"""Which attribute of a person a statement gives a value of, read from its words.

Detection is cues, not understanding: a sentence's attribute comes from words that
say what kind of fact it is (moved, flat, rent: residence; mg, prescribed:
medication); the attribute with the most cues in it wins, the earlier on a tie.
Attributes that hold many values at once -- habits, likes, plans -- take a topic
too ("habit:coffee"), so that drinking less coffee does not replace running more.
:data:`EXAMPLES` says the same in sentences, for reading by meaning with an embedder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Attribute:
    """A kind of fact: its name, its cue and, for attributes that hold many values at
    once, the topics one statement can be about (None: the attribute has one value)."""

    name: str
    cue: re.Pattern[str]
    topics: tuple[tuple[str, re.Pattern[str]], ...] | None = None


def cue(*patterns: str) -> re.Pattern[str]:
    """One pattern matching any of ``patterns``."""
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

# Attributes holding one value at a time: any change of them replaces the value.
SINGLE_VALUED = frozenset({"residence", "work", "relationship", "vehicle"})


def attribute_stated(sentence: str) -> str | None:
    """The attribute ``sentence`` states a value of ("residence", "habit:coffee"), or
    None: the attribute with the most cues in it (the earlier on a tie) that has a
    topic there when it needs one.  A question states none."""
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
    return None if best is None else best[1]


# Written examples of each attribute; "none" is talk that states no attribute.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "residence": (
        "I live in a flat in the city.",
        "We moved to a new house in another town.",
        "I'm renting a place near the centre now.",
        "I relocated to a different city.",
        "Finally settled into our new home.",
    ),
    "work": (
        "I work at a big company.",
        "I started a new job at another firm.",
        "I left my employer and joined a startup.",
        "My first month at the new company is done.",
        "I got hired by a different organisation.",
        "I work as a nurse.",
        "I got promoted to team lead.",
        "I changed careers and became a teacher.",
        "My job title is now senior engineer.",
        "I retrained for a new profession.",
    ),
    "relationship": (
        "I'm single.",
        "I'm dating someone new.",
        "We got engaged.",
        "My partner and I broke up.",
        "We got married last weekend.",
        "We're separated now.",
    ),
    "pet": (
        "We adopted a dog.",
        "My cat is called Luna.",
        "We brought home a new puppy.",
        "Our rabbit died.",
        "We named the kitten Pepper.",
    ),
    "medication": (
        "I take 50 mg of sertraline every day.",
        "My doctor changed my medication.",
        "The dose went up to 20 mg.",
        "I stopped taking the pills.",
        "He was prescribed a new drug.",
    ),
    "habit": (
        "I drink three coffees a day.",
        "I run 20 km a week.",
        "I cut down to one cigarette a day.",
        "I sleep about six hours a night.",
        "My daily screen time is four hours.",
    ),
    "likes": (
        "My favourite band is Radiohead.",
        "I love horror films.",
        "I can't stand spicy food anymore.",
        "These days I'm really into jazz.",
        "I hate running.",
    ),
    "plan": (
        "I'm planning a trip to Japan in April.",
        "We booked the wedding for June.",
        "I signed up for a marathon in September.",
        "We postponed the holiday to next year.",
        "I'm going to apply for a master's degree.",
    ),
    "vehicle": (
        "I drive an old Honda.",
        "I bought an electric car.",
        "I sold my motorbike.",
        "I cycle to work on my road bike.",
    ),
    "none": (
        "Can you give me a recipe for dinner?",
        "What's a good gift for a child?",
        "The weather is awful today.",
        "Thanks, that's helpful!",
        "Is it rude to decline a meeting?",
        "How do I fix my bike chain?",
        "Can you explain how this works?",
        "I had a long day.",
    ),
}
