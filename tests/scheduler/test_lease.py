"""Leases in the brain: one holder per name, expiry, renewal, and a real race."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import memory_core as mc
from memory_core.brain.leases import acquire_lease, lease_holder, release_lease, renew_lease

T0 = 1_800_000_000.0


def test_a_free_lease_is_taken_and_a_second_holder_is_refused(brain: mc.Brain) -> None:
    assert acquire_lease(brain, "job", "a", ttl_s=30, now=T0)
    assert not acquire_lease(brain, "job", "b", ttl_s=30, now=T0 + 29.9)
    held = lease_holder(brain, "job")
    assert held is not None and (held.holder, held.expires_at) == ("a", T0 + 30)


def test_the_holder_may_acquire_again_which_extends_it(brain: mc.Brain) -> None:
    assert acquire_lease(brain, "job", "a", ttl_s=30, now=T0)
    assert acquire_lease(brain, "job", "a", ttl_s=30, now=T0 + 20)
    assert not acquire_lease(brain, "job", "b", ttl_s=30, now=T0 + 40)


def test_an_expired_lease_is_taken_over(brain: mc.Brain) -> None:
    assert acquire_lease(brain, "job", "a", ttl_s=30, now=T0)
    assert acquire_lease(brain, "job", "b", ttl_s=30, now=T0 + 30)  # expires_at <= now
    held = lease_holder(brain, "job")
    assert held is not None and held.holder == "b"
    assert not renew_lease(brain, "job", "a", ttl_s=30, now=T0 + 31)


def test_only_the_holder_renews(brain: mc.Brain) -> None:
    assert acquire_lease(brain, "job", "a", ttl_s=30, now=T0)
    assert not renew_lease(brain, "job", "b", ttl_s=30, now=T0 + 10)
    assert renew_lease(brain, "job", "a", ttl_s=30, now=T0 + 10)
    held = lease_holder(brain, "job")
    assert held is not None and (held.holder, held.expires_at) == ("a", T0 + 40)
    assert not acquire_lease(brain, "job", "b", ttl_s=30, now=T0 + 35)
    assert not renew_lease(brain, "other-name", "a", ttl_s=30, now=T0 + 10)


def test_release_frees_it_only_for_the_holder(brain: mc.Brain) -> None:
    assert acquire_lease(brain, "job", "a", ttl_s=30, now=T0)
    assert not release_lease(brain, "job", "b")
    assert lease_holder(brain, "job") is not None
    assert release_lease(brain, "job", "a")
    assert lease_holder(brain, "job") is None
    assert acquire_lease(brain, "job", "b", ttl_s=30, now=T0 + 1)


def test_leases_of_different_names_are_independent(brain: mc.Brain) -> None:
    assert acquire_lease(brain, "scheduler", "a", ttl_s=30, now=T0)
    assert acquire_lease(brain, "dream", "b", ttl_s=30, now=T0)


RACER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import memory_core as mc
    from memory_core.brain.leases import acquire_lease

    url, me, folder, names = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
    brain = mc.open_brain(mc.load_settings(), url=url)
    with brain.read() as conn:  # connected before the start line, not after
        conn.exec_driver_sql("SELECT 1").all()
    (folder / f"ready-{me}").touch()
    while not (folder / "go").exists():
        time.sleep(0.001)
    won = [str(n) for n in range(names) if acquire_lease(brain, f"race-{n}", me, ttl_s=60)]
    print(" ".join(won))
    """
)


@pytest.mark.slow
def test_processes_racing_for_leases_have_exactly_one_winner_each(
    brain: mc.Brain, brain_url: str, tmp_path: Path
) -> None:
    """Six processes released at once race for twenty leases, in the same order."""
    racers, names = 6, 20
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, brain_url, f"p{i}", str(tmp_path), str(names)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(racers)
    ]
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("ready-*"))) < racers:
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        assert time.monotonic() < deadline, "racers did not get ready"
        time.sleep(0.05)
    (tmp_path / "go").touch()
    results = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in results]
    won = {f"p{i}": out.split() for i, (out, _) in enumerate(results)}
    for n in range(names):
        winners = [me for me, mine in won.items() if str(n) in mine]
        assert len(winners) == 1, (n, won)
        held = lease_holder(brain, f"race-{n}")
        assert held is not None and held.holder == winners[0]
