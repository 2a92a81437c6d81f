"""Dream passes across processes: one at a time, and a pass killed with -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.brain.maintenance import doctor
from memory_core.consolidation.dream import dream, list_passes

pytestmark = pytest.mark.slow

# A pass whose derive step blocks (after prune and merge committed) until the test
# lets it go, so that a test can race it or kill it midway whatever the machine's
# load: it says when derive started, then waits for its release file.
SLOW_PASS = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    import memory_core as mc
    from memory_core.consolidation import dream as d

    url, data, marker, release = sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
    settings = mc.load_settings(brain_url=url, data_dir=data, dream_lease_ttl_s=float(sys.argv[5]))
    original = d.STEPS[3]

    def slow(ctx):
        marker.write_text("derive started")
        deadline = time.monotonic() + 300
        while not release.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return original[1](ctx)

    d.STEPS[3] = ("derive", slow)
    report = d.dream(mc.open_brain(settings), settings)
    print(json.dumps({"status": report.status}))
    """
)


def start_pass(
    settings: mc.Settings, marker: Path, release: Path, lease_ttl_s: float = 5
) -> subprocess.Popen[str]:
    """A pass in a process of its own that writes ``marker`` once its derive step starts
    and finishes once ``release`` exists (the release can already be there)."""
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            SLOW_PASS,
            settings.brain_url,
            str(settings.data_dir),
            str(marker),
            str(release),
            str(lease_ttl_s),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def wait_for(path: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, "the pass never reached its derive step"
        time.sleep(0.05)


def seeded(settings: mc.Settings) -> mc.Brain:
    brain = mc.open_brain(settings)
    old = time.time() - 400 * 86_400
    for i in range(20):
        mc.add_trace(brain, f"note {i}", now=old, occurred_at=old, identity=SYSTEM)
        mc.add_trace(brain, "a duplicate", identity=SYSTEM)
    return brain


def test_two_passes_at_once_one_runs_one_says_already_running(
    settings: mc.Settings, tmp_path: Path
) -> None:
    seeded(settings)
    release = tmp_path / "release"
    first = start_pass(settings, tmp_path / "m1", release)
    wait_for(tmp_path / "m1")
    (tmp_path / "go").write_text("go")
    second = start_pass(settings, tmp_path / "m2", tmp_path / "go")
    out2, err2 = second.communicate(timeout=120)  # the first is held in derive meanwhile
    release.write_text("go")
    out1, err1 = first.communicate(timeout=120)
    assert json.loads(out2) == {"status": "already_running"}, err2
    assert json.loads(out1) == {"status": "ok"}, err1


def test_a_pass_killed_midway_frees_the_lease_and_leaves_a_healthy_brain(
    settings: mc.Settings, tmp_path: Path
) -> None:
    brain = seeded(settings)
    # The victim renews its lease every third of 15 s: once it is killed, the lease
    # stays its own for ten seconds at least, then runs out.
    victim = start_pass(settings, tmp_path / "m", tmp_path / "never", lease_ttl_s=15)
    wait_for(tmp_path / "m")
    os.killpg(victim.pid, signal.SIGKILL)
    victim.wait(10)
    s = settings.model_copy(update={"dream_lease_ttl_s": 5})
    assert dream(brain, s).status == "already_running"  # its lease has not expired yet
    deadline = time.monotonic() + 60
    while (report := dream(brain, s)).status == "already_running":
        assert time.monotonic() < deadline, "the killed pass's lease never ran out"
        time.sleep(0.5)
    assert report.status == "ok"
    statuses = [p["status"] for p in list_passes(brain, identity=mc.OPEN)]
    assert statuses == ["ok", "interrupted"]
    assert doctor(brain) == []
    # What the killed pass committed before dying is whole: its merge ran.
    with brain.read() as conn:
        dupes = conn.exec_driver_sql(
            "SELECT count(*) FROM memory_traces WHERE content = 'a duplicate' AND deleted = 0"
        ).scalar()
    assert dupes == 1
