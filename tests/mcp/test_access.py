"""Capabilities and tenants over MCP: every tool and resource allowed where granted, an MCP
error where not, and nothing changed by a refusal."""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

import memory_core as mc
from memory_core import auth, proposals
from memory_core.auth import SYSTEM
from memory_core.tools import TOOLS
from tests.mcp.conftest import ADD, JSON_RPC, headers_for

Connect = Callable[..., AbstractAsyncContextManager[Client]]
Unchanged = Callable[[mc.Brain], tuple[str, int]]
# What a refusal looks like: (refused?, error code)
Outcome = tuple[bool, str | None]

NEEDS: dict[str, frozenset[str]] = {
    "memory_add": frozenset({"write"}),
    "memory_update": frozenset({"write"}),
    "memory_delete": frozenset({"delete"}),
    "memory_merge": frozenset({"write", "delete"}),
    "memory_search": frozenset({"read"}),
    "memory_reflect": frozenset({"dream"}),
    "memory_post_turn": frozenset({"write"}),
    "memory_context": frozenset({"read"}),
    "memory_read": frozenset({"read"}),
    "memory_undo_supersession": frozenset({"write"}),
    "memory://memories/{id}": frozenset({"read"}),
    "memory://proposals": frozenset({"read"}),
}
TOKENS: dict[str, list[str]] = {
    "reader": ["read"],
    "writer": ["write"],
    "deleter": ["delete"],
    "dreamer": ["dream"],
    "merger": ["write", "delete"],
    "all-but-read": ["write", "delete", "dream"],
}


def test_the_capabilities_asked_for_here_are_the_ones_the_server_checks() -> None:
    declared = {name: tool.needs for name, tool in TOOLS.items()}
    assert {n: frozenset(c) for n, c in declared.items()} == {
        n: c for n, c in NEEDS.items() if not n.startswith("memory://")
    }


def _fresh(brain: mc.Brain) -> str:
    return mc.add_trace(brain, f"Note {uuid.uuid4().hex[:8]} about gardening.", identity=SYSTEM)


def _prepare(operation: str, brain: mc.Brain) -> Callable[[Client], Awaitable[Outcome]]:
    """``operation`` on fresh traces, as a call: it answers whether it was refused, and how."""
    if operation.startswith("memory://"):
        uri = operation.replace("{id}", _fresh(brain))

        async def read(client: Client) -> Outcome:
            try:
                await client.read_resource(uri)
            except MCPError as e:
                return True, (e.data or {}).get("code")
            return False, None

        return read
    arguments: dict[str, Any] = {
        "memory_add": lambda: {"content": "A new note."},
        "memory_update": lambda: {"traceId": _fresh(brain), "content": "Changed."},
        "memory_delete": lambda: {"traceId": _fresh(brain)},
        "memory_merge": lambda: {"traceIds": [_fresh(brain), _fresh(brain)]},
        "memory_search": lambda: {"query": "gardening"},
        "memory_reflect": lambda: {},
        "memory_post_turn": lambda: {"user": "hi", "assistant": "hello", "scope_id": "u1"},
        "memory_context": lambda: {"query": "gardening"},
        "memory_read": lambda: {"traceId": _fresh(brain)},
        "memory_undo_supersession": lambda: {"traceId": _fresh(brain)},
    }[operation]()

    async def call(client: Client) -> Outcome:
        result = await client.call_tool(operation, arguments)
        error = (result.structured_content or {}).get("error")
        return result.is_error, error["code"] if error else None

    return call


def test_every_tool_and_resource_is_allowed_where_granted_and_refused_unchanged_where_not(
    over_http: Connect, served: Any, unchanged: Unchanged
) -> None:
    tokens = {
        name: auth.create_token(served.brain, name, caps, identity=auth.OPEN)[1]
        for name, caps in TOKENS.items()
    }

    async def scenario() -> None:
        async with AsyncExitStack() as stack:
            clients = {
                name: await stack.enter_async_context(over_http(token))
                for name, token in tokens.items()
            }
            for operation, needed in NEEDS.items():
                for name, client in clients.items():
                    granted = needed <= set(TOKENS[name])
                    attempt = _prepare(operation, served.brain)
                    served.quiet()
                    before = unchanged(served.brain)
                    refused, code = await attempt(client)
                    assert refused is not granted, (operation, name)
                    if not granted:
                        assert code == "forbidden", (operation, name)
                        served.quiet()
                        assert unchanged(served.brain) == before, (operation, name)

    anyio.run(scenario)


