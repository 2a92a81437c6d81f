"""Word lists the merge verifier and salience read texts with.

Plain, reviewable lists: numbers and units, negators, people described by their
role, and words that carry no fact.  The words of the calendar are
:mod:`memory_core.language.lexicon`'s.
"""

from __future__ import annotations

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
NEGATORS = frozenset(
    "not no never nothing nobody none neither nor without cannot nowhere noone "
    "dont doesnt didnt isnt arent wasnt werent cant couldnt wont wouldnt shouldnt havent "
    "hasnt hadnt aint".split()
)
# Verbs and phrases that turn a state off: "I quit smoking", "I gave up meat".
STOPPING = frozenset({"quit", "quitted", "stopped", "ceased", "gave"})
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
