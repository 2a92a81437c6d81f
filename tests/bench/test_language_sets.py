"""The labelled language sets are well formed: statements (what attribute a sentence states, about
whom, whether it lasts, whether it is small talk, whether the speaker asked for it to be kept) and
questions (what attribute a question asks about, and whether it asks for the present value), each
in a dev half and a held-out half."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from memory_core.language import reading

DATA = Path(__file__).resolve().parents[2] / "bench" / "data"

# The sets are labelled with the attributes the readings judge.
ATTRIBUTES = set(reading.ATTRIBUTES)
REGISTERS = {"assistant_chat", "texting", "formal", "group_chat", "voice", "terse"}
STATEMENT_FIELDS = {
    "id",
    "text",
    "register",
    "about",
    "subject",
    "attribute",
    "durable",
    "smalltalk",
    "keep",
}
QUESTION_FIELDS = {"id", "text", "subject", "attribute", "now"}
SPEAKER_NAME = re.compile(r"^\w[\w' .-]*: \S")


def _load(name: str) -> list[dict[str, Any]]:
    rows = []
    with (DATA / f"{name}.jsonl").open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            assert line.strip(), f"{name}:{number} is blank"
            row = json.loads(line)
            assert isinstance(row, dict), f"{name}:{number}"
            rows.append(row)
    assert rows, name
    return rows


def _pair(kind: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return _load(f"{kind}_dev"), _load(f"{kind}_heldout")


def _subject_is_a_name(subject: Any) -> bool:
    return (
        isinstance(subject, str)
        and subject == subject.lower()
        and subject.strip() == subject != ""
        and subject not in {"speaker", "none"}
    )


@pytest.mark.parametrize("half", ["dev", "heldout"])
def test_each_statement_has_exactly_its_fields_with_allowed_values(half: str) -> None:
    for row in _load(f"statements_{half}"):
        where = row.get("id")
        assert set(row) == STATEMENT_FIELDS, where
        assert re.fullmatch(r"s-\d{4}", row["id"]), where
        assert isinstance(row["text"], str) and row["text"].strip() == row["text"] != "", where
        assert row["register"] in REGISTERS, where
        assert row["attribute"] in ATTRIBUTES, where
        for flag in ("durable", "smalltalk", "keep"):
            assert isinstance(row[flag], bool), (where, flag)
        if row["about"] == "speaker":
            assert row["subject"] == "speaker", where
        elif row["about"] == "other":
            assert _subject_is_a_name(row["subject"]), where
            assert row["attribute"] != "none", where
        else:
            assert row["about"] == "none", where
            assert row["subject"] == "none", where
            assert row["attribute"] == "none" and not row["durable"], where
        if row["smalltalk"]:
            assert row["about"] == "none" and row["attribute"] == "none", where
            assert not row["durable"] and not row["keep"], where
        if row["register"] == "group_chat":
            assert SPEAKER_NAME.match(row["text"]), where


@pytest.mark.parametrize("half", ["dev", "heldout"])
def test_each_question_has_exactly_its_fields_with_allowed_values(half: str) -> None:
    for row in _load(f"questions_{half}"):
        where = row.get("id")
        assert set(row) == QUESTION_FIELDS, where
        assert re.fullmatch(r"q-\d{4}", row["id"]), where
        assert isinstance(row["text"], str) and row["text"].strip() == row["text"] != "", where
        assert row["subject"] == "speaker" or _subject_is_a_name(row["subject"]), where
        assert row["attribute"] in ATTRIBUTES, where
        assert isinstance(row["now"], bool), where


@pytest.mark.parametrize("kind", ["statements", "questions"])
def test_ids_are_unique_across_both_halves(kind: str) -> None:
    dev, heldout = _pair(kind)
    ids = [row["id"] for row in dev + heldout]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("kind", ["statements", "questions"])
def test_the_halves_share_no_text(kind: str) -> None:
    dev, heldout = _pair(kind)

    def said(rows: list[dict[str, Any]]) -> set[str]:
        return {" ".join(row["text"].lower().split()) for row in rows}

    assert not said(dev) & said(heldout)
    for rows in (dev, heldout):
        assert len(said(rows)) == len(rows)


@pytest.mark.parametrize("kind", ["statements", "questions"])
def test_every_attribute_appears_in_both_halves(kind: str) -> None:
    dev, heldout = _pair(kind)
    for rows in (dev, heldout):
        assert {row["attribute"] for row in rows} == ATTRIBUTES


def test_statements_cover_every_register_both_subjects_and_explicit_keeps() -> None:
    dev, heldout = _pair("statements")
    for rows in (dev, heldout):
        assert {row["register"] for row in rows} == REGISTERS
        assert {row["about"] for row in rows} == {"speaker", "other", "none"}
        assert any(row["smalltalk"] for row in rows)
        assert any(row["keep"] for row in rows)
        assert {row["durable"] for row in rows} == {True, False}


def test_questions_ask_both_for_now_and_for_other_times_and_about_others() -> None:
    dev, heldout = _pair("questions")
    for rows in (dev, heldout):
        assert {row["now"] for row in rows} == {True, False}
        assert any(row["subject"] != "speaker" for row in rows)