def test_a_refused_call_changes_no_trace_vector_index_or_inbox_row(
    over_http: Connect, served: Any, unchanged: Unchanged
) -> None:
    _, reader = auth.create_token(served.brain, "reader", ["read"], identity=auth.OPEN)
    _, writer = auth.create_token(served.brain, "writer", ["write"], identity=auth.OPEN)
    a, b = _fresh(served.brain), _fresh(served.brain)
    refused_calls = [
        (writer, "memory_delete", {"traceId": a}),
        (writer, "memory_merge", {"traceIds": [a, b]}),
        (writer, "memory_reflect", {}),
        (reader, "memory_add", {"content": "Not stored."}),
        (reader, "memory_update", {"traceId": a, "content": "Not changed."}),
        (reader, "memory_post_turn", {"user": "hi", "assistant": "hello", "scope_id": "u1"}),
    ]
    before = unchanged(served.brain)

    async def scenario() -> None:
        async with over_http(reader) as as_reader, over_http(writer) as as_writer:
            for token, name, arguments in refused_calls:
                client = as_reader if token == reader else as_writer
                result = await client.call_tool(name, arguments)
                assert result.is_error, name
                assert result.content[0].text.startswith("forbidden: "), name

    anyio.run(scenario)
    assert unchanged(served.brain) == before


@pytest.fixture
def tenants(served: Any) -> dict[str, Any]:
    """Alice's and Bob's tokens, each pinned to its own scope id, and a trace of each."""
    caps = ["read", "write", "delete"]
    found: dict[str, Any] = {}
    for who in ("alice", "bob"):
        found[who] = auth.create_token(served.brain, who, caps, [who], identity=auth.OPEN)[1]
        found[f"{who}_trace"] = mc.add_trace(
            served.brain, f"{who} hides a key in the shed.", scope_id=who, identity=SYSTEM
        )
    return found


@pytest.mark.parametrize(("who", "other"), [("bob", "alice"), ("alice", "bob")])
def test_pinned_tenants_cannot_read_search_change_or_merge_each_others_traces(
    over_http: Connect,
    served: Any,
    unchanged: Unchanged,
    tenants: dict[str, Any],
    who: str,
    other: str,
) -> None:
    own, theirs = tenants[f"{who}_trace"], tenants[f"{other}_trace"]
    guessed = f"mt_{uuid.uuid4()}"
    kept = mc.get_trace(served.brain, theirs, identity=SYSTEM).to_dict()
    before = unchanged(served.brain)

    # A token may not act for another tenant's user id: refused before any tool runs.
    foreign = headers_for(tenants[who], {"user": other})
    refused = httpx.post(served.url, json=ADD, headers={**foreign, **JSON_RPC}, timeout=10)
    assert refused.status_code == 403 and other in refused.json()["error"]["message"]

    async def scenario() -> None:
        async with over_http(tenants[who], scope_ids={"user": who}) as client:
            found = await client.call_tool("memory_search", {"query": "key shed"})
            assert [r["id"] for r in found.structured_content["results"]] == [own]
            # The other's id answers exactly as an id nobody has: nothing to probe.
            answers = []
            for trace_id in (theirs, guessed):
                calls = [
                    ("memory_read", {"traceId": trace_id}),
                    ("memory_update", {"traceId": trace_id, "content": "Mine now."}),
                    ("memory_delete", {"traceId": trace_id}),
                    ("memory_merge", {"traceIds": [own, trace_id]}),
                ]
                results = [(await client.call_tool(n, a)).structured_content for n, a in calls]
                with pytest.raises(MCPError) as refused:
                    await client.read_resource(f"memory://memories/{trace_id}")
                results.append({"resource": refused.value.message})
                answers.append(json.loads(json.dumps(results).replace(trace_id, "ID")))
            assert answers[0] == answers[1]
            read, updated, deleted, merged, resource = answers[0]
            assert read["error"]["code"] == merged["error"]["code"] == "not_found"
            assert (updated, deleted) == ({"updated": False}, {"deleted": False})
            assert resource["resource"].startswith("not_found")
            posted = await client.call_tool(
                "memory_post_turn", {"user": "hi", "assistant": "x", "scope_id": other}
            )
            assert posted.structured_content["error"]["code"] == "forbidden"

    anyio.run(scenario)
    served.quiet()
    assert mc.get_trace(served.brain, theirs, identity=SYSTEM).to_dict() == kept
    assert unchanged(served.brain)[1] == before[1]  # no turn either (the search did count)


def test_proposals_resource_shows_a_tenant_only_proposals_about_its_own_traces(
    over_http: Connect, served: Any, tenants: dict[str, Any]
) -> None:
    def prune(trace_id: str) -> proposals.ProposalDraft:
        return proposals.ProposalDraft("prune", [trace_id], "decayed", {"strength": 0.0}, "prune")

    alice_pid, bob_pid = proposals.create_proposals(
        served.brain,
        served.settings,
        [prune(tenants["alice_trace"]), prune(tenants["bob_trace"])],
        "pass_1",
    )

    async def listed(token: str) -> list[str]:
        async with over_http(token) as client:
            text = (await client.read_resource("memory://proposals")).contents[0].text
            return [p["id"] for p in json.loads(text)["proposals"]]

    assert anyio.run(listed, tenants["alice"]) == [alice_pid]
    assert anyio.run(listed, tenants["bob"]) == [bob_pid]
