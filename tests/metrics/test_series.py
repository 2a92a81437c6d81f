"""Series that exist before anything happens, queue depths, the brain's last passes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client import REGISTRY, CollectorRegistry, multiprocess
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text

import memory_core as mc
from memory_core.jobs import QUEUES
from reverie.compose import Process, process
from reverie.observability.brain import BrainCollector
from reverie.observability.metrics import (
    DREAM_ACTIONS,
    DREAM_OUTCOMES,
    DREAM_STEPS,
    SCHEDULER_OUTCOMES,
    SEARCH_MODES,
    Metrics,
)
from reverie.observability.queues import QueueDepth
from reverie.scheduler import build_scheduler
from reverie.scheduler.jobs import DREAM_CRON, DREAM_DUE, LEASE, RECONCILE

DRAMATIQ_COUNTERS = (
    "dramatiq_messages_total",
    "dramatiq_message_errors_total",
    "dramatiq_message_retries_total",
    "dramatiq_message_rejects_total",
    "dramatiq_messages_inprogress",
    "dramatiq_message_duration_milliseconds_count",
)


def sample_table(exposition: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for f in text_string_to_metric_families(exposition)
        for s in f.samples
    }


def actor_queues(workers: Process) -> set[tuple[str, str]]:
    broker = workers.broker
    return {(broker.get_actor(name).queue_name, name) for name in broker.get_declared_actors()}


def test_a_fresh_api_exposes_every_actors_error_and_retry_series_at_zero(
    client: TestClient, workers: Process
) -> None:
    table = sample_table(client.get("/metrics").text)
    expected = actor_queues(workers)
    assert len(expected) >= 6
    for name in DRAMATIQ_COUNTERS:
        for queue, actor in expected:
            key = (name, frozenset({("queue_name", queue), ("actor_name", actor)}))
            assert table.get(key) == 0, f"{name} {queue}/{actor}"


def test_fresh_metrics_have_every_search_mode_dream_step_and_action_at_zero() -> None:
    registry = CollectorRegistry()
    Metrics(registry)
    table = {
        (s.name, frozenset(s.labels.items())): s.value
        for f in registry.collect()
        for s in f.samples
    }
    for mode in SEARCH_MODES:
        assert table[("reverie_search_duration_seconds_count", frozenset({("mode", mode)}))] == 0
    for step in DREAM_STEPS:
        assert (
            table[("reverie_dream_step_duration_seconds_count", frozenset({("step", step)}))] == 0
        )
    for step, action in DREAM_ACTIONS:
        key = ("reverie_dream_items_total", frozenset({("step", step), ("action", action)}))
        assert table[key] == 0


def test_a_built_scheduler_exposes_every_job_and_outcome_at_zero(
    api_settings: mc.Settings, workers: Process
) -> None:
    build_scheduler(workers.runtime, background=True, metrics=workers.metrics)
    table = {
        (s.name, frozenset(s.labels.items())): s.value
        for f in REGISTRY.collect()
        for s in f.samples
    }
    for job in (DREAM_CRON, DREAM_DUE, RECONCILE, LEASE):
        for outcome in SCHEDULER_OUTCOMES:
            key = (
                "reverie_scheduler_job_runs_total",
                frozenset({("job", job), ("outcome", outcome)}),
            )
            assert key in table, key
        assert ("reverie_scheduler_messages_sent_total", frozenset({("job", job)})) in table


WORKER_BOOT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import memory_core as mc
    from memory_core.runtime import Runtime
    from reverie.observability.workers import Exporter
    from reverie.workers.actors import declare
    from dramatiq.brokers.stub import StubBroker

    directory = Path(sys.argv[1])
    settings = mc.load_settings(
        brain_url="sqlite:///" + sys.argv[2], metrics_multiproc_dir=directory
    )
    broker = StubBroker()
    broker.add_middleware(Exporter(settings, directory))
    declare(broker, Runtime.open(settings), None)  # declared before the CLI boots the process
    broker.emit_after("process_boot")
    """
)


