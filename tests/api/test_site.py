"""No cross-site requests: what a web page sends to the open API is refused and changes
nothing, over real HTTP; agents and the API's own pages are served."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

import memory_core as mc
from memory_core import auth
from reverie.compose import Process, embedded
from reverie.compose import app as api_app
from tests.api.conftest import serving

MEMORY = {"content": "The spare key is under the blue pot.", "scope": "user", "scope_id": "ana"}


@pytest.fixture
def open_api(api_settings: mc.Settings, workers: Process) -> Iterator[str]:
    with serving(api_app(workers)) as url:
        yield url


def _port(url: str) -> str:
    return url.rsplit(":", 1)[1]


@pytest.mark.parametrize("route", ["/v1/memories", "/v1/tokens"])
def test_a_rebound_host_is_refused_and_changes_nothing(
    open_api: str, api_settings: mc.Settings, digest: Callable[[mc.Brain], str], route: str
) -> None:
    brain = mc.open_brain(api_settings)
    before = digest(brain)
    body = MEMORY if route == "/v1/memories" else {"name": "x", "capabilities": ["admin"]}
    for host in (f"evil.example:{_port(open_api)}", "evil.example", "127.0.0.1.evil.example"):
        r = httpx.post(open_api + route, json=body, headers={"host": host}, timeout=10)
        assert r.status_code == 421, (host, r.text)
        assert r.json()["error"]["code"] == "misdirected"
        assert "secret" not in r.text
    assert digest(brain) == before


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "http://localhost:3000", "null", "http://127.0.0.1"]
)
def test_a_foreign_origin_is_refused_and_changes_nothing(
    open_api: str, api_settings: mc.Settings, digest: Callable[[mc.Brain], str], origin: str
) -> None:
    brain = mc.open_brain(api_settings)
    before = digest(brain)
    with httpx.Client(base_url=open_api, timeout=10) as http:
        r = http.post("/v1/memories", json=MEMORY, headers={"origin": origin})
        assert r.status_code == 403 and r.json()["error"]["code"] == "cross_site"
        preflight = http.options(
            "/v1/memories",
            headers={"origin": origin, "access-control-request-method": "POST"},
        )
        assert preflight.status_code == 403
        assert "access-control-allow-origin" not in preflight.headers
    assert digest(brain) == before


def test_the_console_is_under_the_same_host_and_origin_checks(open_api: str) -> None:
    with httpx.Client(base_url=open_api, timeout=10) as http:
        page = http.get("/console")
        assert page.status_code == 200 and "console.js" in page.text
        csp = page.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "connect-src 'self'" in csp
        assert "frame-ancestors 'none'" in csp
        for path in ("/console", "/console/assets/console.js"):
            rebound = http.get(path, headers={"host": "evil.example"})
            assert rebound.status_code == 421, path
            framed = http.get(path, headers={"origin": "http://evil.example"})
            assert framed.status_code == 403, path
        # The page's own calls carry its origin and are served.
        me = http.get("/v1/me", headers={"origin": open_api})
        assert me.status_code == 200 and me.json()["name"] == "open"


def test_agents_and_the_apis_own_pages_are_served(open_api: str) -> None:
    with httpx.Client(base_url=open_api, timeout=10) as http:
        assert http.post("/v1/memories", json=MEMORY).status_code == 201
        assert (
            http.post(
                "/v1/memories", json={**MEMORY, "content": "x"}, headers={"origin": open_api}
            ).status_code
            == 201
        )
        local = open_api.replace("127.0.0.1", "localhost")
        assert (
            httpx.get(
                local + "/v1/search", params={"q": "key"}, headers={"host": local[7:]}
            ).status_code
            == 200
        )


def test_a_listed_origin_gets_cors_and_others_do_not(tmp_path: Path) -> None:
    settings = mc.load_settings(
        brain_url=f"sqlite:///{tmp_path / 'brain.sqlite'}",
        data_dir=tmp_path,
        embedder="stub",
        api_cors_origins=["https://app.example"],
    )
    workers = embedded(settings, threads=1)
    try:
        with serving(api_app(workers)) as url, httpx.Client(base_url=url) as http:
            preflight = http.options(
                "/v1/memories",
                headers={
                    "origin": "https://app.example",
                    "access-control-request-method": "POST",
                    "access-control-request-headers": "content-type",
                },
            )
            assert preflight.status_code == 200
            assert preflight.headers["access-control-allow-origin"] == "https://app.example"
            r = http.post("/v1/memories", json=MEMORY, headers={"origin": "https://app.example"})
            assert r.status_code == 201
            assert r.headers["access-control-allow-origin"] == "https://app.example"
            other = http.post("/v1/memories", json=MEMORY, headers={"origin": "https://b.example"})
            assert other.status_code == 403
    finally:
        workers.stop()


def test_with_a_token_a_proxied_host_is_served(api_settings: mc.Settings, workers: Process) -> None:
    brain = mc.open_brain(api_settings)
    _, secret = auth.create_token(brain, "proxy", capabilities=["read", "write"])
    with serving(api_app(workers)) as url:
        r = httpx.post(
            url + "/v1/memories",
            json=MEMORY,
            headers={"host": "memory.example", "authorization": f"Bearer {secret}"},
            timeout=10,
        )
        assert r.status_code == 201
        # Without the token the same request is a page's, refused before auth is asked.
        bare = httpx.post(url + "/v1/memories", json=MEMORY, headers={"host": "memory.example"})
        assert bare.status_code == 421
