"""One tenant's poisoned turn never costs another tenant's turns: turns posted over HTTP
and ingested in one job, one of them answered by the LLM with text no brain stores."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

import memory_core as mc
from reverie.compose import app as api_app
from reverie.compose import embedded, process
from tests.conftest import LOCAL
from tests.fakes import FakeLLM


def post(client: TestClient, user: str, scope_id: str) -> str:
    r = client.post(
        "/v1/turns",
        json={"user": user, "assistant": "Noted.", "scope": "user", "scope_id": scope_id},
    )
    assert r.status_code == 202, r.text
    return str(r.json()["turn_id"])


@pytest.mark.parametrize("bad", ["\x00", "\ud800", "\x1b[2J"], ids=["nul", "surrogate", "ctl"])
def test_a_poisoned_llm_answer_for_one_tenant_loses_no_other_tenants_turn(
    tmp_path: Path, brain_url: str, llm_server: FakeLLM, bad: str
) -> None:
    def respond(asked: dict[str, Any]) -> dict[str, Any]:
        if "Mallory" in asked["messages"][1]["content"]:
            return {"facts": [{"content": f"The user is Mallory{bad}.", "category": "knowledge"}]}
        return {"facts": [{"content": "The user repots ferns.", "category": "knowledge"}]}

    llm_server.respond = respond
    settings = mc.load_settings(
        brain_url=brain_url,
        data_dir=tmp_path / "data",
        embedder="none",
        llm_base_url=llm_server.url,
        llm_max_retries=0,
        reconcile_after_s=0.001,
    )
    served = process(settings, run_workers=False)
    try:
        with TestClient(api_app(served), base_url=LOCAL) as client:
            alice = [post(client, f"I repotted fern {i}.", "alice") for i in range(6)]
            mallory = post(client, "I am Mallory.", "mallory")
            alice += [post(client, f"I repotted fern {i}.", "alice") for i in range(6, 12)]
        # The queue lost their messages: reconcile sends all thirteen in one job.
        served.broker.flush_all()
        served.workers.start(2)
        served.actors.reconcile.send()
        served.join()
        brain = served.runtime.brain
        with brain.read() as conn:
            status = dict(conn.execute(text("SELECT id, status FROM inbox_turns")).all())
            facts = conn.execute(
                text("SELECT content FROM memory_traces WHERE scope_id = 'mallory'")
            ).scalars()
            assert all(bad not in f and "\x1b" not in f for f in facts)
    finally:
        served.stop()
    assert {status[t] for t in alice} == {"done"}
    assert status[mallory] == "done"
    assert len(llm_server.requests) == 13


def test_reconcile_tries_a_failed_turn_again_and_counts_it(tmp_path: Path, brain_url: str) -> None:
    """A turn marked failed (its attempts spent) is sent again, alone, once its back-off
    has passed, and ingested; ``reverie_turns_retried_total`` counts it."""
    settings = mc.load_settings(
        brain_url=brain_url,
        data_dir=tmp_path / "data",
        embedder="none",
        ingest_failed_retry_s=0.01,
    )
    served = process(settings, run_workers=False)
    try:
        with TestClient(api_app(served), base_url=LOCAL) as client:
            lost = post(client, "I keep my bike in the hallway.", "alice")
            served.broker.flush_all()
            with served.runtime.brain.transaction() as conn:  # failed earlier, for good
                conn.execute(
                    text(
                        "UPDATE inbox_turns SET status = 'failed', attempts = :n, "
                        "last_error = 'it failed', updated_at = updated_at - 1"
                    ),
                    {"n": settings.ingest_max_attempts},
                )
            served.workers.start(1)
            served.actors.reconcile.send()
            served.join()
            assert client.get(f"/v1/turns/{lost}").json()["status"] == "done"
            exposition = client.get("/metrics").text
    finally:
        served.stop()
    assert served.actors.stats["turns_retried"] == 1
    assert "reverie_turns_retried_total" in exposition


def test_a_slow_drip_llm_costs_a_posted_turn_at_most_its_timeout(
    tmp_path: Path, brain_url: str, llm_server: FakeLLM
) -> None:
    """Headers at once, then a byte every 0.25 s (half a minute in all): the turn is
    ingested, offline, REVERIE_LLM_TIMEOUT_S (plus a second) after it was accepted."""
    llm_server.respond = lambda asked: {"facts": [{"content": "x" * 60, "category": "goal"}]}
    llm_server.drip = 0.25
    timeout_s = 2.0
    settings = mc.load_settings(
        brain_url=brain_url,
        data_dir=tmp_path / "data",
        embedder="none",
        llm_base_url=llm_server.url,
        llm_timeout_s=timeout_s,
    )
    served = embedded(settings, threads=1)
    try:
        with TestClient(api_app(served), base_url=LOCAL) as client:
            turn_id = post(client, "I want to run a marathon in May.", "alice")
            deadline = time.monotonic() + 60
            while (status := client.get(f"/v1/turns/{turn_id}").json())["status"] != "done":
                assert time.monotonic() < deadline, status
                time.sleep(0.05)
    finally:
        served.stop()
    assert status["processed_at"] - status["created_at"] <= timeout_s + 1.0
    assert served.actors.stats["extractor_fallbacks"] == 1
