"""Times named in a query ("in 2022", "last May", "8 May 2023", "yesterday") as intervals.

:func:`periods` turns them into UTC intervals; search uses them only as a soft
signal (traces that happened inside get a boost), never as a filter, so a misread
time costs a little ranking, not a missing answer.  Relative times are taken from
``now``; a month or weekday named alone is its latest occurrence up to ``now``.
Month names that are also words ("may", "march") count only capitalised or next
to a day or year.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from memory_core.language.lexicon import AMBIGUOUS_MONTHS, MONTH_NUMBERS, WEEKDAYS
from memory_core.language.times import COUNT, count

Period = tuple[float, float]  # [start, end) in epoch seconds

_MONTH = r"(?P<month>" + "|".join(sorted(MONTH_NUMBERS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_PATTERNS = [
    ("day", re.compile(rf"\b{_YEAR}-(?P<month>[01]\d)-(?P<day>[0-3]\d)\b")),
    ("day", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.I)),
    ("day", re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.I)),
    ("month", re.compile(rf"\b{_YEAR}-(?P<month>[01]\d)\b")),
    ("month", re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.I)),
    ("year", re.compile(rf"(?<![-\d]){_YEAR}(?![-\d])")),
    ("month_alone", re.compile(rf"\b{_MONTH}\b", re.I)),
]
_RELATIVE = re.compile(
    r"\b(?P<word>yesterday|today|tonight|"
    r"(?P<which>last|this|past)\s+(?P<unit>week|month|year|weekend|"
    + "|".join(WEEKDAYS)
    + rf")|(?P<n>{COUNT})\s+"
    r"(?P<agounit>day|week|month|year)s?\s+ago)\b",
    re.I,
)
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


def periods(query: str, now: float) -> list[Period]:
    """The intervals of time ``query`` names, in the order found (maybe none)."""
    return [period for period, _ in named_periods(query, now)]


def named_periods(query: str, now: float) -> list[tuple[Period, str]]:
    """Each interval of time ``query`` names, with the words that name it."""
    today = datetime.fromtimestamp(now, UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    found: list[tuple[Period, str]] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(query):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            period = _absolute(kind, m, today)
            if period is not None:
                found.append((period, m.group(0)))
                taken.append(m.span())
    for m in _RELATIVE.finditer(query):
        period = _relative(m, today)
        if period is not None:
            found.append((period, m.group(0)))
    return found


def _month_number(raw: str) -> int | None:
    return int(raw) if raw.isdigit() else MONTH_NUMBERS.get(raw.lower().rstrip("."))


def _absolute(kind: str, m: re.Match[str], today: datetime) -> Period | None:
    try:
        if kind == "year":
            year = int(m["year"])
            return _span(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))
        month = _month_number(m["month"])
        if month is None or not 1 <= month <= 12:
            return None
        if kind == "month_alone":
            word = m["month"]
            sentence_start = not m.string[: m.start()].strip() or m.string[
                : m.start()
            ].rstrip().endswith((".", "!", "?"))
            if word.lower().rstrip(".") in AMBIGUOUS_MONTHS and (
                not word[0].isupper() or sentence_start
            ):
                return None  # "may I", "they march", "May I ask"
            year = today.year if month <= today.month else today.year - 1
            return _month_span(year, month)
        if kind == "month":
            return _month_span(int(m["year"]), month)
        start = datetime(int(m["year"]), month, int(m["day"]), tzinfo=UTC)
        return _span(start, start + timedelta(days=1))
    except ValueError:  # "31 February 2023"
        return None


def _relative(m: re.Match[str], today: datetime) -> Period | None:
    word = m["word"].lower()
    if word in ("today", "tonight"):
        return _span(today, today + timedelta(days=1))
    if word == "yesterday":
        return _span(today - timedelta(days=1), today)
    if m["agounit"]:
        days = _UNIT_DAYS[m["agounit"].lower()] * count(m["n"])
        center = today - timedelta(days=days)
        slack = timedelta(days=max(1, days // 4))
        return _span(center - slack, center + slack + timedelta(days=1))
    which, unit = m["which"].lower(), m["unit"].lower()
    back = which in ("last", "past")
    if unit in WEEKDAYS:
        delta = (today.weekday() - WEEKDAYS.index(unit)) % 7 or (7 if back else 0)
        day = today - timedelta(days=delta)
        return _span(day, day + timedelta(days=1))
    if unit in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday()) - timedelta(weeks=int(back))
        if unit == "weekend":
            return _span(monday + timedelta(days=5), monday + timedelta(days=7))
        return _span(monday, monday + timedelta(days=7))
    if unit == "month":
        year, month = today.year, today.month - int(back)
        if month == 0:
            year, month = year - 1, 12
        return _month_span(year, month)
    year = today.year - int(back)
    return _span(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))


def _month_span(year: int, month: int) -> Period:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return _span(start, end)


def _span(start: datetime, end: datetime) -> Period:
    return (start.timestamp(), end.timestamp())
