"""The times the merge verifier reads texts with: months, weekdays, relative times.

The other word classes it reads (numbers and units, negators, people by role,
words that carry no fact, chat spellings) live in :mod:`memory_core.language.lexicon`;
their names are kept here for the readers that ask this module.
"""

from __future__ import annotations

from memory_core.language.lexicon import (
    FILLER,
    NEGATORS,
    NUMBER_WORDS,
    ROLES,
    SPELLING,
    STOPPING,
    UNITS,
)

__all__ = [
    "AMBIGUOUS_MONTHS",
    "FILLER",
    "MONTHS",
    "NEGATORS",
    "NUMBER_WORDS",
    "RELATIVE_TIMES",
    "ROLES",
    "SPELLING",
    "STOPPING",
    "TIME_QUALIFIERS",
    "UNITS",
    "WEEKDAYS",
]

MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "april": 4, "apr": 4,
    "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
    "september": 9, "sept": 9, "sep": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
    "december": 12, "dec": 12,
}  # fmt: skip
AMBIGUOUS_MONTHS = frozenset({"may", "march", "jan", "jun", "dec", "sep", "oct", "aug"})
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
TIME_QUALIFIERS = frozenset({"last", "next", "this", "ago", "early", "late", "later"})
