"""No cross-site requests: what a web page sends to the open API is refused and changes
nothing, over real HTTP; agents and the API's own pages are served."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from starlette.routing import BaseRoute, Mount

import memory_core as mc
from memory_core import auth
from reverie.compose import Process, embedded
from reverie.compose import app as api_app
from tests.api.conftest import raw_request, serving

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
        with serving(api_app(workers)) as url, httpx.Client(base_url=url, timeout=60) as http:
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
    _, secret = auth.create_token(
        brain, "proxy", capabilities=["read", "write"], identity=auth.OPEN
    )
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


# -- no token is no token: a blank Authorization never passes the Host check ------------


def _flat(routes: list[BaseRoute]) -> list[BaseRoute]:
    found: list[BaseRoute] = []
    for route in routes:
        included = getattr(route, "original_router", None)  # an included router's routes
        found += _flat(included.routes) if included is not None else [route]
    return found


def _every_route(app: FastAPI) -> list[tuple[str, str]]:
    """(method, a concrete path) for every route the app serves, mounted files too."""
    served = []
    for route in _flat(app.routes):
        path = getattr(route, "path", "")
        if isinstance(route, Mount):
            served.append(("GET", path + ("/console.js" if "console" in path else "/x.js")))
            continue
        concrete = "/".join("x" if p.startswith("{") else p for p in path.split("/"))
        served += [(m, concrete) for m in sorted(getattr(route, "methods", None) or {"GET"})]
    documented = {
        "/".join("x" if p.startswith("{") else p for p in path.split("/"))
        for path in app.openapi()["paths"]
    }
    assert documented <= {p for _, p in served}  # none left out
    assert {"/mcp", "/console", "/console/assets/console.js"} <= {p for _, p in served}
    return served


BLANKS = [b"", b" ", b"\t", b"  \t "]


def _rebound_blank_auth_is_refused_everywhere(app: FastAPI, url: str, brain: mc.Brain) -> None:
    from tests.conftest import brain_digest

    tokens_before = [t.to_dict() for t in auth.list_tokens(brain, identity=auth.OPEN)]
    before = brain_digest(brain)
    routes = _every_route(app)
    for method, path in routes:
        for blank in BLANKS:
            headers = [("Host", b"evil.example:" + _port(url).encode()), ("Authorization", blank)]
            if method in ("POST", "PUT", "PATCH"):
                headers.append(("Content-Type", b"application/json"))
            status, body = raw_request(url, method, path, headers, b"{}")
            assert status == 421, (method, path, blank, status, body[:200])
            assert method == "HEAD" or b"misdirected" in body
    assert brain_digest(brain) == before
    assert [t.to_dict() for t in auth.list_tokens(brain, identity=auth.OPEN)] == tokens_before


def test_a_blank_authorization_on_a_rebound_host_is_refused_on_every_route(
    api_settings: mc.Settings, workers: Process
) -> None:
    app = api_app(workers)
    with serving(app) as url:
        _rebound_blank_auth_is_refused_everywhere(app, url, app.state.brain)
        # The same blank header addressed to this machine is simply no token: open mode.
        status, _ = raw_request(
            url, "GET", "/v1/me", [("Host", b"127.0.0.1"), ("Authorization", b" ")]
        )
        assert status == 200


def test_the_anonymous_grant_answers_only_requests_addressed_to_this_machine(
    api_settings: mc.Settings, workers: Process
) -> None:
    app = api_app(workers)
    with serving(app) as url:
        brain = app.state.brain
        auth.create_token(brain, "root", ["admin"], identity=auth.OPEN)
        auth.grant_anonymous(brain, ["read", "write", "delete", "dream"], identity=auth.OPEN)
        _rebound_blank_auth_is_refused_everywhere(app, url, brain)
        for host in (b"evil.example", b"evil.example:" + _port(url).encode()):
            status, _ = raw_request(url, "GET", "/v1/me", [("Host", host)])
            assert status == 421
        status, body = raw_request(url, "GET", "/v1/me", [("Host", b"localhost")])
        assert status == 200 and b"anonymous" in body


def test_a_token_that_does_not_work_does_not_open_a_rebound_host(
    api_settings: mc.Settings, workers: Process
) -> None:
    app = api_app(workers)
    with serving(app) as url:
        brain = app.state.brain
        _, token = auth.create_token(brain, "gone", ["read"], identity=auth.OPEN)
        auth.revoke_token(brain, "gone", identity=auth.OPEN)
        for value in (f"Bearer {token}", "Bearer rvt_nonsense", "x"):
            status, _ = raw_request(
                url,
                "GET",
                "/openapi.json",
                [("Host", b"evil.example"), ("Authorization", value.encode())],
            )
            assert status == 421, value


@pytest.mark.parametrize(
    "header", ["Authorization", "X-Reverie-User", "X-Reverie-Thread", "Origin", "Host"]
)
def test_a_doubled_header_the_checks_read_is_refused_and_changes_nothing(
    api_settings: mc.Settings, workers: Process, digest: Callable[[mc.Brain], str], header: str
) -> None:
    app = api_app(workers)
    with serving(app) as url:
        brain = app.state.brain
        _, token = auth.create_token(
            brain, "bob-app", ["read", "write"], ["bob"], identity=auth.OPEN
        )
        values = {
            "Authorization": [b"", f"Bearer {token}".encode()],
            "X-Reverie-User": [b"bob", b"alice"],
            "X-Reverie-Thread": [b"t1", b"t2"],
            "Origin": [url.encode(), b"http://evil.example"],
            "Host": [b"127.0.0.1", b"evil.example"],
        }[header]
        before = digest(brain)
        for ordered in (values, values[::-1]):
            headers = [(header, v) for v in ordered]
            if header != "Host":
                headers.insert(0, ("Host", b"127.0.0.1"))
            if header != "Authorization":
                headers.append(("Authorization", f"Bearer {token}".encode()))
            headers.append(("Content-Type", b"application/json"))
            status, body = raw_request(
                url,
                "POST",
                "/v1/memories",
                headers,
                json.dumps(MEMORY | {"scope_id": "bob"}).encode(),
            )
            assert status == 400, (header, ordered, status, body)
            # A doubled Host the HTTP server itself refuses, before the API.
            assert header == "Host" or b"ambiguous_header" in body
        assert digest(brain) == before
