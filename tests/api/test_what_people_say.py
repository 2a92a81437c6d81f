"""What a user says becomes the facts a person would keep.

Turns are posted through the API and ingested by the workers with the offline
extractor; the facts are read back through the API.  A statement the user asked to
be kept is kept above the protect threshold and survives two years of passes whose
every proposal is accepted; a change of job the patterns never listed is a job fact.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi.testclient import TestClient

import memory_core as mc
from memory_core import proposals
from memory_core.auth import SYSTEM
from memory_core.consolidation.dream import dream
from memory_core.traces.decay import DAY
from reverie.compose import Process
from tests.api.conftest import post_turn

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC).timestamp()


def _facts(client: TestClient) -> list[dict[str, Any]]:
    r = client.get("/v1/memories", params={"scope_id": "ana", "tags": "auto_ingest"})
    assert r.status_code == 200, r.text
    return list(r.json()["memories"])


def test_a_statement_asked_to_be_kept_is_protected_and_survives_every_pass(
    client: TestClient, workers: Process, api_settings: mc.Settings
) -> None:
    post_turn(client, "Please remember that I'm allergic to penicillin.", T0)
    post_turn(client, "thanks, that's all for now!", T0 + 60)
    post_turn(client, "We watched a film about whales on Friday night.", T0 + 120)
    workers.join()
    allergy = [f for f in _facts(client) if "allergic to penicillin" in f["content"]]
    assert len(allergy) == 1, _facts(client)
    fact = allergy[0]
    assert not fact["content"].lower().startswith(("user: please", "ana: please"))
    assert fact["importance"] >= api_settings.dream_protect_importance
    assert "keep" in fact["tags"]
    assert fact["metadata"]["attribute"] == "health"

    brain = mc.open_brain(api_settings)
    try:
        proposed: set[str] = set()
        for day in range(0, 730, 30):  # two years, nobody searching, everything accepted
            now = T0 + day * DAY
            dream(brain, api_settings, now=now)
            proposed |= {
                t
                for p in proposals.list_proposals(brain, api_settings, identity=SYSTEM)
                for t in p.trace_ids
            }
            proposals.accept_all(brain, api_settings, now=now)
    finally:
        brain.close()
    assert fact["id"] not in proposed
    assert any(f["id"] == fact["id"] for f in _facts(client))


def test_a_request_to_keep_after_the_statement_keeps_it_too(
    client: TestClient, workers: Process, api_settings: mc.Settings
) -> None:
    post_turn(client, "My locker code at the pool is 4471. Don't forget that!", T0)
    workers.join()
    code = [f for f in _facts(client) if "4471" in f["content"]]
    assert len(code) == 1, _facts(client)
    assert code[0]["importance"] >= api_settings.dream_protect_importance
    assert "keep" in code[0]["tags"]


def test_a_change_of_job_becomes_a_job_fact(client: TestClient, workers: Process) -> None:
    post_turn(client, "Big news: I quit nursing, now I am a teacher at a primary school.", T0)
    workers.join()
    jobs = [f for f in _facts(client) if "teacher" in f["content"]]
    assert len(jobs) == 1, _facts(client)
    assert jobs[0]["metadata"]["attribute"] == "work"
    assert "nursing" in jobs[0]["content"]


def test_small_talk_and_a_question_give_no_fact(client: TestClient, workers: Process) -> None:
    post_turn(client, "haha you always know what to say", T0)
    post_turn(client, "Can you remember what the capital of Peru is?", T0 + 60)
    workers.join()
    assert _facts(client) == []
