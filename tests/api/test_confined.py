"""An identity confined to scope ids never acts on the whole brain, over HTTP: an admin
token pinned to bob, and the open operator acting for bob, manage no token, run and
undo no pass, read no brain-wide count; and revocation is final."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core import auth
from memory_core.auth import OPEN, SYSTEM
from reverie.compose import Process
from reverie.compose import app as api_app
from tests.api.conftest import serving
from tests.conftest import brain_digest


@dataclass
class Api:
    http: httpx.Client
    brain: mc.Brain
    workers: Process

    def state(self) -> tuple[str, list[dict[str, Any]], int]:
        """What a refusal leaves alone: memories, tokens, and the passes that ran."""
        self.workers.join()
        with self.brain.read() as conn:
            passes = conn.execute(text("SELECT count(*) FROM consolidation_log")).scalar_one()
        tokens = [t.to_dict() for t in auth.list_tokens(self.brain, identity=OPEN)]
        return brain_digest(self.brain), tokens, int(passes)


@pytest.fixture
def api(api_settings: mc.Settings, workers: Process) -> Iterator[Api]:
    app = api_app(workers)
    with serving(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        brain = app.state.brain
        mc.add_trace(brain, "Alice's locker code is 4471.", scope_id="alice", identity=SYSTEM)
        mc.add_trace(brain, "Alice's locker code is 4471.", scope_id="alice", identity=SYSTEM)
        mc.add_trace(brain, "Bob keeps bees.", scope_id="bob", identity=SYSTEM)
        yield Api(http, brain, workers)


BRAIN_WIDE: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", "/v1/tokens", None),
    ("POST", "/v1/tokens", {"name": "root2", "can": ["admin"]}),
    ("POST", "/v1/tokens", {"name": "bob2", "can": ["read"], "scope_ids": ["bob"]}),
    ("POST", "/v1/tokens/alice-app/reset", None),
    ("POST", "/v1/tokens/alice-app/revoke", None),
    ("POST", "/v1/tools/memory_reflect", {}),
    ("GET", "/v1/dreams", None),
    ("POST", "/v1/dreams/dream_x/undo", None),
    ("GET", "/metrics", None),
]


def _each_refused(api: Api, headers: dict[str, str]) -> None:
    before = api.state()
    for method, path, body in BRAIN_WIDE:
        r = api.http.request(method, path, json=body, headers=headers)
        assert r.status_code == 403, (method, path, r.status_code, r.text)
        assert r.json()["error"]["code"] == "forbidden"
        assert "whole brain" in r.json()["error"]["message"], (path, r.text)
    assert api.state() == before


def test_an_admin_token_pinned_to_bob_acts_on_nothing_brain_wide(api: Api) -> None:
    _, alices = auth.create_token(api.brain, "alice-app", ["read"], ["alice"], identity=OPEN)
    auth.create_token(api.brain, "root", ["admin"], identity=OPEN)
    _, bobs = auth.create_token(api.brain, "bob-admin", ["admin"], ["bob"], identity=OPEN)
    bearer = {"Authorization": f"Bearer {bobs}"}
    _each_refused(api, bearer)
    assert api.http.get("/v1/me", headers={"Authorization": f"Bearer {alices}"}).status_code == 200
    # Within its scope id it still administers what is bob's.
    assert api.http.get("/v1/memories", headers=bearer).json()["memories"][0]["scope_id"] == "bob"


def test_the_open_operator_acting_for_bob_acts_on_nothing_brain_wide(api: Api) -> None:
    auth.create_token(api.brain, "alice-app", ["read"], ["alice"], identity=OPEN)
    auth.revoke_token(api.brain, "alice-app", identity=OPEN)  # open mode: no working token
    for scope in ("User", "Thread", "Persona", "Organization"):
        _each_refused(api, {f"X-Reverie-{scope}": "bob"})
    # No token was made: every local client still gets the open API.
    assert api.http.get("/v1/search", params={"q": "bees"}).status_code == 200


def test_the_open_operator_makes_the_first_token(api: Api) -> None:
    made = api.http.post("/v1/tokens", json={"name": "root", "can": ["admin"]})
    assert made.status_code == 201
    assert api.http.get("/v1/search", params={"q": "bees"}).status_code == 401


@pytest.fixture
def root(api: Api) -> dict[str, str]:
    _, token = auth.create_token(api.brain, "root", ["admin"], identity=OPEN)
    return {"Authorization": f"Bearer {token}"}


def test_a_revoked_token_is_never_reset(api: Api, root: dict[str, str]) -> None:
    made = api.http.post("/v1/tokens", json={"name": "agent", "can": ["read"]}, headers=root)
    old = {"Authorization": f"Bearer {made.json()['token']}"}
    assert api.http.post("/v1/tokens/agent/revoke", headers=root).status_code == 200
    before = api.state()
    reset = api.http.post("/v1/tokens/agent/reset", headers=root)
    assert reset.status_code == 409, reset.text
    assert "revocation is final" in reset.json()["error"]["message"]
    again = api.http.post("/v1/tokens", json={"name": "agent", "can": ["read"]}, headers=root)
    assert again.status_code == 409
    assert api.state() == before
    assert api.http.get("/v1/me", headers=old).status_code == 401


def test_the_last_admin_token_may_not_revoke_itself(
    api: Api, root: dict[str, str], digest: Callable[[mc.Brain], str]
) -> None:
    before = api.state()
    r = api.http.post("/v1/tokens/root/revoke", headers=root)
    assert r.status_code == 409 and "last admin token" in r.json()["error"]["message"]
    assert api.state() == before
    assert api.http.get("/v1/tokens", headers=root).status_code == 200
    # Another unpinned admin first: then it may go.
    made = api.http.post("/v1/tokens", json={"name": "root2", "can": ["admin"]}, headers=root)
    assert api.http.post("/v1/tokens/root/revoke", headers=root).status_code == 200
    other = {"Authorization": f"Bearer {made.json()['token']}"}
    assert api.http.get("/v1/tokens", headers=other).status_code == 200
