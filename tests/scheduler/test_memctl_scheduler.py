"""``memctl scheduler`` as an operator runs it: a real process on a real Redis."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import memory_core as mc
from memory_core.brain.leases import lease_holder
from reverie import compose


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_memctl_scheduler_runs_until_a_signal_and_gives_the_brain_back(
    brain: mc.Brain, brain_url: str, redis_url: str, stop: signal.Signals
) -> None:
    import redis

    env = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")}
    env |= {
        "REVERIE_BRAIN_URL": brain_url,
        "REVERIE_REDIS_URL": redis_url,
        "REVERIE_LOG_LEVEL": "INFO",
    }
    cmd = [sys.executable, "-m", "memctl", "scheduler"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while lease_holder(brain, "scheduler") is None:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "memctl scheduler never took the lease"
            time.sleep(0.1)

        second = subprocess.run(
            cmd, check=False, env=env, capture_output=True, text=True, timeout=60
        )
        assert second.returncode == 5, second.stderr
        lines = second.stderr.strip().splitlines()
        assert lines[-1].startswith("memctl: error: another scheduler")
        assert "Traceback" not in second.stderr

        client = redis.Redis.from_url(redis_url)
        # The start-up reconcile sweep reached the workers' queue.
        deadline = time.monotonic() + 30
        while not client.hlen("dramatiq:maintenance.msgs"):
            assert time.monotonic() < deadline, "no reconcile message in Redis"
            time.sleep(0.1)
        message = json.loads(next(iter(client.hvals("dramatiq:maintenance.msgs"))))
        assert message["actor_name"] == "reconcile"
    finally:
        proc.send_signal(stop)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    assert f"{stop.name} received" in stderr
    assert lease_holder(brain, "scheduler") is None


def test_the_scheduler_process_needs_redis(settings: mc.Settings) -> None:
    with pytest.raises(mc.ConfigError, match="REVERIE_REDIS_URL"):
        compose.scheduler(settings)
