"""Reading a statement offline: whom it is about, whether it tells news, whether it
looks back.  These decide which statements may replace an earlier value and which
answer a question of now."""

from __future__ import annotations

import pytest

from memory_core.language.reading import may_state
from memory_core.language.telling import looks_back
from memory_core.supersession.slots import slots_of, subjects_named
from memory_core.supersession.telling import tells


@pytest.mark.parametrize(
    ("sentence", "subject"),
    [
        # Someone's relation is the subject, not the one whose relation it is.
        ("Rachel's pal Morag has just started on the stroke unit.", "morag"),
        ("Sofia's friend just became a clinical pharmacist.", "friend"),
        # An in-law is a relation of their own.
        ("My father-in-law's just been put on clopidogrel after his stent.", "father-in-law"),
        ("My dad's on warfarin for his AFib.", "dad"),
        ("Nana finally agreed to move into a retirement village.", "grandma"),
        ("Rachel took a post at St John's in Livingston.", "rachel"),
        ("Winter's dragged on forever this year.", "user"),
        # Said of the speaker with someone: about the speaker.
        ("Rachel and I finally signed for the flat in Leith.", "user"),
        ("My boyfriend Tariq and I have split up.", "user"),
        ("Me and my husband are off to Crete in May.", "user"),
        ("Rachel and her sister are opening a cafe.", "rachel"),
    ],
)
def test_whom_a_statement_is_about(sentence: str, subject: str) -> None:
    assert subjects_named(sentence, {"rachel"}, guess_names=False) == subject


@pytest.mark.parametrize(
    ("text", "slots"),
    [
        # A sentence naming no one that speaks of "her" goes on about the one before.
        (
            "My colleague named her new spaniel Biscuit. Half the dogs at her park are "
            "called Biscuit.",
            ["colleague/pet"],
        ),
        # Not when it speaks of the speaker too, nor after a sentence about the speaker.
        (
            "My sister Priya started at the bank. I moved to Leeds to be near her.",
            ["priya/work", "user/residence"],
        ),
        ("Our new puppy is a beagle. Her name is Daisy.", ["user/pet"]),
    ],
)
def test_a_sentence_about_him_or_her_goes_on_about_the_one_before(
    text: str, slots: list[str]
) -> None:
    assert slots_of(text) == slots


@pytest.mark.parametrize(
    ("said", "news"),
    [
        ("Started levothyroxine 50 mcg. Do I take it before breakfast?", True),
        ("Down to 2 cups a day. The headaches were brutal.", True),
        ("Any tips for keeping Dad busy? He was used to his own place.", False),
        ("Give me a 20 minute workout for a hotel room.", False),
        ("Funny how a hobby can completely rewire your body clock.", False),
        ("Weird how the boring stuff ended up being what fixed my sleep.", False),
        ("", False),
    ],
)
def test_what_tells_news(said: str, news: bool) -> None:
    assert tells(said) is news


@pytest.mark.parametrize(
    ("said", "back"),
    [
        ("Thinking back to that stretch when I was getting seven hours a night.", True),
        ("Found my race bib from the half marathon, from the week I was on ibuprofen.", True),
        ("lol found my old shopify hoodie at the back of the closet.", True),
        ("Down to one coffee a day now.", False),
        ("Kofi went out on his own, he's running a solar panel company.", False),
        # The old value named to say it was replaced is a change, not a look back.
        ("Sold the old Corsa and bought a little electric Fiat.", False),
        # "these days" is now; a comparison with the past is no change.
        ("Just the one glass of wine on Fridays these days.", False),
        ("I spend much more time indoors now than I used to, honestly.", True),
        ("My old Kindle is in a drawer, should sell it before it loses any more value.", True),
    ],
)
def test_what_looks_back(said: str, back: bool) -> None:
    assert looks_back(said) is back


@pytest.mark.parametrize(
    ("said", "attribute", "may"),
    [
        ("We moved to York last month.", "residence", True),
        ("I quit nursing, now I am a teacher.", "work", True),
        # Helping out is no job, whatever its nearest examples or its words say.
        (
            "Last weekend I joined a mentorship programme for LGBTQ youth. It's really "
            "rewarding to help the young folks out.",
            "work",
            False,
        ),
        ("Thanks so much, that made my day!", "pet", False),
    ],
)
def test_which_attributes_a_statement_may_state(said: str, attribute: str, may: bool) -> None:
    assert may_state([said], attribute) == [may]
