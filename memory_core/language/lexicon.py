"""The words of the calendar: months, weekdays, seasons, counts and the words around them.

One table per concept, read by every reader of times (the sentence rewriting of
:mod:`~memory_core.language.times`, the query periods of
:mod:`~memory_core.language.periods`, the merge verifier and salience).
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
