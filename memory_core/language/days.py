"""Days and spans counted from the day something was said, and written as facts write them.

The arithmetic under the grammar of times (:mod:`memory_core.language.times`): the
weekday "next" or "last" points at, the season "this summer" is, the nearest month
holding a 31st; and the written forms, "7 May 2023", "May 2023", "the week of 1 May
2023", "winter 2023-24".
"""

from __future__ import annotations

from datetime import date, timedelta

from memory_core.language.lexicon import MONTHS, PARTS_OF_DAY, SEASONS


def written_day(d: date) -> str:
    """A day as facts write it: "7 May 2023"."""
    return f"{d.day} {MONTHS[d.month - 1].capitalize()} {d.year}"


def written_month(year: int, month: int) -> str:
    """A month as facts write it: "May 2023"."""
    return f"{MONTHS[month - 1].capitalize()} {year}"


def add_months(year: int, month: int, n: int) -> tuple[int, int]:
    """The (year, month) ``n`` months after (or before) ``month`` of ``year``."""
    index = year * 12 + month - 1 + n
    return index // 12, index % 12 + 1


def monday(d: date) -> date:
    """The Monday of ``d``'s week."""
    return d - timedelta(days=d.weekday())


def weekday(today: date, target: int, how: str) -> date:
    """The weekday ``target`` (0 Monday) that ``how`` ("last", "next", "this",
    "coming") points at from ``today``."""
    if how == "this":
        return monday(today) + timedelta(days=target)
    if how == "last":
        return today - timedelta(days=(today.weekday() - target - 1) % 7 + 1)
    return today + timedelta(days=(target - today.weekday() - 1) % 7 + 1)


def offset(today: date, n: int, unit: str, on: str, inside: str, *, exact: bool) -> str:
    """``n`` days, weeks, fortnights, months or years (``unit``, by its first letter)
    from ``today``: a day, around a day, a month or a year."""
    if unit.startswith("d"):
        return on + written_day(today + timedelta(days=n))
    if unit.startswith(("w", "f")):
        days = n * (14 if unit.startswith("f") else 7)
        return ("on " if exact else "around ") + written_day(today + timedelta(days=days))
    if unit.startswith("m"):
        return inside + written_month(*add_months(today.year, today.month, n))
    return inside + str(today.year + n)


def span(today: date, how: str, name: str, on: str, inside: str) -> str:
    """The ``how`` ("last", "next", "this") ``name`` (a week, a weekend, a month, a
    year, a part of the day or a season), written."""
    step = {"last": -1, "next": 1}.get(how, 0)
    if name in PARTS_OF_DAY:
        return on + written_day(today + timedelta(days=step))  # "last night", "this morning"
    if name == "week":
        return f"{inside}the week of {written_day(monday(today) + timedelta(days=7 * step))}"
    if name == "weekend":  # "last weekend" is the one before this week's, even on a weekday
        saturday = monday(today) + timedelta(days=5 + 7 * step)
        return f"{on}the weekend of {written_day(saturday)}"
    if name == "month":
        return inside + written_month(*add_months(today.year, today.month, step))
    if name == "year":
        return inside + str(today.year + step)
    return inside + season(today, name, how)


def season(today: date, name: str, how: str) -> str:
    """ "this", "last" or "next" summer (or spring, autumn, winter) as a season and year."""
    start = SEASONS[name]
    begun = today.year if today.month >= start else today.year - 1  # the latest to begin
    under_way = add_months(begun, start, 3) > (today.year, today.month)
    if how == "last":
        year = begun - 1 if under_way else begun
    elif how == "next":
        year = begun + 1
    else:  # "this": the one under way, else the one of this calendar year
        year = begun if under_way else today.year
    name = "autumn" if name == "fall" else name
    return f"winter {year}-{str(year + 1)[-2:]}" if start == 12 else f"{name} {year}"


def end_of(today: date, part: str, name: str) -> str:
    """The ``part`` ("end", "start", "middle") of this week, month or year, written."""
    if name == "week":
        return f"{part} of the week of {written_day(monday(today))}"
    if name == "month":
        return f"{part} of {written_month(today.year, today.month)}"
    return f"{part} of {today.year}"


def part_of(part: str | None, day: date) -> str:
    """ "the evening of 12 May 2023" for "Friday evening", "12 May 2023" for "Friday"."""
    return f"the {part.lower()} of {written_day(day)}" if part else written_day(day)


def modified_month(today: date, how: str, month: int) -> str:
    """ "last", "next" or "this" ``month`` (1-12), written with its year."""
    if how == "this":
        return written_month(today.year, month)
    if how == "last":
        return written_month(today.year if month < today.month else today.year - 1, month)
    return written_month(today.year if month > today.month else today.year + 1, month)


def month_year(today: date, month: int, back: bool) -> int:
    """The year of the ``month`` (1-12) named alone: this one's, else the last or the
    next one's as ``back`` says."""
    if month == today.month:
        return today.year
    if back:
        return today.year if month < today.month else today.year - 1
    return today.year if month > today.month else today.year + 1


def day_of_month(today: date, day: int, month: int, back: bool) -> str:
    """The ``day`` of ``month`` this year, else the last or the next one's, written."""
    candidate = date(today.year, month, day)
    if back and candidate > today:
        candidate = candidate.replace(year=today.year - 1)
    elif not back and candidate < today:
        candidate = candidate.replace(year=today.year + 1)
    return written_day(candidate)


def ordinal_day(today: date, day: int, back: bool) -> date:
    """The nearest ``day`` of a month before (``back``) or after ``today``."""
    year, month = today.year, today.month
    for _ in range(12):  # the nearest month that has that day
        try:
            candidate = date(year, month, day)
        except ValueError:
            candidate = None
        if candidate is not None and (candidate <= today if back else candidate >= today):
            return candidate
        year, month = add_months(year, month, -1 if back else 1)
    raise ValueError(f"no month has a day {day}")
