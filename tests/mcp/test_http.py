"""MCP over streamable HTTP at /mcp on the API, under a real uvicorn server."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

import memory_core as mc
from memory_core import auth, proposals
from memory_core.auth import SYSTEM
from memory_core.tools import TOOL_SCHEMAS
from tests.mcp.conftest import ADD, JSON_RPC

Connect = Callable[..., AbstractAsyncContextManager[Client]]
Unchanged = Callable[[mc.Brain], tuple[str, int]]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_http_serves_tools_and_resources_in_both_protocol_eras(
    over_http: Connect, served: Any, mode: str
) -> None:
    async def scenario() -> None:
        async with over_http(scope_ids={"user": "alice"}, mode=mode) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert len(tools) == 10
            assert all(tools[n].input_schema == s["parameters"] for n, s in TOOL_SCHEMAS.items())
            added = await client.call_tool("memory_add", {"content": "Alice likes jasmine tea."})
            trace_id = added.structured_content["traceId"]
            found = await client.call_tool("memory_search", {"query": "jasmine"})
            line = found.content[0].text.split("\t")
            assert [line[0], line[2]] == [trace_id, "Alice likes jasmine tea."]
            read = await client.call_tool("memory_read", {"traceId": trace_id})
            assert read.structured_content["scope_id"] == "alice"
            resource = await client.read_resource(f"memory://memories/{trace_id}")
            assert json.loads(resource.contents[0].text)["content"] == "Alice likes jasmine tea."
            with pytest.raises(MCPError, match="not_found"):
                await client.read_resource("memory://memories/mt_00000000-0000-0000-0000-0")
            with pytest.raises(MCPError, match="not_found"):
                await client.read_resource("memory://elsewhere")

    anyio.run(scenario)


def test_http_tool_results_are_those_of_post_v1_tools(over_http: Connect, served: Any) -> None:
    trace_id = mc.add_trace(served.brain, "Bob keeps bees.", tags=["hobby"], identity=SYSTEM)
    calls = [
        ("memory_update", {"traceId": trace_id, "tags": ["hobby", "outdoor"]}),
        ("memory_update", {"traceId": "mt_unknown", "content": "x"}),
        ("memory_delete", {"traceId": "mt_unknown"}),
        ("memory_merge", {"traceIds": [trace_id, "mt_unknown"]}),
        ("memory_add", {"content": ""}),
        ("memory_search", {"query": "bees", "limit": 0}),
        ("memory_add", {"content": "x", "scope": "galaxy"}),
    ]
    with httpx.Client(base_url=served.url.removesuffix("/mcp"), timeout=10) as http:
        rest = [http.post(f"/v1/tools/{name}", json=args).json() for name, args in calls]

    async def scenario() -> list[Any]:
        async with over_http() as client:
            return [(await client.call_tool(n, a)).structured_content for n, a in calls]

    assert anyio.run(scenario) == rest
    assert [r.get("error", {}).get("code") for r in rest] == [
        None, None, None, "not_found", "invalid_argument", "invalid_argument", "invalid_argument"
    ]  # fmt: skip


def test_rest_and_mcp_list_the_same_tools_and_answer_them_alike(
    over_http: Connect, served: Any
) -> None:
    trace_id = mc.add_trace(
        served.brain, "Cai sails on Sundays.", scope="user", scope_id="cai", identity=SYSTEM
    )
    with httpx.Client(base_url=served.url.removesuffix("/mcp"), timeout=10) as http:
        listed = {t["name"]: t["parameters"] for t in http.get("/v1/tools").json()["tools"]}
        read = http.post("/v1/tools/memory_read", json={"traceId": trace_id}).json()
        posted = http.post(
            "/v1/tools/memory_post_turn",
            json={"user": "I sail.", "assistant": "Nice.", "scope_id": "cai"},
        ).json()

    async def scenario() -> tuple[dict[str, Any], Any]:
        async with over_http() as client:
            tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
            answer = await client.call_tool("memory_read", {"traceId": trace_id})
            return tools, answer.structured_content

    tools, mcp_read = anyio.run(scenario)
    assert tools == listed and len(listed) == 10
    # Alike but for the use the REST read itself records (a read in full is a use,
    # counted by the workers, maybe before the MCP read).
    used = ("retrieval_count", "last_accessed")
    assert {k: v for k, v in read.items() if k not in used} == {
        k: v for k, v in mcp_read.items() if k not in used
    }
    assert read["content"] == "Cai sails on Sundays."
    assert read["retrieval_count"] == 0  # the workers count it after the answer
    assert posted["turn_id"].startswith("turn_") and posted["duplicate"] is False


def test_http_posted_turn_goes_through_the_batcher_and_becomes_searchable(
    over_http: Connect, served: Any
) -> None:
    async def scenario() -> None:
        async with over_http(scope_ids={"user": "carol"}) as client:
            posted = await client.call_tool(
                "memory_post_turn",
                {
                    "user": "I adopted a greyhound named Pixel.",
                    "assistant": "What a lovely name.",
                    "timestamp": "2026-11-30T09:15:00Z",
                },
            )
            assert (posted.is_error, posted.structured_content["enqueued"]) == (False, True)
            with anyio.fail_after(15):
                while True:
                    found = await client.call_tool("memory_search", {"query": "greyhound"})
                    if found.structured_content["results"]:
                        break
                    await anyio.sleep(0.1)
            first = found.structured_content["results"][0]
            read = await client.call_tool("memory_read", {"traceId": first["id"]})
            assert read.structured_content["scope_id"] == "carol"

    anyio.run(scenario)


def test_http_post_turn_needs_a_scope_id_from_arguments_or_headers(
    over_http: Connect, served: Any, unchanged: Unchanged
) -> None:
    before = unchanged(served.brain)

    async def scenario() -> Any:
        async with over_http() as client:
            return await client.call_tool("memory_post_turn", {"user": "hi", "assistant": "hello"})

    refused = anyio.run(scenario)
    assert refused.is_error and refused.structured_content["error"]["code"] == "invalid_argument"
    assert refused.content[0].text.startswith("invalid_argument: scope_id")
    assert unchanged(served.brain) == before


def test_http_proposals_resource_lists_pending_proposals(over_http: Connect, served: Any) -> None:
    trace_id = mc.add_trace(served.brain, "An old note.", identity=SYSTEM)
    draft = proposals.ProposalDraft("prune", [trace_id], "decayed", {"strength": 0.01}, "prune it")
    [pid] = proposals.create_proposals(served.brain, served.settings, [draft], "pass_1")

    async def scenario() -> Any:
        async with over_http() as client:
            return await client.read_resource("memory://proposals")

    listed = json.loads(anyio.run(scenario).contents[0].text)["proposals"]
    assert [(p["id"], p["kind"], p["trace_ids"]) for p in listed] == [(pid, "prune", [trace_id])]


def _bad_authorizations(brain: mc.Brain) -> dict[str, dict[str, str]]:
    _, revoked = auth.create_token(brain, "gone", ["write"], identity=auth.OPEN)
    auth.revoke_token(brain, "gone", identity=auth.OPEN)
    unknown = "rvt_0123456789abcdef_" + "A" * 43
    return {
        "no token": {},
        "unknown token": {"authorization": f"Bearer {unknown}"},
        "revoked token": {"authorization": f"Bearer {revoked}"},
        "malformed token": {"authorization": "Bearer not-a-token"},
        "not bearer": {"authorization": "Basic dXNlcjpwYXNz"},
    }


def test_http_without_a_working_token_answers_401_before_mcp_and_changes_nothing(
    served: Any, unchanged: Unchanged
) -> None:
    _, writer = auth.create_token(served.brain, "writer", ["write"], identity=auth.OPEN)
    bad = _bad_authorizations(served.brain)
    before = unchanged(served.brain)
    with httpx.Client(timeout=10) as http:
        for what, headers in bad.items():
            r = http.post(served.url, json=ADD, headers={**JSON_RPC, **headers})
            assert r.status_code == 401, what
            assert r.headers["www-authenticate"].startswith("Bearer"), what
            assert r.json()["error"]["code"] == "unauthorized", what
        assert unchanged(served.brain) == before
        # The same request with a working token is served: the refusals were the token's.
        working = {**JSON_RPC, "authorization": f"Bearer {writer}"}
        ok = http.post(served.url, json=ADD, headers=working)
    assert ok.status_code == 200 and ok.json()["result"]["isError"] is False
    assert unchanged(served.brain) != before


def test_http_mcp_takes_posts_only(served: Any) -> None:
    with httpx.Client(timeout=10) as http:
        assert http.get(served.url, headers=JSON_RPC).status_code == 405
        assert "/mcp" not in http.get(served.url.removesuffix("/mcp") + "/openapi.json").text


def test_http_open_mode_refuses_a_foreign_host_header(served: Any, unchanged: Unchanged) -> None:
    before = unchanged(served.brain)
    with httpx.Client(timeout=10) as http:
        r = http.post(served.url, json=ADD, headers={**JSON_RPC, "host": "attacker.example"})
    assert r.status_code == 421
    assert unchanged(served.brain) == before
