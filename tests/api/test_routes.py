"""The HTTP API: every route, its refusals, and that a refusal stores nothing."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

import memory_core as mc
from reverie.compose import Process
from tests.conftest import LOCAL, TOOL_NAMES

TURN = {
    "user": "I adopted a corgi named Biscuit.",
    "assistant": "Lovely!",
    "scope": "user",
    "scope_id": "alice",
}


def counts(settings: mc.Settings) -> tuple[int, int]:
    brain = mc.open_brain(settings)
    with brain.read() as conn:
        inbox = conn.execute(text("SELECT count(*) FROM inbox_turns")).scalar_one()
        traces = conn.execute(text("SELECT count(*) FROM memory_traces")).scalar_one()
    return int(inbox), int(traces)


def queued(workers: Process) -> int:
    return sum(workers.broker.queues[q].qsize() for q in ("ingest", "embed", "maintenance"))  # type: ignore[attr-defined]


def test_post_turn_answers_202_and_the_turn_becomes_searchable(
    client: TestClient, workers: Process
) -> None:
    r = client.post(
        "/v1/turns",
        json={
            **TURN,
            "conversation_id": "c1",
            "timestamp": "2024-05-08T13:56:00Z",
            "metadata": {"channel": "web"},
        },
    )
    assert r.status_code == 202, r.text
    turn_id = r.json()["turn_id"]
    assert r.json()["enqueued"] is True
    workers.join()
    assert client.get(f"/v1/turns/{turn_id}").json()["status"] == "done"
    hits = client.get("/v1/search", params={"q": "corgi", "tags": "turn"}).json()["results"]
    assert len(hits) == 1
    assert hits[0]["content"].startswith("User: I adopted a corgi")
    assert hits[0]["occurred_at"] == "2024-05-08T13:56:00Z"
    assert hits[0]["created_at"].endswith("Z") and len(hits[0]["created_at"]) == 20


def test_same_idempotency_key_is_accepted_once(
    client: TestClient, api_settings: mc.Settings
) -> None:
    first = client.post("/v1/turns", json={**TURN, "idempotency_key": "abc"}).json()
    second = client.post("/v1/turns", json={**TURN, "idempotency_key": "abc"}).json()
    assert second == {"turn_id": first["turn_id"], "duplicate": True, "enqueued": False}
    assert counts(api_settings)[0] == 1


def test_an_idempotency_key_is_each_tenants_own(client: TestClient, workers: Process) -> None:
    """Bob's key does not swallow Alice's turn, nor tell her Bob's turn id; a repeat of
    one's own post still answers one's own turn."""

    def post(scope_id: str, user: str) -> dict[str, Any]:
        r = client.post(
            "/v1/turns",
            json={**TURN, "user": user, "scope_id": scope_id, "idempotency_key": "c-17/42"},
        )
        assert r.status_code == 202, r.text
        return dict(r.json())

    bob = post("bob", "Bob's turn: I keep bees.")
    alice = post("alice", "Alice's turn: I grow basil.")
    assert not bob["duplicate"] and not alice["duplicate"]
    assert alice["turn_id"] != bob["turn_id"]
    assert post("alice", "Alice's turn: I grow basil.") == {
        "turn_id": alice["turn_id"], "duplicate": True, "enqueued": False
    }  # fmt: skip
    assert post("bob", "Bob again")["turn_id"] == bob["turn_id"]
    workers.join()
    for scope_id, said in (("alice", "basil"), ("bob", "bees")):
        r = client.get("/v1/search", params={"q": said, "scope": "user", "scope_id": scope_id})
        assert [h["scope_id"] for h in r.json()["results"]][:1] == [scope_id]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({k: v for k, v in TURN.items() if k != "user"}, "user"),
        ({**TURN, "user": 5}, "user"),
        ({**TURN, "scope": "galaxy"}, "scope"),
        ({**TURN, "scope_id": ""}, "scope_id"),
        ({**TURN, "user": "", "assistant": "  "}, "user"),
        ({**TURN, "timestamp": "last tuesday"}, "timestamp"),
        ({**TURN, "metadata": [1, 2]}, "metadata"),
        ({**TURN, "colour": "teal"}, "colour"),
    ],
)
def test_bad_turns_get_a_4xx_naming_the_field_and_store_nothing(
    client: TestClient,
    workers: Process,
    api_settings: mc.Settings,
    body: dict[str, Any],
    field: str,
) -> None:
    r = client.post("/v1/turns", json=body)
    assert 400 <= r.status_code < 500, r.text
    assert field in r.json()["error"]["message"]
    assert counts(api_settings) == (0, 0)
    assert queued(workers) == 0


def test_malformed_json_and_oversized_bodies_are_refused(
    client: TestClient, workers: Process, api_settings: mc.Settings
) -> None:
    r = client.post(
        "/v1/turns", content=b'{"user": "x", ', headers={"content-type": "application/json"}
    )
    assert r.status_code == 422 and "JSON" in r.json()["error"]["message"]
    big = {**TURN, "user": "x" * (64 * 1024)}
    r = client.post("/v1/turns", json=big)
    assert r.status_code == 413 and "limit" in r.json()["error"]["message"]

    def chunks() -> Any:
        yield b'{"user": "'
        for _ in range(100):
            yield b"y" * 1024
        yield b'"}'

    r = client.post("/v1/turns", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert counts(api_settings) == (0, 0)
    assert queued(workers) == 0


def test_memories_crud_merge_and_search(client: TestClient) -> None:
    r = client.post(
        "/v1/memories",
        json={
            "content": "Alice prefers tea.",
            "type": "semantic",
            "scope_id": "alice",
            "tags": ["pref"],
        },
    )
    assert r.status_code == 201, r.text
    a = r.json()
    assert (a["type"], a["scope"], a["scope_id"], a["tags"]) == (
        "semantic",
        "user",
        "alice",
        ["pref"],
    )
    b = client.post("/v1/memories", json={"content": "Alice likes green tea."}).json()
    assert client.get(f"/v1/memories/{a['id']}").json()["content"] == "Alice prefers tea."
    r = client.patch(
        f"/v1/memories/{a['id']}",
        json={"content": "Alice prefers oolong tea."},
        headers={"If-Match": str(a["version"])},
    )
    assert r.status_code == 200 and r.json()["version"] == a["version"] + 1
    stale = client.patch(
        f"/v1/memories/{a['id']}", json={"tags": ["x"]}, headers={"If-Match": str(a["version"])}
    )
    assert stale.status_code == 409
    assert client.patch(f"/v1/memories/{a['id']}", json={}).status_code == 422
    found = client.get("/v1/search", params={"q": "tea", "tags": "pref"}).json()["results"]
    assert [h["id"] for h in found] == [a["id"]]
    merged = client.post("/v1/memories/merge", json={"ids": [a["id"], b["id"]]}).json()
    assert merged == {"survivor_id": a["id"], "deleted_ids": [b["id"]]}
    assert client.delete(f"/v1/memories/{a['id']}").json() == {"deleted": True, "id": a["id"]}
    assert client.get(f"/v1/memories/{a['id']}").status_code == 404
    assert (
        client.get(f"/v1/memories/{a['id']}", params={"include_deleted": True}).status_code == 200
    )
    assert client.delete(f"/v1/memories/{a['id']}").status_code == 404
    assert client.get("/v1/search", params={"q": "tea"}).json()["results"] == []


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status"),
    [
        ("post", "/v1/memories", {"json": {"content": ""}}, 422),
        ("post", "/v1/memories", {"json": {"content": "x", "type": "feeling"}}, 422),
        ("post", "/v1/memories", {"json": {"content": "x", "importance": 3}}, 422),
        ("patch", "/v1/memories/mt_nope", {"json": {"content": "x"}}, 404),
        ("post", "/v1/memories/merge", {"json": {"ids": ["mt_a"]}}, 422),
        ("post", "/v1/memories/merge", {"json": {"ids": ["mt_a", "mt_b"]}}, 404),
        ("get", "/v1/search", {"params": {"q": "x", "limit": 0}}, 422),
        ("get", "/v1/search", {"params": {"q": "x", "limit": 101}}, 422),
        ("get", "/v1/search", {"params": {"q": "x", "type": "feeling"}}, 422),
        ("get", "/v1/search", {"params": {}}, 422),
        ("get", "/v1/search", {"params": {"q": "x", "as_of": "soon"}}, 422),
        ("get", "/v1/turns/turn_nope", {}, 404),
    ],
)
def test_refusals_have_status_and_message_and_change_nothing(
    client: TestClient,
    api_settings: mc.Settings,
    method: str,
    path: str,
    kwargs: dict[str, Any],
    status: int,
) -> None:
    client.post("/v1/memories", json={"content": "existing"})
    before = counts(api_settings)
    r = getattr(client, method)(path, **kwargs)
    assert r.status_code == status, r.text
    assert r.json()["error"]["message"]
    assert counts(api_settings) == before


def test_tools_are_listed_and_callable(
    client: TestClient, workers: Process, api_settings: mc.Settings
) -> None:
    tools = client.get("/v1/tools").json()["tools"]
    assert [t["name"] for t in tools] == TOOL_NAMES
    r = client.post(
        "/v1/tools/memory_add", json={"content": "Bob uses vim."}, headers={"X-Reverie-User": "bob"}
    )
    assert r.status_code == 200
    trace_id = r.json()["traceId"]
    assert client.get(f"/v1/memories/{trace_id}").json()["scope_id"] == "bob"
    r = client.post(
        "/v1/tools/memory_search",
        json={"query": "vim", "scope": "user"},
        headers={"X-Reverie-User": "bob"},
    )
    assert [h["id"] for h in r.json()["results"]] == [trace_id]
    bad = client.post("/v1/tools/memory_add", json={"content": "x", "type": "feeling"})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_argument"
    assert client.post("/v1/tools/memory_fly", json={}).status_code == 404
    # A pass is queued for the workers, off the request's thread, and answered by its id.
    reflected = client.post("/v1/tools/memory_reflect", json={})
    assert reflected.status_code == 200
    assert reflected.json()["status"] == "queued"
    pass_id = reflected.json()["passId"]
    workers.join()
    from memory_core.consolidation.dream import list_passes

    [ran] = [
        p
        for p in list_passes(mc.open_brain(api_settings), identity=mc.OPEN)
        if p["pass_id"] == pass_id
    ]
    assert ran["status"] == "ok" and set(ran["counts"]) >= {"prune", "merge", "derive"}


def test_health_readiness_and_openapi(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["checks"] == {"brain": "ok", "broker": "ok"}
    spec = client.get("/openapi.json").json()
    assert "/v1/turns" in spec["paths"] and "/v1/search" in spec["paths"]


def test_readyz_asks_a_live_redis_broker(api_settings: mc.Settings, redis_url: str) -> None:
    from reverie.compose import app as api_app
    from reverie.compose import process

    settings = api_settings.model_copy(update={"redis_url": redis_url})
    with TestClient(api_app(process(settings, run_workers=False)), base_url=LOCAL) as c:
        ready = c.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json()["checks"] == {"brain": "ok", "broker": "ok"}


def test_readyz_reports_a_broker_that_is_down(api_settings: mc.Settings) -> None:
    from reverie.compose import app as api_app
    from reverie.compose import process

    settings = api_settings.model_copy(update={"redis_url": "redis://127.0.0.1:1/0"})
    with TestClient(api_app(process(settings, run_workers=False)), base_url=LOCAL) as c:
        r = c.get("/readyz")
        assert r.status_code == 503 and r.json()["checks"]["broker"].startswith("unreachable")
        # The turn is still accepted and kept: reconcile enqueues it later.
        accepted = c.post("/v1/turns", json=TURN)
        assert accepted.status_code == 202 and accepted.json()["enqueued"] is False


def test_search_as_of_and_score_breakdown_over_http(client: TestClient, workers: Process) -> None:
    old = client.post(
        "/v1/memories",
        json={"content": "Alice lives in Porto.", "timestamp": "2024-01-01T00:00:00Z"},
    ).json()
    client.delete(f"/v1/memories/{old['id']}")
    new = client.post("/v1/memories", json={"content": "Alice lives in Lisbon."}).json()
    workers.join()  # the embed jobs: the vector channel has the new trace
    now = client.get("/v1/search", params={"q": "Alice lives"}).json()
    assert [h["id"] for h in now["results"]] == [new["id"]]
    assert now["channels"] == ["bm25", "vector"] and now["degraded"] == []
    hit = now["results"][0]
    assert set(hit["channels"]) == {"bm25", "vector"} and "fused" in hit and "adjustments" in hit
    then = client.get("/v1/search", params={"q": "Alice lives", "as_of": "2024-06-01"}).json()
    assert [h["id"] for h in then["results"]] == [old["id"]]
    r = client.get("/v1/search", params={"q": "Alice", "as_of": "June"})
    assert r.status_code == 422 and "as_of" in r.json()["error"]["message"]
