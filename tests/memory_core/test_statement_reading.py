"""Reading a statement offline: whom it is about, whether it tells news, whether it
looks back.  These decide which statements may replace an earlier value and which
answer a question of now."""

from __future__ import annotations

import pytest

from memory_core.supersession.slots import looks_back, subjects_named, tells


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
    ],
)
def test_whom_a_statement_is_about(sentence: str, subject: str) -> None:
    assert subjects_named(sentence, {"rachel"}, guess_names=False) == subject


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
    ],
)
def test_what_looks_back(said: str, back: bool) -> None:
    assert looks_back(said) is back
