"""An embedded API (TestClient) over a real brain file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import memory_core as mc
from reverie.compose import Process, embedded
from reverie.compose import app as api_app
from tests.conftest import LOCAL


@pytest.fixture
def api_settings(tmp_path: Path, brain_url: str) -> mc.Settings:
    return mc.load_settings(
        brain_url=brain_url,
        data_dir=tmp_path / "data",
        embedder="stub",
        metrics_brain_ttl_s=60.0,
    )


@pytest.fixture
def workers(api_settings: mc.Settings) -> Iterator[Process]:
    w = embedded(api_settings, threads=2)
    yield w
    w.stop()


@pytest.fixture
def client(api_settings: mc.Settings, workers: Process) -> Iterator[TestClient]:
    with TestClient(api_app(workers), base_url=LOCAL) as c:
        yield c
