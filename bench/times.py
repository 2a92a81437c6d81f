"""Times in what people say, resolved to the dates they meant: the grammar of times beside
dateparser.

Each row of ``bench/data/times_*.jsonl`` is a sentence, the day it was said, and the
day or span its time meant (``2026-03-10``, ``2026-03``, ``2026``, or a range
``2026-05-04/2026-05-10``; null when it names no time: "Sunday rides", "in two
weeks" told of the past).  Three readers resolve it:

* ``grammar``: :func:`memory_core.language.times.resolve_times`, as the offline
  extractor writes a fact; the first date the rewritten sentence states is its answer
  ("on 8 May 2026", "in March 2026", "the week of 4 May 2026", "summer 2025"; a date
  it leaves as it is, "March 5th, 2021", counts too);
* ``periods``: :func:`memory_core.language.periods.named_periods`, as search reads a
  query; its first interval;
* ``dateparser`` (when installed): ``dateparser.search.search_dates`` with the day
  said as its base; of the dates it finds, the one read from the longest words.

A resolution is right when it lies within the labelled day or span (a single day
inside "2026-03" is right, "March 2026" for "2026-03-10" is not) and, for a row that
names no time, when there is none.  The time per sentence is the best of a few passes.

    python -m bench.times [--files dev,heldout] [--show N]

``dev`` is for looking at misses; ``heldout`` is measured only once a method is settled.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from calendar import monthrange
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from memory_core.language.lexicon import MONTH_NUMBERS, SEASONS
from memory_core.language.periods import named_periods
from memory_core.language.times import resolve_times

DATA = Path(__file__).resolve().parent / "data"

Span = tuple[date, date]  # first and last day, both included
Reader = Callable[[str, date], Span | None]

_MONTH = "|".join(name.capitalize() for name in MONTH_NUMBERS)
# The forms the grammar writes a date in, the widest last.
_WRITTEN = re.compile(
    rf"(?P<kind>the week of |the weekend of )?"
    rf"(?P<day>\d{{1,2}}) (?P<month>{_MONTH}) (?P<year>\d{{4}})"
    rf"|(?P<md_month>{_MONTH}) (?P<md_day>\d{{1,2}})(?:st|nd|rd|th)?,? (?P<md_year>\d{{4}})"
    rf"|(?P<month_alone>{_MONTH}) (?P<month_year>\d{{4}})"
    rf"|(?P<season>spring|summer|autumn|winter) (?P<season_year>\d{{4}})"
    r"|\b(?P<year_alone>(?:19|20)\d\d)\b"
)


def span(label: str) -> Span:
    """The first and last day of a labelled day, month, year or range."""
    if "/" in label:
        first, last = label.split("/")
        return date.fromisoformat(first), date.fromisoformat(last)
    parts = [int(p) for p in label.split("-")]
    if len(parts) == 3:
        day = date(*parts)
        return day, day
    if len(parts) == 2:
        return date(*parts, 1), date(*parts, monthrange(*parts)[1])
    return date(parts[0], 1, 1), date(parts[0], 12, 31)


def written_span(text: str) -> Span | None:
    """The first date ``text`` states in the forms the grammar writes, as a span."""
    m = _WRITTEN.search(text)
    if m is None:
        return None
    if m["day"]:
        day = date(int(m["year"]), MONTH_NUMBERS[m["month"].lower()], int(m["day"]))
        width = {"the week of ": 6, "the weekend of ": 1}.get(m["kind"] or "", 0)
        return day, day + timedelta(days=width)
    if m["md_month"]:  # a date the sentence stated as it is: "March 5th, 2021"
        day = date(int(m["md_year"]), MONTH_NUMBERS[m["md_month"].lower()], int(m["md_day"]))
        return day, day
    if m["month_alone"]:
        return span(f"{m['month_year']}-{MONTH_NUMBERS[m['month_alone'].lower()]:02d}")
    if m["season"]:
        start = date(int(m["season_year"]), SEASONS[m["season"]], 1)
        last = start.replace(day=28) + timedelta(days=62)  # into the season's third month
        return start, last.replace(day=monthrange(last.year, last.month)[1])
    return span(m["year_alone"])


def by_grammar(text: str, said: date) -> Span | None:
    return written_span(resolve_times(text, said)[0])


def by_periods(text: str, said: date) -> Span | None:
    now = datetime(said.year, said.month, said.day, 12, tzinfo=UTC).timestamp()
    found = named_periods(text, now)
    if not found:
        return None
    (start, end), _ = found[0]
    first = datetime.fromtimestamp(start, UTC).date()
    return first, datetime.fromtimestamp(end, UTC).date() - timedelta(days=1)


def dateparser_reader() -> Reader | None:
    """dateparser's search of a sentence, when it is installed."""
    try:
        from dateparser.search import search_dates  # type: ignore[import-untyped]
    except ImportError:
        return None

    def read(text: str, said: date) -> Span | None:
        base = datetime(said.year, said.month, said.day, 12)
        found = search_dates(text, languages=["en"], settings={"RELATIVE_BASE": base})
        if not found:
            return None
        # several finds: the longest ("in June 2018" rather than the "We" it reads as Wednesday)
        day = max(found, key=lambda f: len(f[0]))[1].date()
        return day, day

    return read


def right(found: Span | None, expected: str | None) -> bool:
    """Whether a resolution lies within the labelled span (or both name none)."""
    if expected is None or found is None:
        return expected is None and found is None
    first, last = span(expected)
    return first <= found[0] and found[1] <= last


def score(rows: Sequence[dict[str, Any]], read: Reader) -> tuple[float, list[dict[str, Any]]]:
    """The share of rows resolved right, and the rows resolved wrong."""
    wrong = []
    for row in rows:
        found = read(row["text"], date.fromisoformat(row["said"]))
        if not right(found, row["expected"]):
            wrong.append({**row, "found": found and "/".join(d.isoformat() for d in found)})
    return 1 - len(wrong) / max(len(rows), 1), wrong


def per_sentence_us(read: Reader, rows: Sequence[dict[str, Any]], rounds: int = 3) -> float:
    """A reader's time per sentence, the best of ``rounds`` passes over ``rows``."""
    said = [(row["text"], date.fromisoformat(row["said"])) for row in rows]
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for text, day in said:
            read(text, day)
        best = min(best, time.perf_counter() - started)
    return best / max(len(rows), 1) * 1e6


def load(name: str) -> list[dict[str, Any]]:
    path = DATA / f"times_{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--files", default="dev,heldout", help="which labelled sets, comma-separated")
    p.add_argument("--json", type=Path, help="write the figures here")
    p.add_argument("--show", type=int, default=0, help="print this many wrong rows per reader")
    args = p.parse_args(argv)
    readers: dict[str, Reader] = {"grammar": by_grammar, "periods": by_periods}
    dateparser = dateparser_reader()
    if dateparser is not None:
        readers["dateparser"] = dateparser
    report: dict[str, Any] = {}
    for name in args.files.split(","):
        rows = load(name)
        for reader, read in readers.items():
            read(rows[0]["text"], date.fromisoformat(rows[0]["said"]))  # loads what it loads
            accuracy, wrong = score(rows, read)
            us = per_sentence_us(read, rows)
            report.setdefault(name, {})[reader] = {
                "accuracy": round(accuracy, 3),
                "us_per_sentence": round(us, 1),
            }
            print(f"{name} {reader:>10}: accuracy {accuracy:.3f} ({len(rows)} rows), {us:.0f} us")
            for row in wrong[: args.show]:
                print(f"    {row['id']} {row['said']} {row['text']!r}: {row['found']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
