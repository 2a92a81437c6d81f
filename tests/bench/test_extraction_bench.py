"""bench.extraction's scoring: key groups, written dates, recall, precision, relative times."""

from __future__ import annotations

from typing import Any

from bench.extraction import load, matches, score
from memory_core.extraction.base import Extraction, Fact


def test_every_key_group_must_be_met_and_dates_match_their_written_forms() -> None:
    keys = [["physio", "physiotherapist"], ["2023-05-11"]]
    assert matches("The user starts physiotherapy on 11 May 2023.", keys)
    assert matches("Physio begins May 11, 2023 for the user.", keys)
    assert not matches("The user starts physiotherapy on Thursday.", keys)
    assert matches("The user moved in March 2022.", [["moved"], ["2022-03"]])


def test_recall_precision_and_relative_times_are_counted_per_fact() -> None:
    turns: list[dict[str, Any]] = [
        {
            "id": "a",
            "user": "u",
            "assistant": "a",
            "facts": [
                {"text": "The user has a cat named Miso.", "keys": [["cat"], ["Miso"]]},
                {"text": "The user lives in Porto.", "keys": [["Porto"]]},
            ],
        },
        {"id": "b", "user": "hi", "assistant": "hello", "facts": []},
    ]
    said = {
        "u": ["The user has a cat called Miso.", "The user saw a film yesterday."],
        "hi": ["User: hi"],
    }

    def extract(user: str, assistant: str, *, when: float | None = None) -> Extraction:
        return Extraction([Fact(c, "knowledge", 0.5, []) for c in said[user]], "fake")

    result = score(turns, extract).to_dict()
    assert result["recall"] == 0.5 and result["precision"] == round(1 / 3, 3)
    assert result["relative_times_left"] == 1


ATTRIBUTES = set(
    "identity work education residence relationship family pet health medication habit likes plan "
    "vehicle event other".split()
)


def test_the_labelled_sets_are_well_formed() -> None:
    sets = {name: load(name) for name in ("dev", "heldout", "dev2", "heldout2")}
    for name, turns in sets.items():
        assert len(turns) >= 50
        for turn in turns:
            for fact in turn["facts"]:
                assert matches(fact["text"], fact["keys"]), (turn["id"], fact["text"])
                if name.endswith("2"):  # the second sets say each fact's attribute too
                    assert fact["attribute"] in ATTRIBUTES, (turn["id"], fact["attribute"])
                    assert isinstance(fact["protect"], bool), (turn["id"], fact["text"])
    ids = [turn["id"] for name in ("dev2", "heldout2") for turn in sets[name]]
    assert len(ids) == len(set(ids))
