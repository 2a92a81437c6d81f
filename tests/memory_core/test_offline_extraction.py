"""The offline extractor on realistic turns: sentences, dates, speakers, small talk."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memory_core as mc
from memory_core.extraction import OfflineExtractor, make_extract

offline = OfflineExtractor()


def at(iso: str) -> float:
    """Epoch seconds of a UTC time such as "2023-05-08T14:00"."""
    return datetime.fromisoformat(iso).replace(tzinfo=UTC).timestamp()


MONDAY = at("2023-05-08T14:00")  # Monday 8 May 2023
TUESDAY = at("2024-02-20T10:00")  # Tuesday 20 February 2024


def contents(user: str, assistant: str = "Noted.", when: float | None = MONDAY) -> list[str]:
    return [f.content for f in offline.extract(user, assistant, when=when).facts]


def one(user: str, when: float | None = MONDAY) -> str:
    facts = contents(user, when=when)
    assert len(facts) == 1, facts
    return facts[0]


# ------------------------------------------------------------------ sentences


def test_initials_and_titles_do_not_end_a_sentence() -> None:
    fact = one("I just finished The Left Hand of Darkness by Ursula K. Le Guin.")
    assert "Ursula K. Le Guin" in fact
    assert "Okafor bumped my sertraline" in one("Dr. Okafor bumped my sertraline up to 75 mg.")
    assert "J. R. R. Tolkien" in one("My favourite writer is J. R. R. Tolkien, no contest.")


def test_abbreviations_before_lower_case_words_and_numbers_stay_in_their_sentence() -> None:
    fact = one("I volunteer at the shelter on Sat. mornings, approx. 3 hrs each time.", when=None)
    assert "approx. 3 hours each time" in fact
    assert "7:15 a.m. out of Newark" in one(
        "My flight to Boston leaves at 7:15 a.m. out of Newark.", when=None
    )


def test_an_abbreviated_month_before_a_comma_loses_its_period() -> None:
    fact = one("Booked the Mt. Rainier trip for Aug., 3 nights in a cabin near Ashford.")
    assert "trip for August, 3 nights in a cabin" in fact


def test_so_that_intensifies_does_not_cut_the_sentence_short() -> None:
    fact = one("I've been so stressed about the kitchen renovation, the builders never turn up.")
    assert "kitchen renovation" in fact
    assert "courgettes" in one("I'm planning potatoes, runner beans and way too many courgettes.")


def test_a_reminder_asked_for_politely_is_kept() -> None:
    assert one("Pls remind me no solid food till Saturday.") == (
        "User: Remind me no solid food till 13 May 2023."
    )
    assert contents("Please help me write a toast for the wedding.") == []


def test_a_to_do_with_a_date_is_kept_under_the_default_personality() -> None:
    """Without a conscientious personality the agent keeps no to-dos, but an
    appointment or a deadline with its date is an event on the user's calendar."""
    extract = make_extract(mc.load_settings())
    kept = [
        f.content
        for f in extract(
            "Note to self: vet appointment for Biscuit next Thursday at "
            "4:10, and I need to book the car's MOT.",
            "",
            when=MONDAY,
        ).facts
    ]
    assert kept == [
        "User: Vet appointment for Biscuit on 11 May 2023 at 4:10, and I need to "
        "book the car's MOT."
    ]
    assert extract("I need to call the bank about the card.", "", when=MONDAY).facts == []


def test_two_plain_sentences_become_two_facts() -> None:
    facts = contents("I work at Acme Corp in Leeds. My sister Anna lives in Porto.", when=None)
    assert facts == ["User: I work at Acme Corp in Leeds.", "User: My sister Anna lives in Porto."]


def test_the_name_of_the_one_spoken_to_is_not_part_of_the_fact() -> None:
    fact = one("Jon, my online clothing store has been open a month and sales are growing.")
    assert fact == "User: My online clothing store has been open a month and sales are growing."
    # A name set off by an appositive is the subject; so is a place before its country.
    assert "Sarah, my sister, moved to Leeds" in one("Sarah, my sister, moved to Leeds in 2021.")
    assert "Paris, France" in one("Paris, France was our honeymoon in 2019.")


# ---------------------------------------------------------------------- dates


