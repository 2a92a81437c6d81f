"""Times named in queries, read as UTC intervals."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_core.language.periods import periods

NOW = datetime(2026, 12, 1, 15, 30, tzinfo=UTC).timestamp()  # a Tuesday


def day(y: int, m: int, d: int) -> float:
    return datetime(y, m, d, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("what happened on 8 May 2023?", [(day(2023, 5, 8), day(2023, 5, 9))]),
        ("on May 8th, 2023", [(day(2023, 5, 8), day(2023, 5, 9))]),
        ("notes from 2023-05-08", [(day(2023, 5, 8), day(2023, 5, 9))]),
        ("trips in May 2023", [(day(2023, 5, 1), day(2023, 6, 1))]),
        ("budget for 2023-12", [(day(2023, 12, 1), day(2024, 1, 1))]),
        ("what did we decide in 2022", [(day(2022, 1, 1), day(2023, 1, 1))]),
        ("the party in July", [(day(2026, 7, 1), day(2026, 8, 1))]),
        ("plans for December", [(day(2026, 12, 1), day(2027, 1, 1))]),
        ("what did I say yesterday", [(day(2026, 11, 30), day(2026, 12, 1))]),
        ("what did I say today", [(day(2026, 12, 1), day(2026, 12, 2))]),
        ("last week's meeting", [(day(2026, 11, 23), day(2026, 11, 30))]),
        ("last month", [(day(2026, 11, 1), day(2026, 12, 1))]),
        ("this year", [(day(2026, 1, 1), day(2027, 1, 1))]),
        ("last Friday", [(day(2026, 11, 27), day(2026, 11, 28))]),
        ("last Tuesday", [(day(2026, 11, 24), day(2026, 11, 25))]),
    ],
)
def test_named_times_become_intervals(query: str, expected: list[tuple[float, float]]) -> None:
    assert periods(query, NOW) == expected


def test_a_month_named_with_its_year_is_not_read_twice() -> None:
    assert periods("May 2023", NOW) == [(day(2023, 5, 1), day(2023, 6, 1))]


@pytest.mark.parametrize(
    "query",
    [
        "may I ask about the deploy?",
        "May I ask about it?",
        "Thanks. May we meet?",
        "they march on",
        "version 12345",
        "at 10:30",
    ],
)
def test_words_that_only_look_like_times_name_none(query: str) -> None:
    assert periods(query, NOW) == []


def test_an_impossible_day_still_names_its_month() -> None:
    assert periods("31 February 2023", NOW) == [(day(2023, 2, 1), day(2023, 3, 1))]


def test_ago_is_a_window_around_that_time() -> None:
    [(start, end)] = periods("two weeks ago", NOW)
    assert start < day(2026, 11, 17) < end
