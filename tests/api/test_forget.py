"""Forgetting a scope id: nothing of it is left in the brain file, and nothing else goes."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine

import memory_core as mc
from memory_core import proposals
from memory_core.auth import SYSTEM
from memory_core.brain.db import raw_cursor
from memory_core.consolidation.dream import dream
from reverie.compose import Process
from tests.backends import index_finds

SECRET = "zanzibarite"  # a word only alice ever said


def _file_bytes(settings: mc.Settings) -> bytes:
    """The brain file's bytes and its log's (a PostgreSQL server's files are its own)."""
    if not settings.brain_url.startswith("sqlite:///"):
        return b""
    path = Path(settings.brain_url.removeprefix("sqlite:///"))
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def _rows(settings: mc.Settings, sql: str, *params: object) -> list[tuple[object, ...]]:
    """``sql`` (``?`` parameters) on a connection of its own."""
    engine = create_engine(settings.brain_url)
    try:
        with engine.connect() as conn, raw_cursor(conn) as cursor:
            return list(cursor.execute(sql, params).fetchall())
    finally:
        engine.dispose()


@pytest.fixture
def alice_and_bob(
    client: TestClient, api_settings: mc.Settings, workers: Process
) -> dict[str, list[str]]:
    as_alice = {"x-reverie-user": "alice"}
    for k in range(3):
        r = client.post(
            "/v1/turns",
            json={
                "user": f"I polished the {SECRET} stone number {k}.",
                "assistant": f"A {SECRET} stone, lovely.",
                "scope": "user",
                "scope_id": "alice",
                "conversation_id": "a-1",
            },
        )
        assert r.status_code == 202
    client.post("/v1/tools/memory_add", json={"content": f"My {SECRET} is blue."}, headers=as_alice)
    client.post(
        "/v1/memories", json={"content": "Bob keeps bees.", "scope": "user", "scope_id": "bob"}
    )
    workers.join()
    brain = mc.open_brain(api_settings)
    for _ in range(2):  # retrievals, then a pass: co-activation edges between alice's traces
        client.get("/v1/search", params={"q": SECRET}, headers=as_alice)
        workers.join()
    dream(brain, api_settings)
    alice = [
        t.id for t in mc.list_traces(brain, scope_id="alice", limit=500, identity=SYSTEM).traces
    ]
    proposals.create_proposals(
        brain,
        api_settings,
        [proposals.ProposalDraft("prune", [alice[0]], "decayed", {"strength": 0.0}, "prune")],
        "pass_x",
    )
    mc.delete_trace(brain, alice[1], identity=SYSTEM)  # a soft-deleted one goes too
    bob = [t.id for t in mc.list_traces(brain, scope_id="bob", identity=SYSTEM).traces]
    return {"alice": alice, "bob": bob}


def test_forgetting_a_scope_id_leaves_nothing_of_it_in_the_file(
    client: TestClient, api_settings: mc.Settings, alice_and_bob: dict[str, list[str]]
) -> None:
    alice = alice_and_bob["alice"]
    marks = ",".join("?" * len(alice))
    assert (
        _rows(
            api_settings, f"SELECT count(*) FROM coactivation_edges WHERE a IN ({marks})", *alice
        )[0][0]
        > 0
    )
    if api_settings.brain_url.startswith("sqlite:///"):
        assert SECRET.encode() in _file_bytes(api_settings)

    r = client.delete("/v1/scopes/user/alice")
    assert r.status_code == 200, r.text
    gone = r.json()
    assert gone["traces"] == len(alice) and gone["turns"] == 3 and gone["proposals"] == 1
    assert gone["vectors"] > 0 and gone["edges"] > 0

    assert SECRET.encode() not in _file_bytes(api_settings)
    for sql in (
        "SELECT count(*) FROM memory_traces WHERE scope_id = 'alice'",
        f"SELECT count(*) FROM trace_embeddings WHERE trace_id IN ({marks})",
        f"SELECT count(*) FROM vector_archive WHERE trace_id IN ({marks})",
        f"SELECT count(*) FROM coactivation_edges WHERE a IN ({marks}) OR b IN ({marks})",
        f"SELECT count(*) FROM undo_log WHERE trace_id IN ({marks})",
        "SELECT count(*) FROM inbox_turns WHERE payload LIKE '%alice%'",
        "SELECT count(*) FROM proposals WHERE subject_key LIKE '%' || ? || '%'",
    ):
        params = alice * sql.count(f"({marks})") if "IN" in sql else []
        if "subject_key" in sql:
            params = [alice[0]]
        assert _rows(api_settings, sql, *params)[0][0] == 0, sql
    engine = create_engine(api_settings.brain_url)
    with engine.connect() as conn:
        assert index_finds(conn, SECRET) == []
    engine.dispose()
    assert not list((api_settings.data_dir / "proposals").rglob("*.json"))
    # Bob is untouched, and still found.
    hits = client.get("/v1/search", params={"q": "bees"}).json()["results"]
    assert [h["id"] for h in hits] == alice_and_bob["bob"]


def test_a_caller_acting_for_another_user_may_not_forget_it(
    client: TestClient, alice_and_bob: dict[str, list[str]]
) -> None:
    r = client.delete("/v1/scopes/user/alice", headers={"x-reverie-user": "bob"})
    assert r.status_code == 403
    assert client.get("/v1/memories", params={"scope_id": "alice"}).json()["memories"]
    assert client.delete("/v1/scopes/galaxy/alice").status_code == 422


def test_forgetting_while_a_dream_pass_runs_is_refused_and_changes_nothing(
    client: TestClient,
    api_settings: mc.Settings,
    alice_and_bob: dict[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memory_core import forget
    from memory_core.brain.leases import PASS_LEASE, acquire_lease, release_lease

    brain = mc.open_brain(api_settings)
    monkeypatch.setattr(forget, "PASS_WAIT_S", 0.3)  # the wait a running pass is given
    assert acquire_lease(brain, PASS_LEASE, "dream_running", 600)
    try:
        r = client.delete("/v1/scopes/user/alice")
        assert r.status_code == 409 and "dream pass is running" in r.json()["error"]["message"]
        listed = client.get("/v1/memories", params={"scope_id": "alice"}).json()["memories"]
        assert len(listed) == len(alice_and_bob["alice"]) - 1  # one was soft-deleted
    finally:
        release_lease(brain, PASS_LEASE, "dream_running")
        brain.close()
    assert client.delete("/v1/scopes/user/alice").status_code == 200
