"""Answers an agent can trust: a question of now is answered by the statement that
answers it, and a change of one thing retires nothing else.

Turns are posted through the API a few weeks apart and ingested by the workers with
the offline extractor and the shipped embedder (what a user gets by default);
questions go through ``GET /v1/search``, memories through ``POST /v1/memories``.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

import memory_core as mc
from memory_core import proposals
from memory_core.auth import SYSTEM
from memory_core.consolidation.dream import dream
from memory_core.retrieval.context import known_of
from memory_core.traces.decay import DAY
from reverie.client import Client
from reverie.compose import Process
from reverie.compose import app as api_app
from tests.api.conftest import post_turn, serving

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC).timestamp()


@pytest.fixture
def api_settings(tmp_path: Path, brain_url: str) -> mc.Settings:
    return mc.load_settings(brain_url=brain_url, data_dir=tmp_path / "data", embedder="minilm")


KIM = (
    "Hi! I'm Kim. I work as a nurse at the Leeds General Infirmary.",
    "I'm allergic to penicillin.",
    "Big news: I quit nursing, now I am a teacher at a primary school.",
    "I'm learning Japanese this winter.",
    "I moved to a flat in Headingley last month.",
)


def _search(client: TestClient, q: str) -> list[dict[str, Any]]:
    r = client.get("/v1/search", params={"q": q, "scope_id": "kim", "limit": 10})
    assert r.status_code == 200, r.text
    return list(r.json()["results"])


@pytest.fixture
def kim(client: TestClient, workers: Process) -> dict[str, str]:
    turns = {}
    for k, said in enumerate(KIM):
        turns[said] = post_turn(client, said, T0 + k * 21 * DAY, scope_id="kim")
        workers.join()
    return turns


def _turn_of(hit: dict[str, Any]) -> str:
    """The turn a hit comes from: the turn itself or the one its fact cites."""
    return str(hit["metadata"].get("turn_id") or hit["id"])


@pytest.mark.parametrize("question", ["what is my job", "what's my job now", "where do I work"])
def test_a_question_of_now_is_answered_by_the_change_that_answers_it(
    client: TestClient, kim: dict[str, str], question: str
) -> None:
    hits = _search(client, question)
    assert _turn_of(hits[0]) == kim[KIM[2]], [h["content"] for h in hits[:3]]
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("question", ["who am I", "what is my name"])
def test_a_change_of_job_retires_not_the_name(
    client: TestClient, kim: dict[str, str], question: str
) -> None:
    hits = _search(client, question)
    named = [h for h in hits[:3] if "I'm Kim." in h["content"]]
    assert named, [h["content"] for h in hits]
    assert named[0]["current"] and not named[0]["superseded_by"], named[0]
    # The nurse's statement alone was replaced, by the teacher's.
    memories = client.get("/v1/memories", params={"scope_id": "kim", "limit": 100}).json()
    replaced = [m["content"] for m in memories["memories"] if m["superseded_by"]]
    assert replaced and all("nurse" in c and "Kim" not in c for c in replaced), replaced


def _add(client: TestClient, content: str, scope_id: str = "zoe") -> dict[str, Any]:
    r = client.post(
        "/v1/memories",
        json={"content": content, "type": "semantic", "scope": "user", "scope_id": scope_id},
    )
    assert r.status_code == 201, r.text
    return dict(r.json())


def test_a_duplicate_hint_names_a_repeat_never_another_fact_of_the_same_person(
    client: TestClient, workers: Process
) -> None:
    facts = {
        said: _add(client, said)["id"]
        for said in (
            "Zoe has two cats.",
            "Zoe lives in Stockholm.",
            "Zoe works at Spotify as a data engineer.",
            "Zoe's favourite food is ramen.",
            "Zoe plays the violin in an orchestra.",
        )
    }
    workers.join()
    assert _add(client, "I'm Zoe.")["duplicates"] == []
    workers.join()
    cats = _add(client, "Zoe's got a pair of cats at home.")["duplicates"]
    assert [d["id"] for d in cats] == [facts["Zoe has two cats."]]
    assert cats[0]["kind"] == "near"


def test_a_change_told_in_the_same_words_is_no_repeat(client: TestClient, workers: Process) -> None:
    _add(client, "The spare house key is under the green flower pot.", "kit")
    workers.join()
    moved = _add(
        client, "The spare house key moved: it is now with the neighbour at number 14.", "kit"
    )
    assert moved["duplicates"] == []


def test_a_supersession_undone_holds_the_older_statement_again_through_every_pass(
    client: TestClient, workers: Process, api_settings: mc.Settings
) -> None:
    leeds = post_turn(client, "I live in a flat in Leeds.", T0, scope_id="lou")
    workers.join()
    post_turn(
        client, "We moved to York last month, into a terraced house.", T0 + 60 * DAY, scope_id="lou"
    )
    workers.join()
    memories = client.get("/v1/memories", params={"scope_id": "lou", "limit": 100}).json()
    older = [
        m for m in memories["memories"] if m["metadata"].get("turn_id") == leeds or m["id"] == leeds
    ]
    superseded = [m for m in older if m["superseded_by"]]
    assert superseded, older

    r = client.post(f"/v1/memories/{superseded[0]['id']}/supersession/undo")
    assert r.status_code == 200, r.text
    assert r.json()["superseded_by"] is None and r.json()["valid_until"] is None
    again = client.post(f"/v1/memories/{superseded[0]['id']}/supersession/undo")
    assert again.status_code == 409, again.text  # current: nothing to undo
    assert client.post("/v1/memories/mt_nothing/supersession/undo").status_code == 404

    def current() -> list[bool]:
        found = client.get("/v1/memories", params={"scope_id": "lou", "limit": 100}).json()
        return [
            not m["superseded_by"] for m in found["memories"] if m["id"] in {o["id"] for o in older}
        ]

    assert all(current()), current()
    brain = mc.open_brain(api_settings)
    try:
        for day in range(61, 400, 30):  # passes on a moving clock, every proposal accepted
            now = T0 + day * DAY
            dream(brain, api_settings, now=now)
            proposals.accept_all(brain, api_settings, now=now)
    finally:
        brain.close()
    assert all(current()), current()


def test_preferences_an_agent_added_are_never_proposed_by_decay(
    client: TestClient, workers: Process, api_settings: mc.Settings
) -> None:
    kept = [
        _add(client, "User prefers dark mode and concise answers.", "zoe")["id"],
        _add(client, "Zoe prefers short answers in the morning.", "zoe")["id"],
    ]
    weak = _add(client, "The weather was grey on the walk today.", "zoe")["id"]
    workers.join()
    brain = mc.open_brain(api_settings)
    try:
        now = time.time() + 400 * DAY  # nobody searched since
        dream(brain, api_settings, now=now)
        named = {
            t
            for p in proposals.list_proposals(brain, api_settings, identity=SYSTEM)
            if p.kind == "prune"
            for t in p.trace_ids
        }
    finally:
        brain.close()
    assert weak in named  # decay proposes what nothing protects
    assert not named & set(kept), named


def test_a_preference_told_in_a_turn_is_never_proposed_by_decay(
    client: TestClient, workers: Process, api_settings: mc.Settings
) -> None:
    # The statements model reads "Shorter races suit me better" as a like more likely
    # than anything else, though not surely: that is enough to keep it.
    told = post_turn(
        client,
        "Not doing another half this year. Maybe a 10k. Shorter races suit me better, "
        "I've decided.",
        time.time(),
        assistant="Noted, you prefer shorter races.",
        scope_id="clara",
    )
    post_turn(client, "The bus was late again this morning.", time.time(), scope_id="clara")
    workers.join()
    brain = mc.open_brain(api_settings)
    try:
        dream(brain, api_settings, now=time.time() + 400 * DAY)
        named = [
            mc.get_trace(brain, t, identity=SYSTEM)
            for p in proposals.list_proposals(brain, api_settings, identity=SYSTEM)
            if p.kind == "prune"
            for t in p.trace_ids
        ]
    finally:
        brain.close()
    turns = [t.metadata.get("turn_id") for t in named]
    assert turns, "decay proposes what nothing protects"
    assert told not in turns, [t.content for t in named]


def test_the_readmes_snippet_run_twice_keeps_one_memory_with_two_occurrences(
    api_settings: mc.Settings, workers: Process
) -> None:
    with serving(api_app(workers)) as url:
        for _ in range(2):  # the README's snippet, twice, through the client
            with Client(url, user="alice") as memory:
                memory.add("Alice is allergic to penicillin.", type="semantic")
        for _ in range(2):  # and through REST
            r = httpx.post(
                url + "/v1/memories",
                json={"content": "Alice is allergic to penicillin.", "type": "semantic"},
                headers={"X-Reverie-User": "alice"},
                timeout=10,
            )
            assert r.status_code in (200, 201), r.text
        with Client(url, user="alice") as memory:
            found = memory.memories().memories
            hits = memory.search("what is Alice allergic to", min_score=0.3).results
    same = [m for m in found if m.content == "Alice is allergic to penicillin."]
    assert len(same) == 1
    assert len(same[0].metadata["occurrences"]) == 4
    assert [h.content for h in hits].count("Alice is allergic to penicillin.") == 1


def test_the_context_block_shows_a_memory_once_however_often_it_was_kept(
    client: TestClient, workers: Process, api_settings: mc.Settings
) -> None:
    brain = mc.open_brain(api_settings)
    try:  # two copies, as an import or two turns telling one fact leave them
        copies = [mc.NewTrace("Ana takes the 7:40 train to Leeds.", scope_id="ana")] * 2
        mc.add_traces(brain, copies, identity=SYSTEM)
        workers.join()
        r = client.post(
            "/v1/context", json={"query": "which train does Ana take", "scope_id": "ana"}
        )
        assert r.status_code == 200, r.text
        assert r.json()["context"].count("7:40 train") == 1
        # The block a session opens with (memctl's session-start hook).
        assert known_of(brain, "ana", identity=SYSTEM).count("7:40 train") == 1
    finally:
        brain.close()


def test_a_turn_found_through_the_turn_before_it_is_less_relevant_than_that_turn(
    client: TestClient, workers: Process
) -> None:
    dog = post_turn(client, "Wir haben seit Mai einen Hund, er heißt Bruno.", T0, scope_id="jan")
    after = post_turn(
        client, "Ich trinke keinen Kaffee mehr, nur noch grünen Tee.", T0 + 60, scope_id="jan"
    )
    workers.join()
    r = client.get("/v1/search", params={"q": "Hund", "scope_id": "jan", "limit": 10})
    assert r.status_code == 200, r.text
    relevance = {_turn_of(h): h["relevance"] for h in r.json()["results"]}
    assert relevance[dog] > 0.5, relevance
    assert relevance.get(after, 0.0) < 0.5, relevance
    assert relevance.get(after, 0.0) < relevance[dog]


def test_small_talk_never_outranks_the_statement_that_answers(
    client: TestClient, workers: Process
) -> None:
    for k, said in enumerate(
        (
            "I drink about three coffees a day, mostly flat whites.",
            "Thanks so much, have a great evening!",
            "I've cut down to one coffee a day now, in the morning.",
        )
    ):
        post_turn(client, said, T0 + k * 7 * DAY, scope_id="cy")
        workers.join()
    r = client.get(
        "/v1/search", params={"q": "how much coffee do I drink these days", "scope_id": "cy"}
    )
    assert r.status_code == 200, r.text
    hits = r.json()["results"]
    assert "one coffee a day" in hits[0]["content"], [h["content"] for h in hits]
    thanks = next(h for h in hits if "Thanks so much" in h["content"])
    assert "small_talk" in thanks["adjustments"]
    assert thanks["relevance"] < hits[0]["relevance"]
