"""The labelled time sets are well formed (a sentence, the day it was said, the day or span
its time meant, in a dev half and a held-out half), and bench.times scores a resolution
right only within the labelled span."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from bench.times import right, span, written_span

DATA = Path(__file__).resolve().parents[2] / "bench" / "data"
FIELDS = {"id", "text", "said", "kind", "expected"}
KINDS = {"relative", "absolute", "none"}


def _load(half: str) -> list[dict[str, Any]]:
    lines = (DATA / f"times_{half}.jsonl").read_text(encoding="utf-8").splitlines()
    assert all(line.strip() for line in lines), half
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("half", ["dev", "heldout"])
def test_each_row_has_exactly_its_fields_with_allowed_values(half: str) -> None:
    for row in _load(half):
        where = row.get("id")
        assert set(row) == FIELDS, where
        assert re.fullmatch(r"t-\d{4}", row["id"]), where
        assert isinstance(row["text"], str) and row["text"].strip() == row["text"] != "", where
        date.fromisoformat(row["said"])
        assert row["kind"] in KINDS, where
        assert (row["kind"] == "none") == (row["expected"] is None), where
        if row["expected"] is not None:
            first, last = span(row["expected"])
            assert first <= last, where


def test_the_halves_share_no_id_or_text_and_cover_every_kind() -> None:
    dev, heldout = _load("dev"), _load("heldout")
    assert len(dev) >= 60 and len(heldout) >= 60
    ids = [row["id"] for row in dev + heldout]
    assert len(ids) == len(set(ids))
    texts = [" ".join(row["text"].lower().split()) for row in dev + heldout]
    assert len(texts) == len(set(texts))
    for rows in (dev, heldout):
        assert {row["kind"] for row in rows} == KINDS


def test_a_resolution_is_right_only_within_the_labelled_span() -> None:
    day = (date(2026, 3, 10), date(2026, 3, 10))
    assert right(day, "2026-03") and right(day, "2026") and right(day, "2026-03-10")
    assert not right(span("2026-03"), "2026-03-10")
    assert not right(day, None) and not right(None, "2026-03") and right(None, None)


def test_the_written_forms_of_the_grammar_are_read_as_spans() -> None:
    assert written_span("on 8 May 2026") == (date(2026, 5, 8), date(2026, 5, 8))
    assert written_span("in the week of 4 May 2026") == (date(2026, 5, 4), date(2026, 5, 10))
    assert written_span("in March 2026") == span("2026-03")
    assert written_span("in winter 2025-26") == (date(2025, 12, 1), date(2026, 2, 28))
    assert written_span("born on March 5th, 2021") == (date(2021, 3, 5), date(2021, 3, 5))
    assert written_span("I'm 34") is None
