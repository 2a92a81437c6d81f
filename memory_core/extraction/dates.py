"""Relative times ("yesterday", "next Friday", "last May", "in 6 weeks") as dates.

A fact read months later must not say "yesterday": :func:`resolve_times`
rewrites each relative time in a sentence as the date it meant on the day the
sentence was said ("on 7 May 2023", "in May 2023", "the week of 1 May 2023").

One regular expression finds the phrases and plain ``datetime`` arithmetic
resolves them.  dateparser was tried and not kept: it cannot say whether a
phrase meant a day, a week or a month, misses "last May" and "Friday week",
and costs about a millisecond per phrase, on the ingest's hot path.

A bare weekday, month or day of the month ("on Thursday", "in September",
"the 26th") means the next one when the clause naming it looks ahead and the
last one when it tells of the past ("got me an extension, submission is now
15 August" looks ahead); "since" and "until" say which outright, and what a
time is "for" lies ahead.  A day of the month alone is of the month named by
name before it in the turn, where that fits ("in July ... on the 3rd").  A
weekday naming a kind of thing ("Sunday rides") and "in two years" after a
count ("third move in two years") or in a tale of the past are no dates.
"""

from __future__ import annotations

import re
from calendar import monthrange
from datetime import date, timedelta

from memory_core.extraction.english import MONTHS, WEEKDAYS, has_finite_verb, is_past

_WEEKDAY = "|".join(WEEKDAYS)
_MONTH = "|".join(MONTHS)
_COUNT = (
    r"a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of|a few|\d{1,3}"
)
_UNIT = r"days?|weeks?|wks?|fortnights?|months?|years?|yrs?"
_PART = r"(?:\s+(?P<{}_part>morning|afternoon|evening|night))?"  # "Friday evening"
_WDM_PART, _DW_PART, _WD_PART = (_PART.format(name) for name in ("wdm", "dw", "wd"))
_NUMBERS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split()
    )
}
_NUMBERS |= {"a": 1, "an": 1, "a couple of": 2, "a few": 3}
_PREPOSITIONS = frozenset(
    "on since until till by from before after of in during for around through over at "
    "starting about approx approx. approximately roughly nearly almost".split()
)
_LOOKING_BACK = frozenset({"since", "after"})
# "Booked the cabin for August": what a time is for is ahead.
_LOOKING_AHEAD = frozenset({"until", "till", "by", "before", "from", "starting", "for"})

