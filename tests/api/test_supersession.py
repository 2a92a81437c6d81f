"""Memory follows change: a later statement of the same thing supersedes the older one.

Turns are posted through the API and ingested by the workers; questions are asked
through the search the API serves and the tool route.  The older statement is
kept, ranked below its successor, named as superseded by it, and found as current
with ``as_of`` a time it held.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import memory_core as mc
from reverie.compose import Process
from tests.api.conftest import post_turn


@pytest.fixture(params=["minilm", "none"])
def api_settings(tmp_path: Path, brain_url: str, request: pytest.FixtureRequest) -> mc.Settings:
    """What a user gets by default (the MiniLM embedder: statements are chained once
    embedded, when their meaning confirms it), and without an embedder (chained as
    they are written, on word cues); offline extraction both times."""
    return mc.load_settings(
        brain_url=brain_url,
        data_dir=tmp_path / "data",
        embedder=request.param,
    )


DAY = 86_400.0
T0 = datetime(2023, 3, 1, 9, 0, tzinfo=UTC).timestamp()


def _post(client: TestClient, user: str, at: float, scope_id: str = "ana") -> str:
    return post_turn(client, user, at, assistant="Thanks for telling me.", scope_id=scope_id)


def _search(client: TestClient, q: str, **params: Any) -> list[dict[str, Any]]:
    r = client.get("/v1/search", params={"q": q, "scope_id": "ana", "limit": 10, **params})
    assert r.status_code == 200, r.text
    return list(r.json()["results"])


def _story(client: TestClient, workers: Process, first: str, then: str) -> tuple[str, str]:
    old = _post(client, first, T0)
    _post(client, "Can you suggest a quick pasta recipe for tonight?", T0 + 3 * DAY)
    _post(client, "The weather has been grim all week.", T0 + 20 * DAY)
    new = _post(client, then, T0 + 60 * DAY)
    _post(client, "Any tips for keeping houseplants alive?", T0 + 70 * DAY)
    workers.join()
    return old, new


def _turn(hit: dict[str, Any]) -> str:
    return str(hit["metadata"]["turn_id"])


def test_a_new_job_is_found_first_and_the_old_one_as_of_its_time(
    client: TestClient, workers: Process
) -> None:
    old, new = _story(client, workers, "I work as a nurse.", "I quit nursing, now I am a teacher.")
    hits = _search(client, "what is my job")
    assert _turn(hits[0]) == new and hits[0]["current"] is True
    older = next(h for h in _search(client, "nurse") if _turn(h) == old)
    assert older["current"] is False
    assert "I quit nursing, now I am a teacher." in older["superseded_by"]["content"]
    assert older["valid_until"] == "2023-04-30T09:00:00Z"  # when the teacher turn was said
    then = _search(client, "what is my job", as_of=T0 + 30 * DAY)
    assert _turn(then[0]) == old and then[0]["current"] is True
    assert new not in {_turn(h) for h in then}


def test_drinking_less_coffee_supersedes_drinking_more(
    client: TestClient, workers: Process, api_settings: mc.Settings
) -> None:
    if api_settings.embedder == "none":
        pytest.skip("words alone cannot tell one habit from another: chained once embedded")
    old, new = _story(
        client,
        workers,
        "I drink three flat whites a day.",
        "I'm down to one coffee a day now.",
    )
    hits = _search(client, "How much coffee do I drink these days?")
    assert _turn(hits[0]) == new
    older = [h for h in hits if _turn(h) == old]
    assert older and all(h["current"] is False for h in older)
    assert all("superseded" in h["adjustments"] for h in older)
    then = _search(client, "How much coffee do I drink these days?", as_of=T0 + 10 * DAY)
    assert _turn(then[0]) == old


def test_the_tool_shows_what_superseded_a_hit(client: TestClient, workers: Process) -> None:
    _story(client, workers, "I live in Leeds.", "We moved to Bristol last month.")
    r = client.post(
        "/v1/tools/memory_search",
        json={"query": "Leeds"},
        headers={"X-Reverie-User": "ana"},
    )
    assert r.status_code == 200, r.text
    leeds = [h for h in r.json()["results"] if "Leeds" in h["content"]]
    assert leeds and all(h["current"] is False for h in leeds)
    assert all("Bristol" in h["superseded_by"]["content"] for h in leeds)


def test_statements_of_other_things_or_people_do_not_supersede(
    client: TestClient, workers: Process
) -> None:
    _post(client, "I work as a nurse.", T0)
    _post(client, "My sister Priya works as a lawyer.", T0 + DAY)
    _post(client, "I drink three flat whites a day.", T0 + 2 * DAY)
    _post(client, "I run 20 km a week.", T0 + 3 * DAY)
    workers.join()
    hits = _search(client, "nurse")
    assert hits and all(h["current"] is True for h in hits if "nurse" in h["content"])
    coffee = _search(client, "flat whites")
    assert coffee and all(h["current"] is True for h in coffee if "flat whites" in h["content"])


def test_a_statement_posted_late_takes_its_place_in_time(
    client: TestClient, workers: Process
) -> None:
    """Turns can arrive out of order: the one said in between holds until the later one."""
    first = _post(client, "I live in Leeds.", T0)
    last = _post(client, "We moved to Bristol last month.", T0 + 90 * DAY)
    workers.join()
    between = _post(client, "We moved to York in the spring.", T0 + 40 * DAY)
    workers.join()
    hits = {_turn(h): h for h in _search(client, "Leeds York Bristol moved live")}
    assert hits[last]["current"] is True
    assert "York" in hits[first]["superseded_by"]["content"]
    assert "Bristol" in hits[between]["superseded_by"]["content"]


# Two friends catching up: news, thanks, hopes and plans, none of them changing
# anything said before (a goal, then a walk in the neighbourhood, is not a move).
CHAT = [
    (
        "Ana",
        "The stories people told at the poetry night were so inspiring! I was so happy to"
        " be somewhere I felt accepted, and it made me want to get more involved.",
    ),
    (
        "Ben",
        "That sounds amazing, Ana. I spent the weekend fixing the shed roof with the kids.",
    ),
    (
        "Ana",
        "Thanks, Ben! My goal is to give kids a loving home. I'm truly grateful for all "
        "the support I've had along the way.",
    ),
    (
        "Ben",
        "You'd be a wonderful parent. We took the kids to the lake on Sunday and they "
        "swam all day.",
    ),
    (
        "Ana",
        "I loved 'Braiding Sweetgrass' by Robin Wall Kimmerer. It's a real inspiration to"
        " me and made me want to look after the world around me.",
    ),
    ("Ben", "Here's a photo of the sunset we painted together at the lake."),
    (
        "Ana",
        "That photo is stunning! So glad you bonded over your love of nature. Last Friday"
        " I went to a council meeting about the new adoption support scheme.",
    ),
    (
        "Ana",
        "Hi Ben! Hope you're doing good. Guess what I did this week? I took the first "
        "step and sent my application to two adoption agencies!",
    ),
    ("Ben", "Congratulations! The kids made you a card at pottery class."),
    (
        "Ana",
        "Woohoo! I passed the adoption agency interviews last Friday. This is a big move "
        "towards my goal of having a family.",
    ),
    (
        "Ana",
        "I was out walking in my neighbourhood when I came across this cool mural. It "
        "reminded me why I love living here.",
    ),
    ("Ana", "Thanks, Ben. My dream is to create a safe and loving home for kids who need one."),
    (
        "Ana",
        "I'm keen on counselling or working in mental health. I'd love to support people "
        "going through what I went through.",
    ),
    (
        "Ana",
        "Lately I've been looking into counselling and mental health as a career. I want "
        "to help people who need it.",
    ),
    (
        "Ana",
        "Last weekend I joined a mentorship programme for LGBTQ youth. It's really "
        "rewarding to help the young folks out.",
    ),
]


def test_friends_catching_up_supersede_nothing(client: TestClient, workers: Process) -> None:
    for k, (speaker, said) in enumerate(CHAT):
        r = client.post(
            "/v1/turns",
            json={
                "messages": [{"role": "user", "content": said, "name": speaker}],
                "scope": "user",
                "scope_id": "ana",
                "conversation_id": "catch-up",
                "timestamp": T0 + k * 600,
            },
        )
        assert r.status_code == 202, r.text
    workers.join()
    r = client.get("/v1/memories", params={"scope_id": "ana", "limit": 100})
    assert r.status_code == 200, r.text
    memories = r.json()["memories"]
    assert len(memories) >= len(CHAT)
    assert [m["content"] for m in memories if m["superseded_by"] is not None] == []