def test_yesterday_becomes_the_date_before_the_turn() -> None:
    fact = one("I got my MRI results yesterday.")
    assert "7 May 2023" in fact
    assert "yesterday" not in fact.lower()


def test_a_time_that_is_the_subject_is_written_without_on() -> None:
    assert one("Tomorrow is my daughter's first day at school.").startswith(
        "User: 9 May 2023 is my daughter's first day"
    )
    assert one("Last week was my last week at the bank.").startswith(
        "User: The week of 1 May 2023 was my last week at the bank"
    )


def test_next_friday_from_a_monday_is_that_weeks_friday() -> None:
    fact = one("My dentist appointment is next Friday.")
    assert "12 May 2023" in fact
    assert "next" not in fact.lower()


@pytest.mark.parametrize(
    ("user", "date"),
    [
        ("I have a physio session on Thursday.", "11 May 2023"),  # ahead: the coming one
        ("I had a physio session on Thursday.", "4 May 2023"),  # past: the one before
        ("I'm seeing Dr. Okafor tomorrow.", "9 May 2023"),
        ("Tommorow morning I'm getting my wisdom teeth out at 8 a.m.", "9 May 2023"),
        ("Mum had her hip replacement the day before yesterday.", "6 May 2023"),
        ("I quit smoking 3 days ago.", "5 May 2023"),
        ("My exams start in two weeks.", "22 May 2023"),
        ("I ran my first 10k this morning.", "8 May 2023"),
        ("I'm flying to Oslo tonight.", "8 May 2023"),
        ("We went to Crete last May.", "May 2022"),
        ("We went to Crete last September.", "September 2022"),
        ("My sister Marta is coming to stay in September.", "September 2023"),
        ("I've been on 50 mg of sertraline since March.", "March 2023"),
        ("Last week I started a new job at Acme.", "the week of 1 May 2023"),
        ("I start a new job at the council next month.", "June 2023"),
        ("My rent goes up on the 26th.", "26 May 2023"),
        ("My passport expires on 3 Jan.", "3 January 2024"),
    ],
)
def test_relative_times_are_written_as_the_dates_they_meant(user: str, date: str) -> None:
    fact = one(user)
    assert date in fact
    for word in ("yesterday", "tomorrow", "tonight", "ago", "next", "last", "this morning"):
        assert word not in fact.lower(), fact


@pytest.mark.parametrize(
    ("user", "written"),
    [
        # The tense of the clause that names the day, not of the whole sentence.
        (
            "My supervisor got me an extension, submission is now 15 August.",
            "submission is now 15 August 2023",
        ),
        # What a time is for lies ahead.
        ("I booked the cottage for September.", "for September 2023"),
        # A day of the month alone is of the month named before it.
        (
            "We're flying to Oslo in July and the wedding is on the 3rd.",
            "the wedding is on 3 July 2023",
        ),
    ],
)
def test_a_day_is_read_in_its_own_clause_and_month(user: str, written: str) -> None:
    assert written in " ".join(contents(user))


def test_a_day_of_the_month_takes_the_month_a_sentence_before_named() -> None:
    facts = contents("Booked the lake cabin for September. My brother Ian drives up on the 9th.")
    assert any("on 9 September 2023" in f for f in facts), facts


@pytest.mark.parametrize(
    ("user", "kept"),
    [
        (
            "Joined a cycling club, Sunday rides plus the commute come to 120 km a week.",
            "Sunday rides",
        ),
        ("Third flat in two years, I'm exhausted.", "in two years"),
        ("I lost 5 kg in two months on the new plan.", "in two months"),
    ],
)
def test_a_kind_of_day_or_a_length_of_time_is_no_date(user: str, kept: str) -> None:
    assert kept in one(user)


def test_the_weekend_before_a_tuesday_is_the_one_just_gone() -> None:
    fact = one("My dog Biscuit has been limping since the weekend.", when=TUESDAY)
    assert "the weekend of 17 February 2024" in fact


def test_a_past_event_that_names_no_time_gets_the_day_it_was_told() -> None:
    assert "(as of 8 May 2023)" in one("Booked the flights for Lisbon, finally.")
    assert "as of" not in one("I work at the U.S. Geological Survey since 2019.")


def test_without_a_time_the_text_is_left_as_it_is() -> None:
    user = "Yesterday I visited my grandmother in Porto. Physio starts next Friday."
    assert contents(user, when=None) == [
        "User: Yesterday I visited my grandmother in Porto.",
        "User: Physio starts next Friday.",
    ]


