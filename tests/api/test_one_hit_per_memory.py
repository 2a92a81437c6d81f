"""A fact and the turn it was drawn from are one memory: one hit, the other attached,
and a search's ``limit`` counts memories."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from reverie.compose import Process

TURNS = (
    "My sister Marta is vegan and she lives in Porto.",
    "My brother Tiago is a vegan chef in Lisbon.",
    "Our neighbour Rui went vegan last spring.",
)


def _post_all(client: TestClient, workers: Process) -> list[str]:
    ids = []
    for k, user in enumerate(TURNS):
        r = client.post(
            "/v1/turns",
            json={
                "user": user,
                "assistant": "Good to know.",
                "scope": "user",
                "scope_id": "ana",
                "timestamp": 1_700_000_000 + k * 3600,
            },
        )
        assert r.status_code == 202, r.text
        ids.append(r.json()["turn_id"])
    workers.join()
    return ids


def _memory(hit: dict[str, Any]) -> str:
    return str(hit["metadata"]["turn_id"])


def test_a_fact_and_its_turn_are_one_hit(client: TestClient, workers: Process) -> None:
    ids = _post_all(client, workers)
    r = client.get("/v1/search", params={"q": "Marta vegan Porto", "scope_id": "ana"})
    assert r.status_code == 200, r.text
    hits = r.json()["results"]
    marta = [h for h in hits if _memory(h) == ids[0]]
    assert len(marta) == 1, [h["content"] for h in hits]
    attached = marta[0]["attached"]
    assert attached, "the other trace of the memory (the fact or the turn) is attached"
    types = {marta[0]["type"], *(a["type"] for a in attached)}
    assert "episodic" in types and any("Marta" in a["content"] for a in attached)


def test_limit_counts_memories_not_rows(client: TestClient, workers: Process) -> None:
    ids = _post_all(client, workers)
    r = client.get("/v1/search", params={"q": "vegan", "scope_id": "ana", "limit": 3})
    hits = r.json()["results"]
    assert len(hits) == 3 and len({_memory(h) for h in hits}) == 3
    assert {_memory(h) for h in hits} == set(ids)
    tool = client.post(
        "/v1/tools/memory_search",
        json={"query": "vegan", "limit": 2},
        headers={"X-Reverie-User": "ana"},
    ).json()["results"]
    assert len(tool) == 2 and all("attached" in h for h in tool)


def test_a_fact_stands_for_its_turn_at_a_discount(client: TestClient, workers: Process) -> None:
    """A fact's few words match more easily than a whole turn's: it ranks at the fact
    factor of its own score, so it goes ahead of other turns only when clearly better."""
    _post_all(client, workers)
    r = client.get("/v1/search", params={"q": "Marta vegan Porto", "scope_id": "ana"})
    hits = r.json()["results"]
    assert any("auto_ingest" in h["tags"] for h in hits)  # facts are among the hits
    for h in hits:
        if "auto_ingest" in h["tags"]:
            assert h["adjustments"]["fact"] == 0.7
        else:
            assert "fact" not in h["adjustments"]
