"""REVERIE_METRICS_ENABLED=false: no process feeds or serves metrics."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client import REGISTRY

import memory_core as mc
from reverie.compose import app as api_app
from reverie.compose import embedded, process, scheduler_metrics
from reverie.observability.metrics import metrics_for
from reverie.observability.workers import Exporter
from reverie.scheduler import build_scheduler
from reverie.workers.broker import build_broker
from tests.conftest import LOCAL

FED = (
    ("reverie_turns_ingested_total", {}),
    ("reverie_embeddings_computed_total", {}),
    ("reverie_search_duration_seconds_count", {"mode": "fts"}),
    ("reverie_http_requests_total", {"route": "/v1/turns", "method": "POST", "status": "202"}),
    ("reverie_dream_passes_total", {"status": "ok"}),
)


def fed_values() -> list[float]:
    return [REGISTRY.get_sample_value(name, labels) or 0.0 for name, labels in FED]


def off_settings(tmp_path: Path, **overrides: object) -> mc.Settings:
    return mc.load_settings(
        brain_url=f"sqlite:///{tmp_path / 'brain.sqlite'}",
        data_dir=tmp_path / "data",
        embedder="stub",
        metrics_enabled=False,
        **overrides,
    )


def test_metrics_are_on_by_default() -> None:
    assert mc.load_settings().metrics_enabled is True


def test_metrics_can_be_switched_off_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REVERIE_METRICS_ENABLED", "false")
    assert mc.load_settings().metrics_enabled is False


def test_with_metrics_off_the_api_serves_none_and_nothing_is_counted(tmp_path: Path) -> None:
    settings = off_settings(tmp_path)
    workers = embedded(settings, threads=2)
    try:
        assert not [m for m in workers.broker.middleware if isinstance(m, Exporter)]
        before = fed_values()
        with TestClient(api_app(workers), base_url=LOCAL) as client:
            for i in range(3):
                r = client.post(
                    "/v1/turns",
                    json={
                        "user": f"I drink green tea {i}",
                        "assistant": "Ok.",
                        "scope": "user",
                        "scope_id": "u",
                    },
                )
                assert r.status_code == 202, r.text
            workers.join()
            assert client.get("/v1/search", params={"q": "green tea"}).json()["results"]
            workers.actors.dream.send("manual")
            workers.join()
            r = client.get("/metrics")
            assert r.status_code == 501
            assert r.json()["error"]["code"] == "not_enabled"
        assert fed_values() == before
    finally:
        workers.stop()


@pytest.mark.redis
def test_with_metrics_off_a_worker_process_broker_has_no_exporter(
    tmp_path: Path, redis_url: str
) -> None:
    broker = build_broker(off_settings(tmp_path, redis_url=redis_url), worker_process=True)
    try:
        assert not [m for m in broker.middleware if isinstance(m, Exporter)]
    finally:
        broker.close()


def test_with_metrics_off_the_scheduler_serves_and_counts_nothing(tmp_path: Path) -> None:
    settings = off_settings(tmp_path)
    assert scheduler_metrics(settings, metrics_for(settings)) is None
    workers = process(settings, run_workers=False)
    try:
        scheduler = build_scheduler(workers.runtime, background=True, metrics=workers.metrics)
        assert scheduler.stats.metrics is None
    finally:
        workers.stop()