# ------------------------------------------------------------ who said what


@pytest.mark.parametrize(
    "assistant",
    [
        "You should try the Mediterranean diet, it lowers cholesterol.",
        "The Mediterranean diet is rich in olive oil and fish, and it lowers LDL cholesterol.",
        "Sure, I'll remind you to book the Mediterranean cookery class on Friday.",
    ],
)
def test_what_the_assistant_says_is_not_a_fact_about_the_user(assistant: str) -> None:
    facts = contents("My cholesterol came back high at the check-up.", assistant)
    assert facts == ["User: My cholesterol came back high at the check-up (as of 8 May 2023)."]
    assert contents("Thanks!", assistant) == []


def test_a_sentence_initial_he_or_she_is_named() -> None:
    facts = contents("My sister Marta is coming to stay. She's vegan.", when=None)
    assert facts[1] == "User: Marta's vegan."
    assert (
        "Dr. Fenwick is retiring"
        in contents("I saw Dr. Fenwick about my knee. He is retiring next year.", when=None)[1]
    )


def test_a_verbless_fragment_stays_with_the_sentence_it_continues() -> None:
    facts = contents("I can't sleep again. Third night this week.")
    assert facts == ["User: I can't sleep again. Third night in the week of 8 May 2023."]


@pytest.mark.parametrize(
    ("user", "fact"),
    [
        # An amount of what was just named, one more of it, something done to it.
        (
            "The GP put my amlodipine up to 10 mg. I'd been on 5 mg since January.",
            "User: The GP put my amlodipine up to 10 mg. I'd been on 5 mg since January 2023.",
        ),
        (
            "Finished my first 10k on Sunday in 58 minutes! Already eyeing the Leeds one.",
            "User: Finished my first 10k on 7 May 2023 in 58 minutes! Already eyeing the Leeds "
            "one.",
        ),
        (
            "The landlord offered us a two-year lease on the flat. We have to tell him by Friday "
            "and I want to sign it.",
            "User: The landlord offered us a two-year lease on the flat. We have to tell him by "
            "12 May 2023 and I want to sign it.",
        ),
        # Of nothing of the user's, at no day of its own: it goes on with what was told.
        (
            "Booked the train to Glasgow for the conference. Departure's at 6:40 from Euston.",
            "User: Booked the train to Glasgow for the conference. Departure's at 6:40 from "
            "Euston (as of 8 May 2023).",
        ),
    ],
)
def test_what_only_makes_sense_after_a_statement_stays_with_it(user: str, fact: str) -> None:
    assert contents(user) == [fact]


# ----------------------------------------------------- what is not a fact


@pytest.mark.parametrize(
    "user",
    [
        "Morning! How's it going?",
        "thanks, thats really helpful!!",
        "ok cool. ttyl",
        "haha fair enough 😂",
        "good night!",
        "thank you, seriously. that means a lot.",
        "What's the capital of Australia again?",
        "how do I get red wine out of a carpet",
        "Give me a fun fact about octopuses.",
        "If I could be any kitchen appliance I'd be a toaster.",
        "If I had a superpower I'd be able to fly. Simple and freeing.",
        "Haha that's a terrible pun, I love it.",
        "Why is the sky blue? Never actually understood it.",
    ],
)
def test_small_talk_questions_and_requests_give_no_facts(user: str) -> None:
    assert contents(user, "Happy to help!") == []


def test_a_statement_before_a_question_tag_is_kept() -> None:
    fact = one("My son is 6 and hates the taste of his medicine, any tricks?", when=None)
    assert fact == "User: My son is 6 and hates the taste of his medicine."


# ------------------------------------------------------------ never raises


@pytest.mark.parametrize("when", [None, 0.0, -1e12, 1e20, math.nan, math.inf, -math.inf])
def test_any_time_or_none_never_raises(when: float | None) -> None:
    facts = contents("I got my MRI results yesterday. Physio starts on Thursday.", when=when)
    assert facts  # the facts are still there, dated or not


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300),
    st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
)
def test_the_offline_extractor_never_raises(user: str, when: float | None) -> None:
    extraction = offline.extract(user, user, when=when)
    assert all(0.0 <= f.importance <= 1.0 for f in extraction.facts)