_PHRASE = re.compile(
    r"\b(?:"
    r"(?P<day_before>the day before yesterday)"
    r"|(?P<day_after>the day after tomorrow)"
    rf"|(?P<ago_n>{_COUNT})\s+(?P<ago_unit>{_UNIT})\s+ago(?P<ago_today>\s+today)?"
    rf"|in\s+(?P<in_n>{_COUNT})\s+(?P<in_unit>{_UNIT})(?:'?s?\s+time)?"
    rf"|(?P<from_n>{_COUNT})\s+(?P<from_unit>{_UNIT})\s+from\s+(?:now|today)"
    rf"|(?P<wd_mod>last|next|this|this coming|coming)\s+(?P<wd_mod_day>{_WEEKDAY}){_WDM_PART}"
    rf"|(?P<wd_week>{_WEEKDAY})\s+week\b"
    rf"|a\s+week\s+(?:on|from)\s+(?P<week_on>{_WEEKDAY})"
    r"|(?:the\s+)?(?P<span_mod>last|next|this|coming)\s+"
    r"(?P<span>week|weekend|month|year|night|morning|afternoon|evening|spring|summer|autumn|fall|winter)"
    r"|(?P<eo_part>end|start|beginning|middle)\s+of\s+the\s+(?P<eo_span>week|month|year)"
    r"|(?P<weekend>the\s+weekend)"
    r"|(?P<new_year>the\s+new\s+year)"
    r"|(?P<other_day>the\s+other\s+day)"
    rf"|(?P<dayword>yesterday|today|tonight|tomorrow){_DW_PART}"
    rf"|(?P<month_mod>last|next|this|coming)\s+(?P<month_mod_name>{_MONTH})\b(?!\s*,?\s*\d)"
    rf"|(?P<dm_day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<dm_month>{_MONTH})\b(?!\s*,?\s*\d)"
    rf"|(?P<md_month>{_MONTH})\s+(?P<md_day>\d{{1,2}})(?:st|nd|rd|th)?\b(?![:,.]?\s*\d)"
    rf"|(?P<wd>{_WEEKDAY})(?!s|\s+(?:morning|afternoon|evening|night)s){_WD_PART}"
    r"|the\s+(?P<ordinal>\d{1,2})(?:st|nd|rd|th)"
    r"(?=\s*(?:[.,;:!?)]|$|(?:at|for|from|to|in|on|and|or|until|till|but|so|when|then|with|by)\b))"
    r")\b"
)
# A bare month ("in September", "since March") needs a preposition before it:
# "May" alone is as often a verb.
_BARE_MONTH = re.compile(
    rf"\b(?P<prep>in|since|from|by|until|till|before|after|during|through|around|of|for)\s+"
    rf"(?:(?P<part>early|late|mid|the end of|the start of|the beginning of)[\s-]+)?"
    rf"(?P<month>{_MONTH})\b(?!\s*,?\s*\d)"
)
# "Tues.", "31 Jan": capitalised abbreviations; the period stays only where it ends a
# sentence (not before a lower-case word, a number or a comma: "Aug., 3 nights").
_SHORT_MONTH = re.compile(
    r"\b(Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\b(\.)?(?=(\s+[a-z0-9]|\s*[,;:])?)"
)
_SHORT_WEEKDAY = re.compile(
    r"\b(Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)(\.)(?=(\s+[a-z0-9]|\s*[,;:])?)"
)
_FULL = {name[:3]: name.capitalize() for name in (*MONTHS, *WEEKDAYS)}
_TOKEN = re.compile(r"[a-z]+|\d+(?:st|nd|rd|th)\b")
_TIME_WORDS = frozenset(
    [
        *MONTHS,
        *WEEKDAYS,
        *(name[:3] for name in (*MONTHS, *WEEKDAYS)),
        *"""
    yesterday today tonight tomorrow ago day days week weeks weekend month months year years
    wk wks yr yrs fortnight fortnights night morning afternoon evening spring summer autumn
    fall winter new other end start beginning middle sept tues thur thurs
    """.split(),
    ]
)
# Before a phrase, these make it a noun of its own rather than a time from now.
_DETERMINERS = frozenset("my your his her our their its the this that every".split())
# What follows a time that is the sentence's subject: "Next weekend is ...".
_AS_SUBJECT = (" is ", " was ", " will be ", " has been ", " should be ", " would be ")
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}


def resolve_times(
    sentence: str, today: date, month: tuple[int, int] | None = None
) -> tuple[str, bool]:
    """``sentence`` with its relative times written as dates, and whether it names a time.

    ``month`` (year, month): the one named last before the sentence ("Booked the trip
    for August. Marcus drives up on the 9th."), which a day of the month alone means.
    """
    if not _mentions_time(sentence):
        return sentence, False
    text = _SHORT_WEEKDAY.sub(_full_name, sentence)
    text = _SHORT_MONTH.sub(_full_name, text)
    low = _lower(text)  # matching lower-case text is twice as fast as ignoring case
    sentence_past = is_past(low)
    named: list[tuple[int, tuple[int, int]]] | None = None  # read at the first "the 9th"
    edits: list[tuple[int, int, str]] = []
    for m in _PHRASE.finditer(low):
        before = _previous_word(low, m.start())
        if before in _DETERMINERS:  # "my last week at the bank", "the next day": no time
            continue
        if m["wd"] and _ATTRIBUTIVE.match(low, m.end()):  # "Sunday rides": no day
            continue
        clause = _clause(low, m.start(), m.end())
        past = is_past(clause) if has_finite_verb(clause) else sentence_past
        # "In two years" after a count ("third move in two years") or told of the past
        # ("we did it in two weeks") is how long something took, not a time to come.
        if m["in_n"] and (past or _COUNTED.search(low, 0, m.start())):
            continue
        # After a preposition, before "'s" ("today's news"), or the subject of the
        # sentence ("Next weekend is our anniversary"): the date alone, without "on".
        bare = (
            before in _PREPOSITIONS
            or low.startswith("'s", m.end())
            or (m.start() == 0 and low.startswith(_AS_SUBJECT, m.end()))
        )
        try:
            within = month
            if m["ordinal"]:  # a day of the month alone: of the month named before it
                if named is None:
                    named = _months_by_name(low, today, sentence_past)
                earlier = [at for where, at in named if where < m.start()]
                within = earlier[-1] if earlier else month
            written = _resolve(m, today, _looks_back(before, past), bare, within)
        except (OverflowError, ValueError):  # a date outside what datetime can hold
            continue
        if written is not None:
            if m.start() == 0:
                written = written[:1].upper() + written[1:]
            edits.append((m.start(), m.end(), written))
    text = _splice(text, edits)
    low = _lower(text)
    months = [
        (m.start("month"), m.end(), _bare_month(m, today, _past_at(low, m, sentence_past)))
        for m in _BARE_MONTH.finditer(low)
    ]
    return _splice(text, months), bool(edits or months)


