"""A question of how things are now is answered by the latest statement of it.

Statements that supersession does not chain (a move told without a word of
change, a dose given as a number alone) still answer a question of now in the
order they were said: among the best few results, the most recent statement about
the subject asked of goes first -- not someone else's, not a request, not what
was said after the time a search is ``as_of``.  Turns are posted through the API
with the default embedder and asked through the search it serves.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import memory_core as mc
from memory_core.language.questions import asks_now
from memory_core.retrieval import latest
from reverie.compose import Process
from tests.api.conftest import post_turn


@pytest.fixture
def api_settings(tmp_path: Path, brain_url: str) -> mc.Settings:
    return mc.load_settings(brain_url=brain_url, data_dir=tmp_path / "data")


DAY = 86_400.0
T0 = datetime(2022, 2, 8, 12, 0, tzinfo=UTC).timestamp()


def _post(client: TestClient, user: str, at: float, scope_id: str = "ana") -> str:
    return post_turn(client, user, at, assistant="Got it.", scope_id=scope_id)


def _first(client: TestClient, q: str, **params: Any) -> dict[str, Any]:
    r = client.get("/v1/search", params={"q": q, "scope_id": "ana", "limit": 5, **params})
    assert r.status_code == 200, r.text
    return dict(r.json()["results"][0])


def _turn(hit: dict[str, Any]) -> str:
    return str(hit["metadata"]["turn_id"])


def _moves(client: TestClient, workers: Process) -> tuple[str, str]:
    sheffield = _post(
        client,
        "Finally unpacked the last box in the flatshare. Sheffield is hilly but I love "
        "being ten minutes from the Peaks.",
        T0,
    )
    _post(client, "Can you give me a quick one-pot lentil dal?", T0 + 5 * DAY)
    harrogate = _post(
        client,
        "Keys collected! The cottage in Harrogate is tiny but it has a garden and a fireplace.",
        T0 + 150 * DAY,
    )
    # After it: someone else's move, a request on the topic, other talk.
    _post(client, "My colleague Dan just moved into a flat in Leeds city centre.", T0 + 160 * DAY)
    _post(client, "Any tips for making a small cottage feel less cramped?", T0 + 170 * DAY)
    _post(client, "My manager keeps booking meetings at 4:55 on Fridays.", T0 + 180 * DAY)
    workers.join()
    return sheffield, harrogate


def test_the_latest_statement_answers_a_question_of_now(
    client: TestClient, workers: Process
) -> None:
    _, harrogate = _moves(client, workers)
    hit = _first(client, "Which town am I living in these days?")
    assert _turn(hit) == harrogate


def test_as_of_a_time_the_latest_statement_then_answers(
    client: TestClient, workers: Process
) -> None:
    sheffield, _ = _moves(client, workers)
    hit = _first(client, "Which town am I living in now?", as_of=T0 + 100 * DAY)
    assert _turn(hit) == sheffield


def test_a_look_back_or_someone_elses_habit_is_not_the_latest_answer(
    client: TestClient, workers: Process
) -> None:
    _post(client, "I'm on five cups of coffee a day at the moment.", T0)
    _post(client, "What's a good high-protein breakfast that isn't eggs?", T0 + 20 * DAY)
    down = _post(
        client, "Down to one coffee a day now, and a herbal tea in the afternoon.", T0 + 60 * DAY
    )
    _post(client, "My colleague drinks six espressos a day and can't sleep.", T0 + 90 * DAY)
    _post(client, "Remember when I drank five coffees a day? My hands shook.", T0 + 95 * DAY)
    workers.join()
    assert _turn(_first(client, "How much coffee am I drinking these days?")) == down


def test_questions_of_the_past_are_not_questions_of_now() -> None:
    assert asks_now("Where am I living these days?")
    assert asks_now("Where does Priya live?")
    assert asks_now("What's my job?")
    assert not asks_now("What is the name of her second puppy?")  # any puppy she had
    assert not asks_now("Where was I living at that point?")
    assert not asks_now("What did I do for work in 2021?")
    assert not asks_now("What was my first job?")
    # In the present tense, a plan asks how it stands -- unless one of several is asked.
    assert asks_now("When is my cello exam?")
    assert asks_now("When does our loft conversion start?")
    assert not asks_now("When is her second recital?")
    # Of the asker's own life, any attribute in the present tense; not of someone else's.
    assert asks_now("How many cigarettes am I smoking a day?")
    assert not asks_now("How many cigarettes does Priya smoke a day?")
    # Of someone else, a value held one at a time only when the reading is sure of it
    # (here it guesses "work", unsure): what Jon's studio offers is no value of now.
    assert not asks_now("What does Jon's dance studio offer?")
    # A query of bare words asks no time at all.
    assert not asks_now("otters")
    assert not asks_now("flat in Leeds")


@pytest.mark.parametrize(
    "question",
    ["whats my job rn", "wat car do i drive atm", "remind me wheres my gym", "whos my dentist"],
)
def test_a_question_texted_asks_of_now(question: str) -> None:
    assert asks_now(question)


@pytest.mark.parametrize(
    "question",
    # "has" is the perfect tense as often as the present: what someone has done.
    ["What has Melanie painted?", "How long has Paola lived in New York?", "wat was my old job"],
)
def test_a_question_of_what_was_done_is_no_question_of_now(question: str) -> None:
    assert not asks_now(question)


def test_a_texted_question_of_now_is_answered_by_the_latest_statement(
    client: TestClient, workers: Process
) -> None:
    _post(client, "I'm a barista at Flat White on Kirkgate, early shifts mostly.", T0)
    _post(client, "How long should I rest a brisket after smoking it?", T0 + 20 * DAY)
    teacher = _post(
        client,
        "Passed my PGCE! From September I'm teaching maths at Roundhay School.",
        T0 + 200 * DAY,
    )
    _post(client, "What's a good podcast for a long drive?", T0 + 210 * DAY)
    workers.join()
    assert _turn(_first(client, "whats my job rn")) == teacher


def test_a_later_remark_that_tells_nothing_new_leaves_the_change_first(
    client: TestClient, workers: Process
) -> None:
    _post(client, "Been on sertraline since spring for my anxiety. Sleep is patchy.", T0)
    _post(client, "What's a good podcast about the history of maps?", T0 + 10 * DAY)
    switched = _post(
        client,
        "My psychiatrist moved me over to escitalopram last week. Fewer side effects so far.",
        T0 + 90 * DAY,
    )
    # After it: a remark on the same thing naming nothing new, other talk.
    _post(
        client, "Sorting out the medication has honestly made the autumn bearable.", T0 + 110 * DAY
    )
    _post(client, "How long should I rest a steak after cooking it?", T0 + 115 * DAY)
    workers.join()
    assert _turn(_first(client, "Which antidepressant am I on now?")) == switched


def test_a_change_that_names_the_old_value_is_no_look_back(
    client: TestClient, workers: Process
) -> None:
    _post(client, "The car I drive is a trusty 2009 Fiat Panda; it just passed its MOT again.", T0)
    _post(client, "Tips for keeping basil alive on a windowsill?", T0 + 15 * DAY)
    traded = _post(
        client,
        "Traded in the old Panda and picked up a secondhand Kia Niro. So quiet on the motorway.",
        T0 + 200 * DAY,
    )
    _post(client, "What's a good audiobook for a long drive?", T0 + 210 * DAY)
    workers.join()
    assert _turn(_first(client, "What car do I drive?")) == traded


def test_news_of_someone_near_them_or_a_remark_after_the_change_does_not_answer(
    client: TestClient, workers: Process
) -> None:
    _post(client, "My wife Rachel's doing nights on the cardiac ward at the Royal Infirmary.", T0)
    _post(client, "Is a Ninja air fryer worth it over just using the oven?", T0 + 20 * DAY)
    moved = _post(
        client,
        "Rachel took a post at St John's in Livingston, fifteen minutes from our house.",
        T0 + 100 * DAY,
    )
    # After it: her friend's new job, a remark on it, other talk.
    _post(
        client,
        "Rachel's pal Morag has just started on the stroke unit at the Western General.",
        T0 + 120 * DAY,
    )
    _post(client, "Funny how much calmer the house is without the night shifts.", T0 + 130 * DAY)
    _post(client, "Ideas for a 40th that isn't a party?", T0 + 140 * DAY)
    workers.join()
    assert _turn(_first(client, "Where does Rachel work now?")) == moved


def test_the_only_statement_of_it_goes_ahead_of_talk_about_others(
    client: TestClient, workers: Process
) -> None:
    _post(client, "Tax season as an accountant means cereal for dinner again.", T0)
    _post(client, "What's a good stretching routine for someone who sits all day?", T0 + 9 * DAY)
    yoga = _post(
        client,
        "Handed in my notice at the firm. I teach yoga for a living now, first class was Saturday.",
        T0 + 200 * DAY,
    )
    _post(
        client,
        "My old colleague quit her job in accounting and works as a sommelier for a living now.",
        T0 + 220 * DAY,
    )
    workers.join()
    assert _turn(_first(client, "What do I do for a living now?")) == yoga


def test_a_plan_changed_answers_before_the_plan_first_told(
    client: TestClient, workers: Process
) -> None:
    _post(client, "My viola grade 6 exam is on 14 March at 11:20. Scales are a mess.", T0)
    _post(client, "What's a good warm-up routine for string players?", T0 + 7 * DAY)
    moved = _post(
        client,
        "The exam board rescheduled my viola exam, the new slot is 2 May in the afternoon.",
        T0 + 20 * DAY,
    )
    _post(client, "How do I stop my bow arm shaking when I'm nervous?", T0 + 25 * DAY)
    workers.join()
    assert _turn(_first(client, "When is my viola exam?")) == moved


def test_a_plan_told_of_again_without_a_change_keeps_the_ranking(
    client: TestClient, workers: Process
) -> None:
    planned = _post(
        client, "We're planning a canal boat trip on the Llangollen for the first week of June.", T0
    )
    _post(client, "Best waterproof jacket for walking in the rain?", T0 + 10 * DAY)
    _post(
        client,
        "The canal boat was glorious, the aqueduct was terrifying and the kids loved steering.",
        T0 + 120 * DAY,
    )
    workers.join()
    question = "When is our canal boat trip on the Llangollen?"
    hits = client.get("/v1/search", params={"q": question, "scope_id": "ana", "limit": 5})
    ranked = [_turn(h) for h in hits.json()["results"]]
    assert ranked[0] == planned
    assert "latest" not in hits.json()["results"][0]["adjustments"]


def test_a_later_mention_of_a_replaced_value_is_no_answer(
    client: TestClient, workers: Process
) -> None:
    _post(client, "Adopted a ginger kitten from the rescue! I named her Biscuit.", T0)
    _post(client, "What's a good scratching post for a small flat?", T0 + 7 * DAY)
    renamed = _post(
        client,
        "The kids have renamed the kitten Saffron and she answers to it, so Saffron it is.",
        T0 + 60 * DAY,
    )
    _post(client, "Easy traybake for a Tuesday night?", T0 + 70 * DAY)
    # After it: the old name, spoken of without changing anything.
    _post(
        client,
        "Found the rescue paperwork today, it still says Biscuit on it. She's twice the size now.",
        T0 + 90 * DAY,
    )
    workers.join()
    assert _turn(_first(client, "What's my kitten's name?")) == renamed


def test_what_the_asker_did_with_someone_is_about_the_asker(
    client: TestClient, workers: Process
) -> None:
    _post(client, "My girlfriend Ines and I just hit one year together.", T0)
    _post(client, "Good hiking and wine region for a long weekend?", T0 + 7 * DAY)
    engaged = _post(client, "She said yes! Ines and I are engaged.", T0 + 200 * DAY)
    _post(client, "How do I start planning a wedding budget?", T0 + 210 * DAY)
    married = _post(
        client,
        "Ines and I got married last weekend in Evora, sixty guests and a lot of dancing.",
        T0 + 400 * DAY,
    )
    _post(client, "Still writing thank-you cards, my hand hurts.", T0 + 420 * DAY)
    workers.join()
    first = _turn(_first(client, "What's my relationship status now?"))
    assert first == married, (first, engaged)


def test_a_turn_found_through_its_fact_answers_by_what_it_said(
    client: TestClient, workers: Process
) -> None:
    _post(
        client,
        "Passed my last exam so I'm officially a driving instructor!! Need a name for the "
        "business, something catchy?",
        T0,
    )
    _post(client, "How do I get moss off a driveway?", T0 + 30 * DAY)
    examiner = _post(
        client,
        "Got the DVSA job, I'm a driving examiner from June. How do I stay neutral when a "
        "candidate is in tears?",
        T0 + 900 * DAY,
    )
    _post(
        client,
        "Sold my old dual control Corsa today, years of learners in that car.",
        T0 + 920 * DAY,
    )
    _post(client, "Easy vegetable lasagne?", T0 + 930 * DAY)
    workers.join()
    assert _turn(_first(client, "What do I do for a living these days?")) == examiner


def test_a_later_taste_far_from_the_question_does_not_answer_it(
    client: TestClient, workers: Process
) -> None:
    # "What's our favourite restaurant now?" asks a taste, and a later turn surely tells
    # one: but socks are far from restaurants, and a statement not close to the question
    # answers nothing, however newer it is.
    taberna = _post(
        client,
        "Our favourite place is Taberna do Largo, round the corner from the flat. They do "
        "a polvo à lagareiro that I would cross the city for.",
        T0,
    )
    _post(client, "Could you suggest a quick dinner for a rainy evening?", T0 + 20 * DAY)
    _post(
        client, "My favourite socks have a hole in them now, and I love them anyway.", T0 + 40 * DAY
    )
    workers.join()
    assert _turn(_first(client, "What's our favourite restaurant now?")) == taberna


def test_a_question_naming_a_time_past_asks_of_then(
    client: TestClient, workers: Process, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Asked of now, the latest answer is looked for; asked of a month gone by ("what
    # is Nate currently playing, on 7 November 2022?"), it is not: the ranking stands.
    sheffield, harrogate = _moves(client, workers)
    looked: list[str] = []
    pool_of = latest.pool_of

    def recorded(*args: Any, **kwargs: Any) -> latest.Pool | None:
        looked.append(args[4])
        return pool_of(*args, **kwargs)

    monkeypatch.setattr(latest, "pool_of", recorded)
    assert _turn(_first(client, "Which town am I currently living in?")) == harrogate
    then = _first(client, "Which town am I currently living in, in February 2022?")
    assert looked == ["Which town am I currently living in?"]
    assert _turn(then) == sheffield
