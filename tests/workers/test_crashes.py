"""Nothing lost: worker processes killed with -9, Redis flushed mid-run, the brain's
connection killed while a worker boots.

Real worker processes (the dramatiq CLI, as memctl worker starts it) on a real Redis,
a real brain (a SQLite file, and a PostgreSQL database).  After each disaster every
turn is ingested exactly once: one episode per turn, no duplicate fact, every inbox
row done.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import redis
from sqlalchemy import text

import memory_core as mc
from memory_core import inbox, jobs
from memory_core.auth import SYSTEM
from memory_core.brain.postgresql import PG_WRITE_LOCK_KEY
from reverie.compose import WORKER_BROKER, Process, process

pytestmark = pytest.mark.slow

USERS = [
    "I love hiking.",
    "My dog is called Rex.",
    "I want to learn Rust this year.",
    "Actually, I meant Porto, not Lisbon.",
    "Yesterday I visited the museum.",
]


@pytest.fixture
def env(brain_url: str, redis_url: str) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")},
        "REVERIE_BRAIN_URL": brain_url,
        "REVERIE_REDIS_URL": redis_url,
        "REVERIE_EMBEDDER": "stub",
        "REVERIE_REDIS_HEARTBEAT_TIMEOUT_MS": "2000",
        "REVERIE_REDIS_MAINTENANCE_CHANCE": "1000000",
        "REVERIE_INGEST_BATCH": "16",
    }


class WorkerGroup:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, log: Path | None = None) -> subprocess.Popen[bytes]:
        """A worker group of one process (its output in ``log``, when given)."""
        output = log.open("wb") if log is not None else subprocess.DEVNULL
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dramatiq",
                WORKER_BROKER,
                "--processes",
                "1",
                "--threads",
                "2",
                "--queues",
                "ingest",
                "embed",
                "maintenance",
            ],
            env=self.env,
            start_new_session=True,
            stdout=output,
            stderr=output,
        )
        if log is not None:
            output.close()  # type: ignore[union-attr]
        self.procs.append(proc)
        return proc

    def kill9(self, proc: subprocess.Popen[bytes]) -> None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


@pytest.fixture
def group(env: dict[str, str]) -> Iterator[WorkerGroup]:
    g = WorkerGroup(env)
    yield g
    g.stop_all()


@pytest.fixture
def sender(env: dict[str, str]) -> Iterator[tuple[mc.Settings, mc.Brain, Process]]:
    settings = mc.load_settings(
        brain_url=env["REVERIE_BRAIN_URL"], redis_url=env["REVERIE_REDIS_URL"], embedder="stub"
    )
    brain = mc.open_brain(settings)
    workers = process(settings, run_workers=False)
    yield settings, brain, workers
    workers.broker.close()


def post_turns(brain: mc.Brain, workers: Process, n: int) -> list[str]:
    ids = []
    for i in range(n):
        turn = inbox.Turn(f"{USERS[i % len(USERS)]} (turn {i})", "Noted.", "user", f"u{i % 7}")
        turn_id = inbox.accept_turn(brain, turn, identity=SYSTEM).turn_id
        workers.actors.ingest_turn.send(turn_id)
        ids.append(turn_id)
    return ids


def done_count(brain: mc.Brain) -> int:
    with brain.read() as conn:
        return int(
            conn.execute(
                text("SELECT count(*) FROM inbox_turns WHERE status = 'done'")
            ).scalar_one()
        )


def wait_for(predicate: object, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def assert_exactly_once(brain: mc.Brain, n: int) -> None:
    with brain.read() as conn:
        q = lambda sql: conn.execute(text(sql)).scalar_one()  # noqa: E731
        assert q("SELECT count(*) FROM inbox_turns WHERE status = 'done'") == n
        assert q("SELECT count(*) FROM memory_traces WHERE tags = '[\"turn\"]'") == n
        assert (
            q(
                "SELECT count(DISTINCT json_extract(metadata, '$.turn_id')) FROM memory_traces "
                "WHERE tags = '[\"turn\"]'"
            )
            == n
        )
        assert (
            q(
                "SELECT count(*) FROM (SELECT content_hash, scope, scope_id FROM memory_traces "
                "WHERE tags LIKE '%auto_ingest%' GROUP BY 1, 2, 3 HAVING count(*) > 1) AS copies"
            )
            == 0
        )


def test_a_worker_killed_with_sigkill_mid_run_loses_and_duplicates_nothing(
    group: WorkerGroup, sender: tuple[mc.Settings, mc.Brain, Process]
) -> None:
    _, brain, workers = sender
    ids = post_turns(brain, workers, 5000)  # a backlog first, so the kill lands mid-run
    victim = group.start()
    group.start()
    wait_for(lambda: done_count(brain) >= 500, 120)
    group.kill9(victim)
    assert done_count(brain) < len(ids), "the kill came too late to mean anything"
    group.start()
    wait_for(lambda: done_count(brain) == len(ids), 300)
    assert_exactly_once(brain, len(ids))


def test_flushing_redis_mid_run_then_reconcile_ingests_every_turn_once(
    group: WorkerGroup, sender: tuple[mc.Settings, mc.Brain, Process], redis_url: str
) -> None:
    settings, brain, workers = sender
    # One turn per job, and a backlog before the worker starts, so that the
    # flush surely drops queued messages (no job takes other turns along).
    group.env["REVERIE_INGEST_BATCH"] = "0"
    ids = post_turns(brain, workers, 2000)
    group.start()
    wait_for(lambda: done_count(brain) >= 200, 120)
    redis.Redis.from_url(redis_url).flushdb()
    time.sleep(1.0)
    lost = len(ids) - done_count(brain)
    assert lost > 0, "the flush came too late to lose anything"
    plan = jobs.plan(brain, settings, None, older_than=0.0)
    for turn_id in plan.turn_ids:
        workers.actors.ingest_turn.send(turn_id)
    wait_for(lambda: done_count(brain) == len(ids), 300)
    assert_exactly_once(brain, len(ids))


def _waiting_at_boot(conn: psycopg.Connection[Any]) -> list[int]:
    """Worker backends waiting for the brain's write lock (a worker's migration check)."""
    rows = conn.execute(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
        "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND wait_event = 'advisory'"
    ).fetchall()
    return [int(r[0]) for r in rows]


@pytest.mark.parametrize("brain_url", ["postgresql"], indirect=True)
def test_a_brain_connection_killed_while_a_worker_boots_is_waited_out_and_every_turn_ingested(
    group: WorkerGroup,
    sender: tuple[mc.Settings, mc.Brain, Process],
    brain_url: str,
    tmp_path: Path,
) -> None:
    _, brain, workers = sender
    ids = post_turns(brain, workers, 300)  # pending, their messages queued
    libpq = brain_url.replace("postgresql+psycopg://", "postgresql://")
    log = tmp_path / "worker.log"
    # The test holds the brain's write lock, so the worker's boot (its migration check
    # takes that lock first) waits where the test can see it, and kill its connection.
    with psycopg.connect(libpq, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (PG_WRITE_LOCK_KEY,))
        proc = group.start(log)
        wait_for(lambda: _waiting_at_boot(holder), 120)
        for pid in _waiting_at_boot(holder):
            holder.execute("SELECT pg_terminate_backend(%s)", (pid,))
        holder.execute("SELECT pg_advisory_unlock(%s)", (PG_WRITE_LOCK_KEY,))
    wait_for(lambda: "trying again" in log.read_text() or proc.poll() is not None, 60)
    assert proc.poll() is None, log.read_text()[-3000:]
    wait_for(lambda: proc.poll() is None and done_count(brain) == len(ids), 300)
    assert proc.poll() is None, "the group went down"
    assert_exactly_once(brain, len(ids))
