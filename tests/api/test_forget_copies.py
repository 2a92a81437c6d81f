"""Forgetting a scope id reaches every copy of its words: the brain's tables, the pass
reports (in the brain and as files), proposals in every state, the history of an
edited memory, and the saved vector graph -- and leaves every other tenant's alone.

Through the real HTTP door, on both backends: the words are looked for in the raw
bytes of every file of the data folder and of the brain file and its logs (SQLite),
or in every row of every table (PostgreSQL).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

import memory_core as mc
from memory_core.consolidation.dream import dream
from reverie.compose import Process

ALICE = "qzvormian"  # words only alice ever said (a stem-safe prefix is searched)
ALICE_EDITED = "plimsquaddle"  # words alice's memory held only before she edited it
BOB = "bexalunder"  # bob's
DAY = 86_400.0
AS = {"alice": {"x-reverie-user": "alice"}, "bob": {"x-reverie-user": "bob"}}


@pytest.fixture
def api_settings(tmp_path: Path, brain_url: str) -> mc.Settings:
    # Every vector is searched through the saved graph: its files are a copy too.
    return mc.load_settings(
        brain_url=brain_url,
        data_dir=tmp_path / "data",
        embedder="stub",
        search_approximate_from=1,
    )


def _turn(client: TestClient, who: str, words: str, k: int) -> None:
    r = client.post(
        "/v1/turns",
        json={
            "user": f"I polished the {words} stone number {k} in the garden.",
            "assistant": f"A {words} stone, lovely.",
            "scope": "user",
            "scope_id": who,
            "conversation_id": f"{who}-1",
        },
    )
    assert r.status_code == 202, r.text


def _memory(client: TestClient, who: str, content: str) -> str:
    r = client.post("/v1/memories", json={"content": content, "scope_id": who})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _wait(predicate: Any, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _graph_files(settings: mc.Settings) -> list[Path]:
    return sorted((settings.data_dir / "vector-cache").glob("*.usearch"))


def _graph_keys(settings: mc.Settings) -> set[int]:
    from usearch.index import Index

    keys: set[int] = set()
    for path in _graph_files(settings):
        keys |= {int(k) for k in Index.restore(str(path)).keys}
    return keys


def _files_holding(folder: Path, needle: bytes) -> list[str]:
    return sorted(
        str(p) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes().lower()
    )


def _brain_holds(settings: mc.Settings, needle: str) -> list[str]:
    """Where the brain still holds ``needle``: its file and logs' raw bytes after a
    checkpoint (SQLite), or any row of any table, every column as text (PostgreSQL)."""
    engine = create_engine(settings.brain_url)
    try:
        if engine.dialect.name == "sqlite":
            with engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
            path = Path(settings.brain_url.removeprefix("sqlite:///"))
            files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
            return [
                p.name for p in files if p.exists() and needle.encode() in p.read_bytes().lower()
            ]
        with engine.connect() as conn:
            names = conn.execute(
                text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
            ).scalars()
            return [
                table
                for table in names
                if conn.execute(
                    text(f'SELECT count(*) FROM "{table}" AS r WHERE lower(r::text) LIKE :n'),
                    {"n": f"%{needle}%"},
                ).scalar_one()
            ]
    finally:
        engine.dispose()


@pytest.fixture
def two_tenants(
    client: TestClient, api_settings: mc.Settings, workers: Process
) -> Iterator[dict[str, Any]]:
    for k in range(3):
        _turn(client, "alice", ALICE, k)
        _turn(client, "bob", BOB, k)
    kettle = _memory(client, "alice", f"My {ALICE_EDITED} kettle is blue.")
    r = client.patch(
        f"/v1/memories/{kettle}", json={"content": "My kettle is green."}, headers={"If-Match": "1"}
    )
    assert r.status_code == 200, r.text
    _memory(client, "alice", f"My {ALICE} garden gnome is called Fred.")
    _memory(client, "bob", f"My {BOB} bees make honey.")
    workers.join()
    for who, words in (("alice", ALICE), ("bob", BOB)):  # retrievals: the log, the edges
        for _ in range(2):
            client.get("/v1/search", params={"q": words}, headers=AS[who])
            workers.join()
    # The vector graph is built in the background and saved in the data folder.
    _wait(lambda: _graph_files(api_settings), "the vector graph to be saved")
    brain: mc.Brain = client.app.state.brain  # type: ignore[attr-defined]
    report = dream(
        brain, api_settings, embedder=workers.runtime.embedder(), now=time.time() + 400 * DAY
    )  # a clock moved on
    assert report.status == "ok", report.error
    listed = client.get("/v1/proposals", params={"status": "pending"}).json()["proposals"]
    ids = {}
    for who in ("alice", "bob"):
        listed_by = client.get("/v1/memories", params={"scope_id": who}).json()["memories"]
        ids[who] = [m["id"] for m in listed_by]
    mine = [p for p in listed if set(p["trace_ids"]) & set(ids["alice"])]
    theirs = [p for p in listed if set(p["trace_ids"]) & set(ids["bob"])]
    assert len(mine) >= 2 and theirs, listed
    assert client.post(f"/v1/proposals/{mine[0]['id']}/reject").status_code == 200
    with brain.read() as conn:
        seqs = conn.execute(
            text("SELECT seq FROM memory_traces WHERE scope_id = 'alice'")
        ).scalars()
        alice_seqs = {int(s) for s in seqs}
    yield {
        "pass_id": report.pass_id,
        "alice": ids["alice"],
        "alice_seqs": alice_seqs,
        "bob_proposals": [p["id"] for p in theirs],
    }


def test_forgetting_a_user_leaves_their_words_in_no_copy_and_others_intact(
    client: TestClient, api_settings: mc.Settings, two_tenants: dict[str, Any]
) -> None:
    data = api_settings.data_dir
    reports = data / "dream-reports"
    # Before: the words are in the pass's reports (files and brain), proposals and graph.
    assert _files_holding(reports, ALICE.encode()), "the report never held alice's words"
    assert _files_holding(data / "proposals", ALICE.encode())
    assert _brain_holds(api_settings, ALICE_EDITED)
    assert two_tenants["alice_seqs"] & _graph_keys(api_settings)

    r = client.delete("/v1/scopes/user/alice")
    assert r.status_code == 200, r.text

    for needle in (ALICE, ALICE_EDITED, *two_tenants["alice"]):
        assert _brain_holds(api_settings, needle.lower()) == [], needle
        assert _files_holding(data, needle.lower().encode()) == [], needle
    assert not two_tenants["alice_seqs"] & _graph_keys(api_settings)
    # Bob's words, proposals and report stay.
    assert _files_holding(reports, BOB.encode())
    assert _brain_holds(api_settings, BOB)
    listed = client.get("/v1/proposals", params={"status": "pending"}).json()["proposals"]
    assert {p["id"] for p in listed} == set(two_tenants["bob_proposals"])
    for pid in two_tenants["bob_proposals"]:
        assert (data / "proposals" / "pending" / f"{pid}.json").exists()
    doc = client.get(f"/v1/dreams/{two_tenants['pass_id']}").json()
    assert BOB in json.dumps(doc)
    hits = client.get("/v1/search", params={"q": BOB}, headers=AS["bob"]).json()["results"]
    assert hits
