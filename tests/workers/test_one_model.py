"""An embedded process holds one embedding model: the jobs that embed traces and the
searches that embed queries share it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import memory_core as mc
from reverie.compose import app as api_app
from reverie.compose import embedded
from tests.conftest import LOCAL


def test_an_embedded_process_loads_the_model_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import onnxruntime

    sessions: list[Any] = []
    real = onnxruntime.InferenceSession

    def counted(*args: Any, **kwargs: Any) -> Any:
        sessions.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", counted)
    settings = mc.load_settings(
        brain_url=f"sqlite:///{tmp_path / 'brain.sqlite'}", data_dir=tmp_path, embedder="minilm"
    )
    workers = embedded(settings, threads=2)
    try:
        with TestClient(api_app(workers), base_url=LOCAL) as client:
            turn = {"user": "I grow tomatoes on the balcony.", "assistant": "Nice!"}
            posted = client.post("/v1/turns", json={**turn, "scope": "user", "scope_id": "ana"})
            assert posted.status_code == 202
            workers.join()  # ingested and embedded
            found = client.get("/v1/search", params={"q": "vegetables at home"}).json()
            assert "vector" in found["channels"] and found["results"]
            tool = client.post(
                "/v1/tools/memory_search",
                json={"query": "what does Ana grow"},
                headers={"x-reverie-user": "ana"},
            )
            assert tool.status_code == 200 and tool.json()["results"]
    finally:
        workers.stop()
    assert len(sessions) == 1


def test_the_embedded_broker_keeps_a_bounded_number_of_dead_letters(tmp_path: Path) -> None:
    import dramatiq
    from dramatiq.broker import MessageProxy

    from reverie.workers.broker import DEAD_LETTERS, EmbeddedBroker, build_broker

    settings = mc.load_settings(brain_url=f"sqlite:///{tmp_path / 'brain.sqlite'}")
    broker = build_broker(settings)
    assert isinstance(broker, EmbeddedBroker)
    for k in range(DEAD_LETTERS + 50):
        broker.enqueue(dramatiq.Message("ingest", "ingest", (k,), {}, {}))
        consumer = broker.consume("ingest")
        delivered = next(iter(consumer))
        assert isinstance(delivered, MessageProxy)
        consumer.nack(delivered)  # failed for good: a dead letter
    kept = broker.dead_letters
    assert len(kept) == DEAD_LETTERS
    assert kept[-1].args == (DEAD_LETTERS + 49,)  # the newest kept, the oldest dropped