def test_a_booted_worker_process_exposes_every_actors_and_reverie_series_at_zero(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "prom"
    subprocess.run(
        [sys.executable, "-c", WORKER_BOOT, str(directory), str(tmp_path / "b.sqlite")],
        check=True,
        timeout=60,
    )
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=str(directory))
    table = {
        (s.name, frozenset(s.labels.items())): s.value
        for f in registry.collect()
        for s in f.samples
    }
    errors = {dict(ls)["actor_name"] for n, ls in table if n == "dramatiq_message_errors_total"}
    assert {"ingest_batch", "embed_traces", "dream", "reconcile"} <= errors
    assert all(v == 0 for (n, _), v in table.items() if n == "dramatiq_message_errors_total")
    # Reverie's own families are there from boot, before the process's first job.
    assert table[("reverie_turns_ingested_total", frozenset())] == 0
    assert ("reverie_ingest_lag_seconds_count", frozenset()) in table


def depths(broker_workers: Process) -> dict[str, float]:
    [family] = QueueDepth(broker_workers.runtime.jobs).collect()
    return {s.labels["queue"]: s.value for s in family.samples}


def test_queue_depth_counts_the_messages_each_in_process_queue_holds(
    api_settings: mc.Settings,
) -> None:
    workers = process(api_settings, run_workers=False)  # no worker threads: messages stay queued
    try:
        assert depths(workers) == dict.fromkeys(QUEUES, 0)
        workers.actors.embed_traces.send(["mt_1"])
        workers.actors.embed_traces.send(["mt_2"])
        workers.actors.reconcile.send()
        assert depths(workers) == {"ingest": 0, "embed": 2, "maintenance": 1}
    finally:
        workers.stop()


@pytest.mark.redis
def test_queue_depth_counts_the_messages_each_redis_queue_holds(
    api_settings: mc.Settings, redis_url: str
) -> None:
    workers = process(api_settings.model_copy(update={"redis_url": redis_url}), run_workers=False)
    try:
        workers.actors.ingest_batch.send(["turn_1"])
        assert depths(workers) == {"ingest": 1, "embed": 0, "maintenance": 0}
    finally:
        workers.broker.close()


def test_queue_depth_is_left_out_while_redis_is_unreachable(api_settings: mc.Settings) -> None:
    workers = process(
        api_settings.model_copy(update={"redis_url": "redis://127.0.0.1:1/0"}), run_workers=False
    )
    try:
        assert list(QueueDepth(workers.runtime.jobs).collect()) == []
    finally:
        workers.broker.close()


def add_pass(brain: mc.Brain, status: str, finished_at: float | None, dry_run: int = 0) -> None:
    with brain.transaction() as conn:
        conn.execute(
            text(
                "INSERT INTO consolidation_log (id, started_at, finished_at, status, dry_run) "
                "VALUES (:id, :started, :finished, :status, :dry_run)"
            ),
            {
                "id": f"dp_{uuid.uuid4().hex}",
                "started": (finished_at or time.time()) - 5,
                "finished": finished_at,
                "status": status,
                "dry_run": dry_run,
            },
        )


def last_passes(brain: mc.Brain) -> dict[str, float]:
    collector = BrainCollector(brain, lambda: None, ttl_s=0)
    [family] = [f for f in collector.collect() if f.name.startswith("reverie_dream_last_")]
    return {s.labels["status"]: s.value for s in family.samples}


def test_the_brain_reports_when_its_last_pass_of_each_outcome_finished(brain: mc.Brain) -> None:
    assert last_passes(brain) == dict.fromkeys(DREAM_OUTCOMES, 0.0)
    add_pass(brain, "ok", 1_000.0)
    add_pass(brain, "ok", 3_000.0)
    add_pass(brain, "failed", 2_000.0)
    add_pass(brain, "ok", 9_000.0, dry_run=1)  # a dry run changes nothing
    add_pass(brain, "running", None)  # not finished
    assert last_passes(brain) == {"ok": 3_000.0, "failed": 2_000.0, "interrupted": 0.0}
