"""memctl dream and dreams as a user runs them."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import memory_core as mc
from memory_core.auth import SYSTEM
from tests.conftest import memctl_in_process


def memctl(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "REVERIE_BRAIN_URL": f"sqlite:///{tmp_path / 'brain.sqlite'}",
        "REVERIE_DATA_DIR": str(tmp_path / "data"),
        "REVERIE_EMBEDDER": "none",
    }
    return memctl_in_process(list(args), env=env)


def test_dream_dry_run_then_a_pass_then_the_list(tmp_path: Path) -> None:
    settings = mc.load_settings(brain_url=f"sqlite:///{tmp_path / 'brain.sqlite'}")
    brain = mc.open_brain(settings)
    old = time.time() - 400 * 86_400
    mc.add_trace(brain, "forgotten", now=old, occurred_at=old, identity=SYSTEM)
    mc.add_trace(brain, "twice", identity=SYSTEM)
    mc.add_trace(brain, "twice", identity=SYSTEM)

    dry = memctl(tmp_path, "--json", "dream", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    doc = json.loads(dry.stdout)
    assert doc["status"] == "dry_run"
    assert doc["summary"]["pruned"] == 1 and doc["summary"]["merged"] == 1
    assert not (tmp_path / "data" / "dream-reports").exists()

    run = memctl(tmp_path, "dream")
    assert run.returncode == 0, run.stderr
    assert "report:" in run.stdout and "memctl proposals" in run.stdout

    listed = json.loads(memctl(tmp_path, "--json", "dreams").stdout)["passes"]
    assert [p["status"] for p in listed] == ["ok"]
    # As a person reads it: one line a pass, a number under each heading, no dicts.
    table = memctl(tmp_path, "dreams").stdout.splitlines()
    assert table[0].split() == [
        "pass",
        "status",
        "took",
        "proposed",
        "merged",
        "superseded",
        "linked",
        "derived",
        "compacted",
    ]
    row = next(line.split() for line in table if line.startswith(listed[0]["pass_id"]))
    assert row[1:2] + row[3:5] == ["ok", "1", "1"]  # one prune proposed, one exact merge
    assert "{" not in run.stdout + "\n".join(table)
    pending = json.loads(memctl(tmp_path, "--json", "proposals").stdout)
    assert len(pending["proposals"]) == 1


def test_dream_if_due_skips_a_brain_that_is_not_due(tmp_path: Path) -> None:
    mc.add_trace(
        mc.open_brain(mc.load_settings(brain_url=f"sqlite:///{tmp_path / 'brain.sqlite'}")),
        "one fresh trace",
        identity=SYSTEM,
    )
    r = memctl(tmp_path, "--json", "dream", "--if-due")
    assert r.returncode == 0
    assert json.loads(r.stdout)["status"] == "not_due"


def test_dream_enqueue_without_redis_is_a_clear_error(tmp_path: Path) -> None:
    mc.open_brain(mc.load_settings(brain_url=f"sqlite:///{tmp_path / 'brain.sqlite'}"))
    r = memctl(tmp_path, "dream", "--enqueue")
    assert r.returncode == 2
    assert r.stderr.strip().startswith("memctl: error:") and "REDIS" in r.stderr
