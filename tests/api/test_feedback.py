"""Retrieval that learns from use: a search counts each of its results once however
often it is repeated within the feedback window, and a result the caller reports
reading or citing counts once more, once per search."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from reverie.compose import Process


def _memory(client: TestClient, content: str, scope_id: str = "ana") -> str:
    r = client.post("/v1/memories", json={"content": content, "scope_id": scope_id})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _hike(client: TestClient, workers: Process) -> str:
    """One walk remembered and ingested: its id."""
    hike = _memory(client, "We hiked the Ridgeway from Avebury to Ivinghoe Beacon.")
    workers.join()
    return hike


def _search(client: TestClient, q: str, scope_id: str = "ana") -> dict[str, Any]:
    r = client.get("/v1/search", params={"q": q, "scope_id": scope_id})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def _count(client: TestClient, workers: Process, trace_id: str) -> int:
    workers.join()
    r = client.get(f"/v1/memories/{trace_id}")
    assert r.status_code == 200, r.text
    return int(r.json()["retrieval_count"])


def test_three_identical_searches_count_one_retrieval(client: TestClient, workers: Process) -> None:
    hike = _hike(client, workers)
    for _ in range(3):
        assert [h["id"] for h in _search(client, "Ridgeway hike")["results"]] == [hike]
    assert _count(client, workers, hike) == 1
    # Another question that finds it is another use.
    _search(client, "Avebury Ivinghoe Beacon")
    assert _count(client, workers, hike) == 2


def test_a_result_reported_used_counts_once_per_search(
    client: TestClient, workers: Process
) -> None:
    hike = _hike(client, workers)
    found = _search(client, "Ridgeway hike")
    assert _count(client, workers, hike) == 1
    used = {"query_id": found["query_id"], "trace_ids": [hike]}
    for _ in range(2):  # reported twice: counted once
        r = client.post("/v1/feedback", json=used)
        assert r.status_code == 202, r.text
        assert r.json() == {"recorded": 1, "enqueued": True}
    assert _count(client, workers, hike) == 2


def test_feedback_on_bad_input_or_a_missing_memory_is_refused_and_changes_nothing(
    client: TestClient, workers: Process
) -> None:
    hike = _memory(client, "We hiked the Ridgeway from Avebury to Ivinghoe Beacon.")
    theirs = _memory(client, "Bo's allotment plot is number 14.", scope_id="bo")
    workers.join()
    query_id = _search(client, "Ridgeway hike")["query_id"]
    for body in (
        {"trace_ids": [hike]},  # no search named
        {"query_id": "not-a-search", "trace_ids": [hike]},
        {"query_id": query_id, "trace_ids": []},
        {"query_id": query_id, "trace_ids": [hike, hike]},
    ):
        r = client.post("/v1/feedback", json=body)
        assert r.status_code == 422, (body, r.text)
    r = client.post("/v1/feedback", json={"query_id": query_id, "trace_ids": [hike, "mt_nope"]})
    assert r.status_code == 404, r.text
    assert _count(client, workers, hike) == 1
    assert _count(client, workers, theirs) == 0


def test_a_memory_read_in_full_through_the_read_tool_counts_once(
    client: TestClient, workers: Process
) -> None:
    hike = _hike(client, workers)
    for _ in range(2):
        r = client.post("/v1/tools/memory_read", json={"traceId": hike})
        assert r.status_code == 200, r.text
    assert _count(client, workers, hike) == 1
