"""memctl reconcile, embed-backfill and import's embedding hand-off."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import redis

import memory_core as mc
from memory_core import inbox
from memory_core.auth import SYSTEM
from tests.conftest import memctl_in_process


def memctl(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {
        "REVERIE_BRAIN_URL": f"sqlite:///{tmp_path / 'brain.sqlite'}",
        "REVERIE_EMBEDDER": "stub",
        **env,
    }
    return memctl_in_process(["--json", *args], env=full)


def brain_at(tmp_path: Path) -> mc.Brain:
    return mc.open_brain(mc.load_settings(brain_url=f"sqlite:///{tmp_path / 'brain.sqlite'}"))


def test_embed_backfill_embeds_what_lacks_a_vector_and_reruns_as_a_no_op(tmp_path: Path) -> None:
    brain = brain_at(tmp_path)
    for i in range(5):
        mc.add_trace(brain, f"trace number {i}", identity=SYSTEM)
    first = memctl(tmp_path, "embed-backfill")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == {"embedded": 5, "model": "stub"}
    assert json.loads(memctl(tmp_path, "embed-backfill").stdout)["embedded"] == 0


def test_reconcile_in_embedded_mode_ingests_pending_turns_now(tmp_path: Path) -> None:
    brain = brain_at(tmp_path)
    turn = inbox.accept_turn(
        brain, inbox.Turn("I play the cello.", "Nice!", "user", "u1"), identity=SYSTEM
    )
    r = memctl(tmp_path, "reconcile")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["mode"] == "in-process" and doc["turns"] == 1
    assert inbox.turn_status(brain_at(tmp_path), turn.turn_id, identity=SYSTEM)["status"] == "done"


def test_import_with_redis_queues_the_new_traces_for_embedding(
    tmp_path: Path, redis_url: str
) -> None:
    csv_file = tmp_path / "notes.csv"
    csv_file.write_text("content,tags\nfirst note,a\nsecond note,b\n")
    r = memctl(tmp_path, "import", "csv", str(csv_file), REVERIE_REDIS_URL=redis_url)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["imported"] == 2 and doc["unembedded"] == 2 and doc["embed_enqueued"] is True
    client = redis.Redis.from_url(redis_url)
    assert any(b"embed" in key for key in client.keys("*"))
