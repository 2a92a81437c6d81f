"""The grammar of times: relative times ("yesterday", "next Friday", "last May", "in 6
weeks") in a sentence, written as the dates they meant.

A fact read months later must not say "yesterday": :func:`resolve_times`
rewrites each relative time in a sentence as the date it meant on the day the
sentence was said ("on 7 May 2023", "in May 2023", "the week of 1 May 2023").

One regular expression finds the phrases and plain ``datetime`` arithmetic
(:mod:`memory_core.language.days`) resolves them.  dateparser was measured beside
it and not kept (``python -m bench.times``: on the held-out sentences 0.99 resolved
right in about 25 us against dateparser's 0.70 in 0.7-1.3 ms): it cannot say whether
a phrase meant a day, a week or a month, misses "last weekend", "Friday week" and
"the day before yesterday", reads "We" as Wednesday and "may" as May, and costs
about a millisecond a sentence, on the ingest's hot path.

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

from memory_core.language import days
from memory_core.language.days import written_day
from memory_core.language.grammar import has_finite_verb, is_past
from memory_core.language.lexicon import (
    COUNTS,
    MONTH_ABBREVIATIONS,
    MONTH_NUMBERS,
    MONTHS,
    PARTS_OF_DAY,
    WEEKDAY_ABBREVIATIONS,
    WEEKDAY_NUMBERS,
    WEEKDAYS,
)

_WEEKDAY = "|".join(WEEKDAYS)
_MONTH = "|".join(MONTHS)
# "a couple of" before "a": the longest count first.
COUNT = "|".join(sorted(COUNTS, key=len, reverse=True)) + r"|\d{1,3}"
_UNIT = r"days?|weeks?|wks?|fortnights?|months?|years?|yrs?"
_PART = r"(?:\s+(?P<{}_part>" + "|".join(PARTS_OF_DAY) + "))?"  # "Friday evening"
_WDM_PART, _DW_PART, _WD_PART = (_PART.format(name) for name in ("wdm", "dw", "wd"))
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
    rf"|(?P<ago_n>{COUNT})\s+(?P<ago_unit>{_UNIT})\s+ago(?P<ago_today>\s+today)?"
    rf"|in\s+(?P<in_n>{COUNT})\s+(?P<in_unit>{_UNIT})(?:'?s?\s+time)?"
    rf"|(?P<from_n>{COUNT})\s+(?P<from_unit>{_UNIT})\s+from\s+(?:now|today)"
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
    r"\b(" + "|".join(a.capitalize() for a in MONTH_ABBREVIATIONS) + r")\b(\.)?"
    r"(?=(\s+[a-z0-9]|\s*[,;:])?)"
)
_SHORT_WEEKDAY = re.compile(
    r"\b(" + "|".join(a.capitalize() for a in WEEKDAY_ABBREVIATIONS) + r")(\.)"
    r"(?=(\s+[a-z0-9]|\s*[,;:])?)"
)
_FULL = {name[:3]: name.capitalize() for name in (*MONTHS, *WEEKDAYS)}
_TOKEN = re.compile(r"[a-z]+|\d+(?:st|nd|rd|th)\b")
_TIME_WORDS = frozenset(
    [
        *MONTH_NUMBERS,
        *WEEKDAY_NUMBERS,
        *"""
    yesterday today tonight tomorrow ago day days week weeks weekend month months year years
    wk wks yr yrs fortnight fortnights night morning afternoon evening spring summer autumn
    fall winter new other end start beginning middle
    """.split(),
    ]
)
# Before a phrase, these make it a noun of its own rather than a time from now.
_DETERMINERS = frozenset("my your his her our their its the this that every".split())
# What follows a time that is the sentence's subject: "Next weekend is ...".
_AS_SUBJECT = (" is ", " was ", " will be ", " has been ", " should be ", " would be ")
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
        past = _past_at(low, m, sentence_past)
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


def names_day(sentence: str) -> bool:
    """Whether a sentence names a day or a span of its own ("next Friday", "in May",
    "yesterday", "on 3 June"); a time of day alone ("at 7:15") does not."""
    if not _mentions_time(sentence):
        return False
    low = _lower(_SHORT_MONTH.sub(_full_name, _SHORT_WEEKDAY.sub(_full_name, sentence)))
    return bool(_PHRASE.search(low) or _BARE_MONTH.search(low))


def _months_by_name(low: str, today: date, past: bool) -> list[tuple[int, tuple[int, int]]]:
    """Where ``low`` names a month by its name, and the (year, month) it means."""
    found = []
    for m in _BARE_MONTH.finditer(low):
        year, month = _bare_month(m, today, _past_at(low, m, past)).split()[::-1]
        found.append((m.start(), (int(year), MONTH_NUMBERS[month.lower()])))
    for m in _PHRASE.finditer(low):
        if m["dm_day"] or m["md_month"]:
            try:
                written = _resolve(m, today, _past_at(low, m, past), True)
            except (OverflowError, ValueError):
                continue
            if written is not None:
                _, month, year = written.split()
                found.append((m.start(), (int(year), MONTH_NUMBERS[month.lower()])))
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


def _mentions_time(sentence: str) -> bool:
    """A cheap first look: most sentences name no time, and the phrase search is costly."""
    return any(w in _TIME_WORDS or w[0].isdigit() for w in _TOKEN.findall(sentence.lower()))


def _full_name(m: re.Match[str]) -> str:
    return _FULL[m[1][:3].lower()] + ("." if m[2] and not m[3] else "")


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
        n = -count(g["ago_n"])
        return days.offset(today, n, g["ago_unit"], on, inside, exact=bool(g["ago_today"]))
    if g["in_n"]:
        return days.offset(today, count(g["in_n"]), g["in_unit"], "on ", "in ", exact=False)
    if g["from_n"]:
        return days.offset(today, count(g["from_n"]), g["from_unit"], on, inside, exact=False)
    if g["wd_mod"]:
        day = days.weekday(today, WEEKDAY_NUMBERS[g["wd_mod_day"]], g["wd_mod"])
        return on + days.part_of(g["wdm_part"], day)
    if g["wd_week"] or g["week_on"]:  # "Friday week", "a week on Friday"
        day = days.weekday(today, WEEKDAY_NUMBERS[g["wd_week"] or g["week_on"]], "next")
        return on + written_day(day + timedelta(days=7))
    if g["span"]:
        return days.span(today, g["span_mod"], g["span"], on, inside)
    if g["eo_part"]:
        return days.end_of(today, g["eo_part"], g["eo_span"])
    if g["weekend"]:
        shift = 5 if not back or today.weekday() >= 5 else -2
        return f"{on}the weekend of {written_day(days.monday(today) + timedelta(days=shift))}"
    if g["new_year"]:
        return f"the new year of {today.year + 1 if today.month >= 7 else today.year}"
    if g["other_day"]:
        return f"a few days before {written_day(today)}"
    if g["dayword"]:
        shift = {"yesterday": -1, "tomorrow": 1}.get(g["dayword"], 0)
        return on + days.part_of(g["dw_part"], today + timedelta(days=shift))
    if g["month_mod"]:
        named = MONTH_NUMBERS[g["month_mod_name"]]
        return inside + days.modified_month(today, g["month_mod"], named)
    if g["dm_day"]:
        return days.day_of_month(today, int(g["dm_day"]), MONTH_NUMBERS[g["dm_month"]], back)
    if g["md_month"]:
        return days.day_of_month(today, int(g["md_day"]), MONTH_NUMBERS[g["md_month"]], back)
    if g["wd"]:
        day = days.weekday(today, WEEKDAY_NUMBERS[g["wd"]], "last" if back else "next")
        return on + days.part_of(g["wd_part"], day)
    if g["ordinal"]:
        nth = int(g["ordinal"])
        if month is not None and 1 <= nth <= monthrange(*month)[1]:
            meant = date(*month, nth)
            if (meant <= today) if back else (meant >= today):
                return on + written_day(meant)
        return on + written_day(days.ordinal_day(today, nth, back))
    return None


def count(word: str) -> int:
    """The number a count of the grammar says: "3", "three", "a couple of"."""
    low = " ".join(word.lower().split())
    return int(low) if low.isdigit() else COUNTS.get(low, 1)


def _bare_month(m: re.Match[str], today: date, past: bool) -> str:
    """ "September 2023" for the "September" of "in September" (its prepositions kept)."""
    month = MONTH_NUMBERS[m["month"]]
    return days.written_month(days.month_year(today, month, _looks_back(m["prep"], past)), month)
