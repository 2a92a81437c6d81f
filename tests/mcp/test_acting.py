"""Isolation by the acting identity: on the open API, a caller that names a user sees and
writes only that user's memories -- through REST, the tools, MCP over HTTP and
``memctl mcp --user`` -- exactly as a token pinned to it would.  A caller naming none is
the local operator and sees every scope id."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

import memory_core as mc
from memory_core.auth import SYSTEM

Connect = Callable[..., AbstractAsyncContextManager[Client]]

ALICE = "Alice's locker code is 4471."
BOB = "Bob keeps his locker key in the blue tin."


@pytest.fixture
def two_users(served: Any) -> dict[str, str]:
    return {
        "alice": mc.add_trace(served.brain, ALICE, scope="user", scope_id="alice", identity=SYSTEM),
        "bob": mc.add_trace(served.brain, BOB, scope="user", scope_id="bob", identity=SYSTEM),
    }


def _rest(served: Any) -> str:
    return served.url.removesuffix("/mcp")


def test_rest_search_and_tools_answer_only_the_named_user(
    served: Any, two_users: dict[str, str]
) -> None:
    with httpx.Client(
        base_url=_rest(served), headers={"x-reverie-user": "bob"}, timeout=60
    ) as http:
        for params in ({"q": "locker"}, {"q": "locker", "scope_id": "alice"}):
            ids = [h["id"] for h in http.get("/v1/search", params=params).json()["results"]]
            assert two_users["alice"] not in ids
        assert (
            http.get("/v1/search", params={"q": "locker"}).json()["results"][0]["id"]
            == (two_users["bob"])
        )
        found = http.post("/v1/tools/memory_search", json={"query": "locker code"}).json()
        assert [r["id"] for r in found["results"]] == [two_users["bob"]]
        assert http.get(f"/v1/memories/{two_users['alice']}").status_code == 404
        assert http.delete(f"/v1/memories/{two_users['alice']}").status_code == 404
        added = http.post("/v1/tools/memory_add", json={"content": "Bob likes figs."}).json()
        assert mc.get_trace(served.brain, added["traceId"], identity=SYSTEM).scope_id == "bob"
        refused = http.post(
            "/v1/memories", json={"content": "x", "scope": "user", "scope_id": "alice"}
        )
        assert refused.status_code == 403
    assert mc.get_trace(served.brain, two_users["alice"], identity=SYSTEM).content == ALICE
    # Naming no one is the local operator: every scope id.
    everyone = httpx.get(_rest(served) + "/v1/search", params={"q": "locker"}).json()
    assert {two_users["alice"], two_users["bob"]} <= {h["id"] for h in everyone["results"]}


def test_mcp_over_http_answers_only_the_named_user(
    over_http: Connect, two_users: dict[str, str]
) -> None:
    async def scenario() -> None:
        async with over_http(scope_ids={"user": "bob"}) as client:
            found = await client.call_tool("memory_search", {"query": "locker"})
            assert [r["id"] for r in found.structured_content["results"]] == [two_users["bob"]]
            read = await client.call_tool("memory_read", {"traceId": two_users["alice"]})
            assert read.structured_content["error"]["code"] == "not_found"

    anyio.run(scenario)


def test_memctl_mcp_user_answers_only_that_user(
    over_stdio: Connect, mcp_settings: mc.Settings
) -> None:
    brain = mc.open_brain(mcp_settings)
    alice = mc.add_trace(brain, ALICE, scope="user", scope_id="alice", identity=SYSTEM)
    bob = mc.add_trace(brain, BOB, scope="user", scope_id="bob", identity=SYSTEM)

    async def scenario() -> None:
        async with over_stdio("--user", "bob") as client:
            found = await client.call_tool("memory_search", {"query": "locker"})
            assert [r["id"] for r in found.structured_content["results"]] == [bob]
            deleted = await client.call_tool("memory_delete", {"traceId": alice})
            assert deleted.structured_content == {"deleted": False}

    anyio.run(scenario)
    assert mc.get_trace(brain, alice, identity=SYSTEM).content == ALICE


def test_mcp_post_turn_takes_a_message_list(over_http: Connect, served: Any) -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "I am allergic to penicillin.", "name": "Ana"},
        {"role": "assistant", "content": "Noted."},
    ]

    async def scenario() -> tuple[Any, Any]:
        async with over_http(scope_ids={"user": "ana"}) as client:
            posted = await client.call_tool("memory_post_turn", {"messages": messages})
            both = await client.call_tool(
                "memory_post_turn", {"messages": messages, "user": "x", "assistant": "y"}
            )
            return posted.structured_content, both

    posted, both = anyio.run(scenario)
    assert both.is_error
    served.workers.join()
    episode = next(
        t
        for t in mc.list_traces(served.brain, scope_id="ana", identity=SYSTEM).traces
        if "turn" in t.tags
    )
    assert episode.content == (
        "System: Be brief.\n\nUser (Ana): I am allergic to penicillin.\n\nAssistant: Noted."
    )
    assert posted["turn_id"] == episode.metadata["turn_id"]