def month_named(sentence: str, today: date) -> tuple[int, int] | None:
    """The (year, month) ``sentence`` names last by its name ("for August", "on 9 Aug."),
    as meant on ``today``; None when it names none ("next month" is no name)."""
    if not _mentions_time(sentence):
        return None
    low = _lower(_SHORT_MONTH.sub(_full_name, sentence))
    named = _months_by_name(low, today, is_past(low))
    return named[-1][1] if named else None


def _months_by_name(low: str, today: date, past: bool) -> list[tuple[int, tuple[int, int]]]:
    """Where ``low`` names a month by its name, and the (year, month) it means."""
    found = []
    for m in _BARE_MONTH.finditer(low):
        year, month = _bare_month(m, today, _past_at(low, m, past)).split()[::-1]
        found.append((m.start(), (int(year), MONTHS.index(month.lower()) + 1)))
    for m in _PHRASE.finditer(low):
        if m["dm_day"] or m["md_month"]:
            try:
                written = _resolve(m, today, _past_at(low, m, past), True)
            except (OverflowError, ValueError):
                continue
            if written is not None:
                _, month, year = written.split()
                found.append((m.start(), (int(year), MONTHS.index(month.lower()) + 1)))
    return sorted(found)


def _clause(low: str, start: int, end: int) -> str:
    """The clause of ``low`` that holds ``low[start:end]``: "submission is now 15
    August" of "my supervisor got me an extension, submission is now 15 August"."""
    opening = max((b.end() for b in _CLAUSE_BREAK.finditer(low, 0, start)), default=0)
    closing = _CLAUSE_BREAK.search(low, end)
    return low[opening : closing.start() if closing else len(low)]


def _past_at(low: str, m: re.Match[str], sentence_past: bool) -> bool:
    """Whether the clause a time is named in tells of the past; a clause without a verb
    of its own ("Went to the dentist, Tuesday") takes the sentence's tense."""
    clause = _clause(low, m.start(), m.end())
    return is_past(clause) if has_finite_verb(clause) else sentence_past


_CLAUSE_BREAK = re.compile(r"[,;:()]|\s[-\u2013\u2014]\s|\s(?:so|but|because|and then|though)\s")
# A weekday naming a kind of thing rather than a day: "Sunday rides", "Friday drinks".
_ATTRIBUTIVE = re.compile(
    r"\s+(?!(?:is|was|has|does|its|this|plus|us|as|his|hers|ours|yours|theirs|less)\b)"
    r"(?:[a-z]{2,}[^s\W']s|lunch|roast|dinner|brunch|breakfast|league|service|school|market"
    r"|club|shift|class|mass|paper)\b"
)
# Before "in two years": a count of what happened in that time.
_COUNTED = re.compile(
    r"\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th)"
    r"|once|twice|times)\b[^,;.!?]*$"
)


