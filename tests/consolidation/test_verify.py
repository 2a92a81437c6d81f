"""The merge verifier on texts written for these tests: what differs, and what is one fact."""

from __future__ import annotations

import pytest

from memory_core.consolidation.analysis import analyse
from memory_core.consolidation.verify import lost_words, merged_text, verify

DIFFERENT = [
    ("My rent is $1,200 a month.", "My rent is $1,450 a month.", "number"),
    ("We have two dogs.", "We have three dogs.", "number"),
    ("I run 5 km every morning.", "I run 5 miles every morning.", "number"),
    ("The dentist is on Tuesday.", "The dentist is on Thursday.", "date_time"),
    ("My train leaves at 7:15.", "My train leaves at 8:15.", "date_time"),
    ("We married in 2014.", "We married in 2016.", "date_time"),
    ("Our party is next Saturday.", "Our party is last Saturday.", "date_time"),
    ("I eat fish.", "I never eat fish.", "negation"),
    ("I still smoke.", "I quit smoking.", "negation"),
    ("My knee hurts.", "My knee doesn't hurt.", "negation"),
    ("Tomasz fixed my bike.", "Kenji fixed my bike.", "object_place"),  # a swap in one slot
    ("I went hiking with my cousin.", "I went hiking with my manager.", "person"),
    ("I drink green tea at work.", "I drink black coffee at work.", "object_place"),
    ("My office is in Leeds.", "My office is in Bristol.", "person"),
    ("I'm learning the violin.", "I'm learning the cello.", "object_place"),
    (
        "I visited my aunt and we baked bread all afternoon.",
        "The new phone arrived and the screen is cracked already.",
        "different",
    ),
]

SAME = [
    ("I moved to Oslo for a job at a shipping firm.", "I moved to Oslo."),
    (
        "My daughter plays the flute in the school band.",
        "my dauhgter plays the flute in the school band",
    ),
    ("I can't stand loud music when I work.", "I can't stand loud music when I work, tbh"),
    ("Every Sunday I call my grandmother.", "I call my grandmother every Sunday."),
]


@pytest.mark.parametrize(("older", "newer", "kind"), DIFFERENT)
def test_a_changed_detail_is_never_a_duplicate(older: str, newer: str, kind: str) -> None:
    verdict = verify(older, newer)
    assert not verdict.duplicate, verdict
    assert verdict.kind == kind, verdict


@pytest.mark.parametrize(("older", "newer"), SAME)
def test_the_same_fact_reworded_or_mistyped_is_a_duplicate(older: str, newer: str) -> None:
    verdict = verify(older, newer)
    assert verdict.duplicate, verdict


@pytest.mark.parametrize(("older", "newer"), SAME)
def test_a_merged_text_loses_no_detail_of_either(older: str, newer: str) -> None:
    result = merged_text(older, newer)
    assert lost_words(older, result) == set() and lost_words(newer, result) == set()


def test_the_newer_wording_wins_where_both_state_a_detail() -> None:
    older = "I've been learning Welsh for a year. My tutor is called Gwen."
    newer = "I have been learning Welsh for a year now, twice a week."
    result = merged_text(older, newer)
    assert result.startswith(newer) and "Gwen" in result
    assert result.count("Welsh") == 1


def test_speaker_labels_are_not_content() -> None:
    assert analyse("User: Melanie: I love pottery.").content == analyse("I love pottery.").content
