"""Over MCP too, a confined identity runs no pass (HTTP and stdio alike), and a running
``memctl mcp --token`` session stops within seconds of its token's revocation."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import pytest
from mcp import Client
from sqlalchemy import text

import memory_core as mc
from memory_core import auth
from memory_core.auth import OPEN, SYSTEM

Connect = Callable[..., AbstractAsyncContextManager[Client]]


def _passes(brain: mc.Brain) -> int:
    with brain.read() as conn:
        return int(conn.execute(text("SELECT count(*) FROM consolidation_log")).scalar_one())


def _refused_reflect(result: Any) -> None:
    assert result.is_error, result
    error = result.structured_content["error"]
    assert error["code"] == "forbidden" and "whole brain" in error["message"]


def test_http_mcp_runs_no_pass_for_a_confined_identity(served: Any, over_http: Connect) -> None:
    mc.add_trace(served.brain, "Alice's PIN is 1234.", scope_id="alice", identity=SYSTEM)

    async def scenario(**connect: Any) -> None:
        async with over_http(**connect) as client:
            _refused_reflect(await client.call_tool("memory_reflect", {}))

    anyio.run(lambda: scenario(scope_ids={"user": "bob"}))  # open mode, acting for bob
    _, bobs = auth.create_token(served.brain, "bob-admin", ["admin"], ["bob"], identity=OPEN)
    anyio.run(lambda: scenario(token=bobs))
    anyio.run(lambda: scenario(token=bobs, scope_ids={"user": "bob"}))
    served.quiet()
    assert _passes(served.brain) == 0


def test_memctl_mcp_runs_no_pass_for_a_confined_identity(
    over_stdio: Connect, mcp_settings: mc.Settings
) -> None:
    brain = mc.open_brain(mcp_settings)
    mc.add_trace(brain, "Alice's PIN is 1234.", scope_id="alice", identity=SYSTEM)

    async def scenario(*options: str) -> None:
        async with over_stdio(*options) as client:
            _refused_reflect(await client.call_tool("memory_reflect", {}))

    anyio.run(scenario, "--user", "bob")
    _, bobs = auth.create_token(brain, "bob-admin", ["admin"], ["bob"], identity=OPEN)
    anyio.run(scenario, "--token", bobs)
    assert _passes(brain) == 0


@pytest.mark.parametrize("revoke", ["token", "first-token"])
def test_a_running_memctl_mcp_session_is_refused_soon_after_revocation(
    over_stdio: Connect, mcp_settings: mc.Settings, revoke: str
) -> None:
    """``token``: its token is revoked; ``first-token``: it ran open, and a token now works."""
    brain = mc.open_brain(mcp_settings)
    options: tuple[str, ...] = ()
    if revoke == "token":
        _, token = auth.create_token(brain, "agent", ["read", "write"], identity=OPEN)
        options = ("--token", token)

    async def scenario() -> float:
        async with over_stdio(*options, "--user", "ana") as client:
            added = await client.call_tool("memory_add", {"content": "Ana likes figs."})
            assert not added.is_error, added
            if revoke == "token":
                auth.revoke_token(brain, "agent", identity=OPEN)
            else:
                auth.create_token(brain, "first", ["read"], identity=OPEN)
            stopped = time.monotonic()
            deadline = stopped + 5
            while time.monotonic() < deadline:
                result = await client.call_tool("memory_search", {"query": "figs"})
                if result.is_error:
                    assert result.structured_content["error"]["code"] == "unauthorized"
                    return time.monotonic() - stopped
                await anyio.sleep(0.1)
            pytest.fail("the session still answered 5 s after its token stopped working")

    assert anyio.run(scenario) < 5
