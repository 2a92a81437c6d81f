"""GET /v1/memories: newest first, a page at a time, stable while others write."""

from __future__ import annotations

import threading

from fastapi.testclient import TestClient

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.traces.model import NewTrace


def test_paging_through_a_thousand_traces_while_writes_happen_skips_and_repeats_none(
    client: TestClient, api_settings: mc.Settings
) -> None:
    brain = mc.open_brain(api_settings)
    there = mc.add_traces(
        brain,
        [NewTrace(f"note {k}", scope="user", scope_id="ana") for k in range(1000)],
        identity=SYSTEM,
    )
    stop = threading.Event()

    def writer() -> None:
        k = 0
        while not stop.is_set():
            mc.add_trace(
                brain, f"written meanwhile {k}", scope="user", scope_id="ana", identity=SYSTEM
            )
            k += 1

    thread = threading.Thread(target=writer)
    thread.start()
    seen: list[str] = []
    seqs: list[int] = []
    cursor = None
    try:
        while True:
            params = {"scope_id": "ana", "limit": 37, **({"cursor": cursor} if cursor else {})}
            page = client.get("/v1/memories", params=params).json()
            seen += [m["id"] for m in page["memories"]]
            seqs += [mc.get_trace(brain, m["id"], identity=SYSTEM).seq for m in page["memories"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
    finally:
        stop.set()
        thread.join()
    assert len(seen) == len(set(seen))  # nothing twice
    assert set(there) <= set(seen)  # nothing present throughout is missed
    assert seqs == sorted(seqs, reverse=True)  # newest stored first


def test_a_listing_is_filtered_and_confined_to_the_callers_user(
    client: TestClient, api_settings: mc.Settings
) -> None:
    brain = mc.open_brain(api_settings)
    ana = mc.add_trace(
        brain, "Ana's note", scope="user", scope_id="ana", tags=["x"], identity=SYSTEM
    )
    mc.add_trace(
        brain, "Ana's plan", scope="user", scope_id="ana", type="prospective", identity=SYSTEM
    )
    ben = mc.add_trace(
        brain, "Ben's note", scope="user", scope_id="ben", tags=["x"], identity=SYSTEM
    )
    listed = client.get("/v1/memories", params={"tags": "x"}).json()["memories"]
    assert [m["id"] for m in listed] == [ben, ana]
    as_ana = client.get("/v1/memories", headers={"x-reverie-user": "ana"}).json()["memories"]
    assert {m["scope_id"] for m in as_ana} == {"ana"} and len(as_ana) == 2
    semantic = client.get("/v1/memories", params={"type": "prospective", "scope_id": "ana"})
    assert [m["content"] for m in semantic.json()["memories"]] == ["Ana's plan"]


def test_a_cursor_it_never_gave_is_refused(client: TestClient) -> None:
    for cursor in ("nonsense", "c2VxOmFiYw", "!!"):
        r = client.get("/v1/memories", params={"cursor": cursor})
        assert r.status_code == 422, r.text
        assert "cursor" in r.json()["error"]["message"]
    assert client.get("/v1/memories", params={"limit": 0}).status_code == 422
