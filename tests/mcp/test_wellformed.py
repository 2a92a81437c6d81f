"""Over MCP, a tool call carrying text that is not well-formed is a tool error result
naming the field, and changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import httpx
from mcp import Client

import memory_core as mc
from tests.mcp.conftest import JSON_RPC

Connect = Callable[..., AbstractAsyncContextManager[Client]]
Unchanged = Callable[[mc.Brain], tuple[str, int]]

CALLS = [
    ("memory_add", {"content": "he\x00llo"}, "content"),
    ("memory_search", {"query": "jasmine\x00"}, "query"),
    (
        "memory_post_turn",
        {"user": "hi", "assistant": "ok", "metadata": {"x": "\x00"}},
        "metadata.x",
    ),
    ("memory_context", {"query": "tea\x00"}, "query"),
]


def test_mcp_tool_calls_with_nul_are_error_results_naming_the_field(
    over_http: Connect, served: Any, unchanged: Unchanged
) -> None:
    before = unchanged(served.brain)

    async def scenario() -> list[Any]:
        async with over_http(scope_ids={"user": "eve"}) as client:
            return [await client.call_tool(name, args) for name, args, _ in CALLS]

    for result, (_, _, field) in zip(anyio.run(scenario), CALLS, strict=True):
        assert result.is_error
        assert result.structured_content["error"]["code"] == "invalid_argument"
        assert result.content[0].text.startswith(f"invalid_argument: {field}: text may not hold")
    assert unchanged(served.brain) == before


def test_mcp_request_with_a_lone_surrogate_is_refused_and_changes_nothing(
    served: Any, unchanged: Unchanged
) -> None:
    before = unchanged(served.brain)
    body = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
        b'{"name": "memory_add", "arguments": {"content": "he\\ud800llo"}}}'
    )
    r = httpx.post(
        served.url,
        content=body,
        headers={**JSON_RPC, "content-type": "application/json", "X-Reverie-User": "eve"},
        timeout=30,
    )
    assert r.status_code < 500, r.text
    assert "error" in r.text
    assert unchanged(served.brain) == before
