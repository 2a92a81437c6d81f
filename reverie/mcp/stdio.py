"""MCP over stdio (``memctl mcp``): the server for one client, as one caller.

The client (Claude Code, Codex, any MCP host) starts the process and speaks
JSON-RPC on its stdin and stdout, so nothing else ever goes to stdout: logs
go to stderr.  The caller is the token the process was started with (or the
open identity while the brain has no working token), confined to the scope
ids it was told to act for.  The process may run for hours: the token is
checked again every few seconds (:class:`memory_core.auth.Session`), so a
revoked one is refused from then on.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import memory_core as mc
from memory_core import auth
from memory_core.runtime import Runtime
from reverie.mcp.server import CALLER, Caller, Memory, build_server

log = logging.getLogger(__name__)


def caller_for(brain: mc.Brain, token: str | None, scope_ids: Mapping[str, str]) -> Caller:
    """The token's identity acting for ``scope_ids``; without a token, the open one, only
    while the brain has no working token (:class:`~memory_core.Unauthorized` otherwise,
    now or at a later re-check)."""
    session = auth.Session(brain, token, scope_ids)
    return Caller(session.identity(), dict(scope_ids), session)


def serve(runtime: Runtime, caller: Caller) -> None:
    """Serve until the client closes stdin."""
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(Memory(runtime))

    async def run() -> None:
        CALLER.set(caller)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    log.info("serving MCP over stdio as %s; brain %s", caller.identity.name, runtime.brain.path)
    anyio.run(run)
