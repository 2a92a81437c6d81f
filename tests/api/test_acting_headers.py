"""The X-Reverie-* headers name whom a request acts for: read as UTF-8, never blank,
and per scope -- a thread id never opens the user memories of someone of that id."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

import memory_core as mc
from memory_core.auth import SYSTEM
from reverie.compose import Process
from reverie.compose import app as api_app
from tests.api.conftest import raw_request, serving

ALICE = "Alice's locker code is 4471."
THREAD = "The alice thread planned the bake sale."


@pytest.fixture
def served(api_settings: mc.Settings, workers: Process) -> Iterator[tuple[str, mc.Brain]]:
    app = api_app(workers)
    with serving(app) as url:
        yield url, app.state.brain


@pytest.mark.parametrize("blank", [b"", b" ", b"\t "])
@pytest.mark.parametrize("header", ["X-Reverie-User", "X-Reverie-Thread", "X-Reverie-Persona"])
def test_a_blank_identity_header_is_refused_never_the_operator(
    served: tuple[str, mc.Brain], digest: Callable[[mc.Brain], str], header: str, blank: bytes
) -> None:
    url, brain = served
    mc.add_trace(brain, ALICE, scope_id="alice", identity=SYSTEM)
    before = digest(brain)
    json_body = [("Host", b"127.0.0.1"), ("Content-Type", b"application/json"), (header, blank)]
    for method, path, body in (
        ("GET", "/v1/memories", b""),
        ("GET", "/v1/search?q=locker", b""),
        ("POST", "/v1/memories", b'{"content": "x"}'),
        ("POST", "/v1/tools/memory_search", b'{"query": "locker"}'),
        ("POST", "/v1/tokens", b'{"name": "x", "can": ["admin"]}'),
        ("POST", "/mcp", b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}'),
    ):
        status, answer = raw_request(url, method, path, json_body, body)
        assert status == 400, (method, path, status, answer)
        assert b"invalid_identity" in answer and b"blank" in answer
    assert digest(brain) == before


def test_identity_headers_are_utf8_and_name_whom_a_body_names(
    served: tuple[str, mc.Brain], workers: Process, digest: Callable[[mc.Brain], str]
) -> None:
    url, brain = served
    mine = mc.add_trace(brain, "Ålice grows quinces.", scope_id="Ålice", identity=SYSTEM)
    headers = {"X-Reverie-User": "Ålice".encode()}
    with httpx.Client(base_url=url, timeout=10) as http:
        found = http.get("/v1/memories", headers=headers).json()["memories"]
        assert [m["id"] for m in found] == [mine]
        added = http.post("/v1/memories", json={"content": "Ålice likes figs."}, headers=headers)
        assert added.status_code == 201 and added.json()["scope_id"] == "Ålice"
        assert http.get("/v1/me", headers=headers).json()["scope_ids"] == ["Ålice"]
        workers.join()  # its vector written
        before = digest(brain)
        for bad in (b"\xc5lice", b"\xff\xfe"):  # latin-1 bytes, not UTF-8
            r = http.post("/v1/memories", json={"content": "x"}, headers={"X-Reverie-User": bad})
            assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_identity"
            assert "UTF-8" in r.json()["error"]["message"]
        assert digest(brain) == before


@pytest.fixture
def same_ids(served: tuple[str, mc.Brain]) -> dict[str, str]:
    """Alice's user memory, and a thread whose id is also "alice", with one of Bob's."""
    _, brain = served
    return {
        "user": mc.add_trace(brain, ALICE, scope="user", scope_id="alice", identity=SYSTEM),
        "thread": mc.add_trace(brain, THREAD, scope="thread", scope_id="alice", identity=SYSTEM),
        "bob": mc.add_trace(brain, "Bob's locker is 12.", scope_id="bob", identity=SYSTEM),
    }


def _ids(found: Any, key: str = "results") -> set[str]:
    return {h["id"] for h in found[key]}


def test_a_thread_id_never_opens_a_user_of_the_same_id(
    served: tuple[str, mc.Brain],
    workers: Process,
    same_ids: dict[str, str],
    digest: Callable[[mc.Brain], str],
) -> None:
    url, brain = served
    headers = {"X-Reverie-User": "bob", "X-Reverie-Thread": "alice"}
    with httpx.Client(base_url=url, headers=headers, timeout=10) as http:
        seen = _ids(http.get("/v1/memories").json(), "memories")
        assert seen == {same_ids["bob"], same_ids["thread"]}
        for params in ({"q": "locker"}, {"q": "locker", "scope_id": "alice"}):
            assert same_ids["user"] not in _ids(http.get("/v1/search", params=params).json())
        assert _ids(http.get("/v1/search", params={"q": "bake sale"}).json()) == {
            same_ids["thread"]
        }
        tool = http.post("/v1/tools/memory_search", json={"query": "locker code"}).json()
        assert same_ids["user"] not in _ids(tool)
        assert http.get(f"/v1/memories/{same_ids['user']}").status_code == 404
        assert http.get(f"/v1/memories/{same_ids['user']}/history").status_code == 404
        context = http.post("/v1/context", json={"query": "locker code"}).json()
        assert ALICE not in context["context"]
        workers.join()  # vectors and retrieval feedback written
        before = digest(brain)
        assert http.delete(f"/v1/memories/{same_ids['user']}").status_code == 404
        assert (
            http.patch(f"/v1/memories/{same_ids['user']}", json={"tags": ["x"]}).status_code == 404
        )
        written = http.post(
            "/v1/memories", json={"content": "x", "scope": "user", "scope_id": "alice"}
        )
        assert written.status_code == 403
        assert http.delete("/v1/scopes/user/alice").status_code == 403
        assert digest(brain) == before
        # What it named it writes: the thread alice, and bob as a user.
        thread = http.post("/v1/memories", json={"content": "More cakes.", "scope": "thread"})
        assert thread.status_code == 201 and thread.json()["scope_id"] == "alice"
        user = http.post("/v1/memories", json={"content": "Bob likes figs."}).json()
        assert (user["scope"], user["scope_id"]) == ("user", "bob")
    assert mc.get_trace(brain, same_ids["user"], identity=SYSTEM).content == ALICE


def test_a_thread_id_never_opens_a_users_turns_of_the_same_id(
    served: tuple[str, mc.Brain], workers: Process
) -> None:
    url, _ = served
    turn = {"user": "My locker code is 4471.", "assistant": "Noted.", "scope": "user"}
    turn |= {"scope_id": "alice"}
    with httpx.Client(base_url=url, timeout=10) as http:
        alices = http.post("/v1/turns", json=turn, headers={"X-Reverie-User": "alice"})
        assert alices.status_code == 202, alices.text
        turn_id = alices.json()["turn_id"]
        assert http.get(f"/v1/turns/{turn_id}").status_code == 200  # the operator sees it
        bob = {"X-Reverie-User": "bob", "X-Reverie-Thread": "alice"}
        assert http.get(f"/v1/turns/{turn_id}", headers=bob).status_code == 404
        as_user = http.post("/v1/turns", json=turn, headers=bob)
        assert as_user.status_code == 403, as_user.text
        in_thread = http.post("/v1/turns", json={**turn, "scope": "thread"}, headers=bob)
        assert in_thread.status_code == 202, in_thread.text
        mine = in_thread.json()["turn_id"]
        assert http.get(f"/v1/turns/{mine}", headers=bob).status_code == 200
