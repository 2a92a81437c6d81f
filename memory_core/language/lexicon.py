"""The words of English, one reviewable table per concept: the calendar (months,
weekdays, seasons, counts and the words around them) and the closed word classes
(auxiliaries, pronouns, negators, number words, stop words, ...).

Every reader elsewhere (the extractor, the grammar of times, the merge verifier,
salience, search, the digest) asks these tables rather than keep lists of its own;
where a reader needs more words than a class holds, it adds them to the class here,
by name.
"""

from __future__ import annotations

# Each month's name and its abbreviations, in the calendar's order.
_MONTH_NAMES = (
    ("january", "jan"),
    ("february", "feb"),
    ("march", "mar"),
    ("april", "apr"),
    ("may",),
    ("june", "jun"),
    ("july", "jul"),
    ("august", "aug"),
    ("september", "sep", "sept"),
    ("october", "oct"),
    ("november", "nov"),
    ("december", "dec"),
)
_WEEKDAY_NAMES = (
    ("monday", "mon"),
    ("tuesday", "tue", "tues"),
    ("wednesday", "wed"),
    ("thursday", "thu", "thur", "thurs"),
    ("friday", "fri"),
    ("saturday", "sat"),
    ("sunday", "sun"),
)

MONTHS = tuple(names[0] for names in _MONTH_NAMES)  # "january" ... "december"
WEEKDAYS = tuple(names[0] for names in _WEEKDAY_NAMES)  # "monday" ... "sunday"
# Every name and abbreviation of a month, to its number (1-12).
MONTH_NUMBERS = {name: i + 1 for i, names in enumerate(_MONTH_NAMES) for name in names}
# Every name and abbreviation of a weekday, to its number as ``date.weekday()`` counts (0-6).
WEEKDAY_NUMBERS = {name: i for i, names in enumerate(_WEEKDAY_NAMES) for name in names}
MONTH_ABBREVIATIONS = tuple(name for names in _MONTH_NAMES for name in names[1:])
WEEKDAY_ABBREVIATIONS = tuple(name for names in _WEEKDAY_NAMES for name in names[1:])
# Month names that are as often other words ("may I", "they march", "Jan"): a month
# only when capitalised and not opening a sentence, or next to a day or a year.
# "aug" is not one: "rent goes up from aug" means August.
AMBIGUOUS_MONTHS = frozenset({"may", "march", "mar", "jan", "jun", "sep", "oct", "dec"})
# Days of no name of their own: a weekend, a weekday.
DAY_KINDS = {
    "weekend": "weekend",
    "weekends": "weekend",
    "weekday": "weekday",
    "weekdays": "weekday",
}
# Weekday abbreviations that are as often other words ("sat", "sun", "wed"): a day
# only when capitalised.
AMBIGUOUS_WEEKDAYS = frozenset({"sat", "sun", "wed"})

# The month each season begins in (northern), "fall" being autumn.
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
PARTS_OF_DAY = ("morning", "afternoon", "evening", "night")

# Counts of days, weeks, months and years: "two weeks ago", "a couple of days ago".
COUNTS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split()
    )
} | {"a": 1, "an": 1, "a couple of": 2, "a few": 3}

# Words of time a text may name, by what they name ("tmrw", "nightly") to one word.
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
# Words that point a time one way or another: "last week", "next month", "a year ago".
TIME_QUALIFIERS = frozenset({"last", "next", "this", "ago", "early", "late", "later"})
# Spans a qualifier points at: "last month", "next week", "this summer".
PERIODS = frozenset({"week", "month", "year", "weekend", "summer", "winter", "spring"})

AUXILIARIES = frozenset(
    """
    am is are was were be been being 'm 're 's 've 'd 'll have has had do does did
    will would shall should can could may might must ought wo ca isn't aren't wasn't
    weren't haven't hasn't hadn't don't doesn't didn't won't wouldn't can't couldn't
    shouldn't mustn't
    """.split()
)

