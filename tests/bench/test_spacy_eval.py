"""bench.spacy_eval's entity scoring, measured with the rule alone (spaCy is optional)."""

from __future__ import annotations

from typing import Any

import pytest

import bench.spacy_eval as spacy_eval
from bench.spacy_eval import EntityScore, rule_entities, spurious, targets

TURN: dict[str, Any] = {
    "user": "I moved to Porto with Ana in June 2019. We have 3 cats now.",
    "facts": [
        {"keys": [["moved"], ["Porto"], ["2019-06"]]},
        {"keys": [["Ana", "Anna"]]},
        {"keys": [["3 cats", "three cats"]]},
        {"keys": [["Lisbon"]]},
    ],
}


def test_named_keys_are_those_with_a_capital_or_a_digit_said_verbatim() -> None:
    # "moved" is lower case, the date is a date, "Anna" and "Lisbon" were not said.
    assert targets(TURN) == [["Porto"], ["Ana"], ["3 cats"]]


def test_a_named_key_is_covered_when_its_names_and_numbers_are_among_the_entities() -> None:
    score = EntityScore()
    score.add(TURN, ["Porto", "3", "Tuesday"])
    figures = score.to_dict()
    assert (figures["named_keys"], figures["covered"]) == (3, 2)  # Ana missed
    assert figures["spurious_per_turn"] == 1  # Tuesday is in no key


def test_an_entity_in_a_key_or_holding_one_is_not_spurious() -> None:
    assert spurious(["Porto", "Ana Silva", "June 2019", "Braga"], TURN) == 1
    assert spurious(["Porto"], {"user": "", "facts": []}) == 1


def test_the_rule_finds_names_and_numbers_but_not_a_sentences_first_common_word() -> None:
    assert rule_entities(TURN["user"]) == ["Porto", "Ana", "June", "2019", "3"]


def test_without_spacy_it_says_so_and_exits_zero(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(spacy_eval, "load_nlp", lambda **kwargs: None)
    assert spacy_eval.main([]) == 0
    assert "not installed" in capsys.readouterr().out