def _lower(text: str) -> str:
    """``text`` lower-cased letter for letter, so positions in it are positions in ``text``."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def _splice(text: str, edits: list[tuple[int, int, str]]) -> str:
    parts: list[str] = []
    last = 0
    for start, end, written in edits:
        parts += [text[last:start], written]
        last = end
    return "".join([*parts, text[last:]])


def names_day(sentence: str) -> bool:
    """Whether a sentence names a day or a span of its own ("next Friday", "in May",
    "yesterday", "on 3 June"); a time of day alone ("at 7:15") does not."""
    if not _mentions_time(sentence):
        return False
    low = _lower(_SHORT_MONTH.sub(_full_name, _SHORT_WEEKDAY.sub(_full_name, sentence)))
    return bool(_PHRASE.search(low) or _BARE_MONTH.search(low))


def _mentions_time(sentence: str) -> bool:
    """A cheap first look: most sentences name no time, and the phrase search is costly."""
    return any(w in _TIME_WORDS or w[0].isdigit() for w in _TOKEN.findall(sentence.lower()))


def _full_name(m: re.Match[str]) -> str:
    return _FULL[m[1][:3].lower()] + ("." if m[2] and not m[3] else "")


def written_day(d: date) -> str:
    """A day as facts write it: "7 May 2023"."""
    return f"{d.day} {MONTHS[d.month - 1].capitalize()} {d.year}"


def _written_month(year: int, month: int) -> str:
    return f"{MONTHS[month - 1].capitalize()} {year}"


def _previous_word(text: str, end: int) -> str:
    words = text[max(0, end - 20) : end].split()
    return words[-1].lower() if words else ""


def _looks_back(before: str, past: bool) -> bool:
    if before in _LOOKING_BACK:
        return True
    if before in _LOOKING_AHEAD:
        return False
    return past


def _resolve(
    m: re.Match[str],
    today: date,
    back: bool,
    has_preposition: bool,
    month: tuple[int, int] | None = None,
) -> str | None:
    """The written date for one matched phrase (None leaves it as it is)."""
    on = "" if has_preposition else "on "
    inside = "" if has_preposition else "in "
    g = m.groupdict()
    if g["day_before"]:
        return on + written_day(today - timedelta(days=2))
    if g["day_after"]:
        return on + written_day(today + timedelta(days=2))
    if g["ago_n"]:
        return _offset(today, g["ago_n"], g["ago_unit"], -1, on, inside, exact=bool(g["ago_today"]))
    if g["in_n"]:
        return _offset(today, g["in_n"], g["in_unit"], 1, "on ", "in ", exact=False)
    if g["from_n"]:
        return _offset(today, g["from_n"], g["from_unit"], 1, on, inside, exact=False)
    if g["wd_mod"]:
        day = _weekday(today, g["wd_mod_day"], g["wd_mod"].lower())
        return on + _part_of(g["wdm_part"], day)
    if g["wd_week"]:
        return on + written_day(_weekday(today, g["wd_week"], "next") + timedelta(days=7))
    if g["week_on"]:
        return on + written_day(_weekday(today, g["week_on"], "next") + timedelta(days=7))
    if g["span"]:
        return _span(today, g["span_mod"].lower(), g["span"].lower(), on, inside)
    if g["eo_part"]:
        return _end_of(today, g["eo_part"].lower(), g["eo_span"].lower())
    if g["weekend"]:
        saturday = _monday(today) + timedelta(days=5 if not back or today.weekday() >= 5 else -2)
        return f"{on}the weekend of {written_day(saturday)}"
    if g["new_year"]:
        return f"the new year of {today.year + 1 if today.month >= 7 else today.year}"
    if g["other_day"]:
        return f"a few days before {written_day(today)}"
    if g["dayword"]:
        shift = {"yesterday": -1, "tomorrow": 1}.get(g["dayword"].lower(), 0)
        return on + _part_of(g["dw_part"], today + timedelta(days=shift))
    if g["month_mod"]:
        return inside + _modified_month(today, g["month_mod"].lower(), g["month_mod_name"])
    if g["dm_day"]:
        return _day_of_month(today, int(g["dm_day"]), g["dm_month"], back)
    if g["md_month"]:
        return _day_of_month(today, int(g["md_day"]), g["md_month"], back)
    if g["wd"]:
        day = _weekday(today, g["wd"], "last" if back else "next")
        return on + _part_of(g["wd_part"], day)
    if g["ordinal"]:
        nth = int(g["ordinal"])
        if month is not None and 1 <= nth <= monthrange(*month)[1]:
            meant = date(*month, nth)
            if (meant <= today) if back else (meant >= today):
                return on + written_day(meant)
        return on + written_day(_ordinal_day(today, nth, back))
    return None


def _count(word: str) -> int:
    low = " ".join(word.lower().split())
    return int(low) if low.isdigit() else _NUMBERS.get(low, 1)


def _offset(
    today: date, count: str, unit: str, sign: int, on: str, inside: str, *, exact: bool
) -> str:
    n = _count(count) * sign
    u = unit.lower()
    if u.startswith("d"):
        return on + written_day(today + timedelta(days=n))
    if u.startswith(("w", "f")):
        days = n * (14 if u.startswith("f") else 7)
        return ("on " if exact else "around ") + written_day(today + timedelta(days=days))
    if u.startswith("m"):
        year, month = _add_months(today.year, today.month, n)
        return inside + _written_month(year, month)
    return inside + str(today.year + n)


def _add_months(year: int, month: int, n: int) -> tuple[int, int]:
    index = year * 12 + month - 1 + n
    return index // 12, index % 12 + 1


def _monday(d: date) -> date:
    return d - timedelta(days=d.weekday())


def _weekday(today: date, name: str, how: str) -> date:
    """The weekday ``name`` that ``how`` ("last", "next", "this", "coming") points at."""
    target = WEEKDAYS.index(name.lower())
    if how == "this":
        return _monday(today) + timedelta(days=target)
    if how == "last":
        return today - timedelta(days=(today.weekday() - target - 1) % 7 + 1)
    return today + timedelta(days=(target - today.weekday() - 1) % 7 + 1)


def _span(today: date, how: str, span: str, on: str, inside: str) -> str:
    step = {"last": -1, "next": 1}.get(how, 0)
    if span in {"night", "morning", "afternoon", "evening"}:
        return on + written_day(today + timedelta(days=step))  # "last night", "this morning"
    if span == "week":
        monday = _monday(today) + timedelta(days=7 * step)
        return f"{inside}the week of {written_day(monday)}"
    if span == "weekend":
        saturday = _monday(today) + timedelta(days=5 + 7 * step)
        if how == "last" and today.weekday() < 5:
            saturday += timedelta(days=7)  # on a weekday "last weekend" is the one just gone
        return f"{on}the weekend of {written_day(saturday)}"
    if span == "month":
        return inside + _written_month(*_add_months(today.year, today.month, step))
    if span == "year":
        return inside + str(today.year + step)
    return inside + _season(today, span, how)


def _season(today: date, season: str, how: str) -> str:
    """ "this", "last" or "next" summer (or spring, autumn, winter) as a season and year."""
    start = _SEASONS[season]
    begun = today.year if today.month >= start else today.year - 1  # the latest to begin
    under_way = _add_months(begun, start, 3) > (today.year, today.month)
    if how == "last":
        year = begun - 1 if under_way else begun
    elif how == "next":
        year = begun + 1
    else:  # "this": the one under way, else the one of this calendar year
        year = begun if under_way else today.year
    name = "autumn" if season == "fall" else season
    return f"winter {year}-{str(year + 1)[-2:]}" if start == 12 else f"{name} {year}"


def _end_of(today: date, part: str, span: str) -> str:
    if span == "week":
        return f"{part} of the week of {written_day(_monday(today))}"
    if span == "month":
        return f"{part} of {_written_month(today.year, today.month)}"
    return f"{part} of {today.year}"


def _part_of(part: str | None, day: date) -> str:
    """ "the evening of 12 May 2023" for "Friday evening", "12 May 2023" for "Friday"."""
    return f"the {part.lower()} of {written_day(day)}" if part else written_day(day)


def _modified_month(today: date, how: str, name: str) -> str:
    month = MONTHS.index(name.lower()) + 1
    if how == "this":
        return _written_month(today.year, month)
    if how == "last":
        return _written_month(today.year if month < today.month else today.year - 1, month)
    return _written_month(today.year if month > today.month else today.year + 1, month)


def _bare_month(m: re.Match[str], today: date, past: bool) -> str:
    """ "September 2023" for the "September" of "in September" (its prepositions kept)."""
    back = _looks_back(m["prep"], past)
    month = MONTHS.index(m["month"]) + 1
    if month == today.month:
        year = today.year
    elif back:
        year = today.year if month < today.month else today.year - 1
    else:
        year = today.year if month > today.month else today.year + 1
    return _written_month(year, month)


def _day_of_month(today: date, day: int, name: str, back: bool) -> str:
    month = MONTHS.index(name.lower()) + 1
    candidate = date(today.year, month, day)
    if back and candidate > today:
        candidate = candidate.replace(year=today.year - 1)
    elif not back and candidate < today:
        candidate = candidate.replace(year=today.year + 1)
    return written_day(candidate)


def _ordinal_day(today: date, day: int, back: bool) -> date:
    year, month = today.year, today.month
    for _ in range(12):  # the nearest month that has that day
        try:
            candidate = date(year, month, day)
        except ValueError:
            candidate = None
        if candidate is not None and (candidate <= today if back else candidate >= today):
            return candidate
        year, month = _add_months(year, month, -1 if back else 1)
    raise ValueError(f"no month has a day {day}")