# Simple past forms only (not participles such as "torn" or "done", which are
# as often adjectives); forms shared with the present ("put", "read") are left out.
IRREGULAR_PAST = frozenset(
    """
    ate awoke became began bent bit bled blew broke brought built bought burnt caught
    chose came crept dealt did dove drew dreamt drank drove dug fed felt fell fled flew
    forgot forgave froze fought found got gave went grew hung had heard hid held kept
    knelt knew laid led leant leapt learnt left lent lay lit lost made meant met paid
    rode rang rose ran said saw sought sold sent shook shone shot showed shrank sang
    sank sat slept slid spoke sped spent spun spat split stood stole stuck stung stank
    strode struck swore swept swam swung took taught tore told thought threw understood
    woke wore wove wept won wound wrote was were
    """.split()
)

# Adverbs that sit between a subject and its verb, or open a sentence whose subject
# is left unsaid: "I just booked", "finally finished the book".
ADVERBS = frozenset("just finally already still currently recently also never always".split())

SUBJECT_PRONOUNS = ("i", "we", "you", "he", "she", "they", "it")
# The speaker: "I", "my", "I'm".
SPEAKER_WORDS = frozenset("i i'm im i've i'd i'll me my mine myself".split())
# The speaker and those with them.
FIRST_PERSON = SPEAKER_WORDS | frozenset({"we", "we're", "our", "us"})
# One other person, spoken of: "her park", "he's moved".
THIRD_PERSON = frozenset("he he's she she's him her his hers himself herself".split())

NEGATORS = frozenset(
    "not no never nothing nobody none neither nor without cannot nowhere noone "
    "dont doesnt didnt isnt arent wasnt werent cant couldnt wont wouldnt shouldnt havent "
    "hasnt hadnt aint".split()
)
# Verbs and phrases that turn a state off: "I quit smoking", "I gave up meat".
STOPPING = frozenset({"quit", "quitted", "stopped", "ceased", "gave"})

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

# People described by their role rather than named, each word with its role's one name
# (the names statements are compared by: a word here is also matched by its stem and
# its typos, so "accountant" would be read in "account", "sibling" in "singing").
ROLES = {
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
PETS = frozenset("cat dog pet puppy kitten horse rabbit parrot hamster".split())
# Whom a sentence may be about without naming it ("Mum booked", "my sister Marta"): a
# person by role in the words of writing (a chat form reads as a word of its own: "Bro
# the traffic", "Vet appt"), a few roles the comparison of statements leaves out, a pet.
_CHAT_ROLES = frozenset("ma pa sis bro hubby gf bf doc vet mate pal buddy ex".split())
KIN_AND_ROLES = (
    (frozenset(ROLES) - _CHAT_ROLES)
    | frozenset("mam gran sibling bestie accountant baby lead".split())
    | PETS
)

# Function words, and the pieces a tokeniser leaves of contractions ("didn't": "t").
_FUNCTION_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during
    each few for from further had has have having he her here hers herself him
    himself his how i if in into is it its itself just me might more most must my
    myself of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these
    they this those through to too under until up us very was we were what when
    where which while who whom why will with would you your yours yourself
    yourselves also get got s t ll ve re m d now
    """.split()
)
# Words that carry no topic, for search: question words like "when" or "where" are
# here because FTS5 ranking gains nothing from them, and so are negators.
STOPWORDS = _FUNCTION_WORDS | frozenset(
    "aren didn doesn don hadn hasn haven isn wasn weren won y o ma no nor not".split()
)
# Words that carry no fact, for comparing statements: function words, fillers,
# intensifiers and chat noise, but no negator and no "won".
FILLER = _FUNCTION_WORDS | frozenset(
    """
    gets getting really actually basically honestly literally totally absolutely
    definitely pretty quite kinda sorta kind sort lot lots thing things something
    stuff anything everything bit little much many lol haha hahaha tbh btw imo idk
    fyi omg ok okay yeah yep yes yup hey hi hmm um uh oh well like u ur ya ye im ive
    id ill youre thats theres whats dont doesnt didnt currently still already always
    usually generally normally typically though anyway probably maybe perhaps guess
    suppose seem seems seemed bc cuz cos coz w pls plz thx thanks know mean say said
    tell told let lemme gonna wanna gotta guys folks man dude one ones way even ever
    """.split()
)

# Chat spellings and their written forms.
SPELLING = {
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
