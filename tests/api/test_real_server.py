"""The API under a real uvicorn server, over real HTTP on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

import memory_core as mc
from reverie.compose import Process
from reverie.compose import app as api_app
from tests.api.conftest import serving


@pytest.fixture
def base_url(api_settings: mc.Settings, workers: Process) -> Iterator[str]:
    with serving(api_app(workers)) as url:
        yield url


def test_turn_posted_over_http_is_ingested_and_found(base_url: str, workers: Process) -> None:
    with httpx.Client(base_url=base_url, timeout=10) as http:
        r = http.post(
            "/v1/turns",
            json={
                "user": "My sister lives in Porto.",
                "assistant": "Nice.",
                "scope": "user",
                "scope_id": "alice",
            },
        )
        assert r.status_code == 202
        turn_id = r.json()["turn_id"]
        workers.join()
        assert http.get(f"/v1/turns/{turn_id}").json()["status"] == "done"
        hits = http.get("/v1/search", params={"q": "Porto", "scope_id": "alice"}).json()
        assert hits["results"] and "Porto" in hits["results"][0]["content"]
        assert http.get("/readyz").status_code == 200


def test_oversized_and_malformed_bodies_over_http(base_url: str) -> None:
    with httpx.Client(base_url=base_url, timeout=10) as http:
        r = http.post(
            "/v1/turns",
            content=b"{" + b" " * (70 * 1024) + b"}",
            headers={"content-type": "application/json"},
        )
        assert r.status_code == 413
        r = http.post(
            "/v1/turns", content=b"not json", headers={"content-type": "application/json"}
        )
        assert r.status_code == 422
