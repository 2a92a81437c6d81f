"""dramatiq's Prometheus middleware as Reverie configures it (no server is started)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, multiprocess

import memory_core as mc
from reverie.compose import process
from reverie.observability.workers import Exporter, multiprocess_dir, serve_worker_metrics
from reverie.workers.broker import build_broker


def test_the_worker_exporter_binds_loopback_by_default(tmp_path: Path) -> None:
    settings = mc.load_settings(brain_url=f"sqlite:///{tmp_path / 'b.sqlite'}")
    exporter = Exporter(settings, multiprocess_dir(settings))
    assert (exporter.host, exporter.port) == ("127.0.0.1", 9191)
    assert exporter.forks == [serve_worker_metrics]
    assert multiprocess_dir(settings).name == "reverie-metrics-9191"


def test_the_worker_exporter_takes_host_and_port_from_settings(tmp_path: Path) -> None:
    settings = mc.load_settings(
        brain_url=f"sqlite:///{tmp_path / 'b.sqlite'}",
        metrics_host="10.0.0.5",
        metrics_port=9300,
        metrics_multiproc_dir=tmp_path / "prom",
    )
    exporter = Exporter(settings, multiprocess_dir(settings))
    assert (exporter.host, exporter.port) == ("10.0.0.5", 9300)
    assert exporter.multiprocess_dir == tmp_path / "prom"


def test_an_embedded_broker_carries_the_middleware_without_a_server(tmp_path: Path) -> None:
    settings = mc.load_settings(brain_url=f"sqlite:///{tmp_path / 'b.sqlite'}")
    workers = process(settings, run_workers=False)
    try:
        [exporter] = [m for m in workers.broker.middleware if isinstance(m, Exporter)]
        assert exporter.forks == []  # the API's /metrics serves it
        names = {m.name for m in exporter.registry.collect()}
        assert "dramatiq_messages" in names
    finally:
        workers.stop()


@pytest.mark.redis
def test_a_worker_process_broker_carries_the_exporter(tmp_path: Path, redis_url: str) -> None:
    settings = mc.load_settings(brain_url=f"sqlite:///{tmp_path / 'b.sqlite'}", redis_url=redis_url)
    broker = build_broker(settings, worker_process=True)
    try:
        [exporter] = [m for m in broker.middleware if isinstance(m, Exporter)]
        assert exporter.host == "127.0.0.1"
        assert exporter.forks == [serve_worker_metrics]
    finally:
        broker.close()


WORKER_RUN = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from dramatiq.brokers.stub import StubBroker
    import memory_core as mc
    from reverie.observability.metrics import get_metrics
    from reverie.observability.workers import Exporter

    directory = Path(sys.argv[1])
    settings = mc.load_settings(
        brain_url="sqlite:///" + sys.argv[2], metrics_multiproc_dir=directory
    )
    exporter = Exporter(settings, directory)
    exporter.after_process_boot(StubBroker())  # what the dramatiq CLI does in a worker process
    get_metrics().turns_ingested.inc(3)
    exporter.total_messages.labels("ingest", "ingest_batch").inc()
    """
)


def totals(directory: Path) -> dict[str, float]:
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=str(directory))
    return {s.name: s.value for f in registry.collect() for s in f.samples}


def test_worker_processes_share_a_folder_that_earlier_runs_do_not_add_to(tmp_path: Path) -> None:
    directory = tmp_path / "prom"
    brain = tmp_path / "b.sqlite"
    for run in range(2):
        subprocess.run(
            [sys.executable, "-c", WORKER_RUN, str(directory), str(brain)],
            check=True,
            timeout=60,
        )
        seen = totals(directory)
        # Each run's process removed the files of the (dead) process before it.
        assert seen["reverie_turns_ingested_total"] == 3, run
        assert seen["dramatiq_messages_total"] == 1, run
