"""``memctl mcp``: the brain's memory tools and resources for an MCP client, over stdio.

The client (Claude Code, Codex, any MCP host) starts this process and speaks
JSON-RPC on its stdin and stdout, so nothing else ever goes to stdout: logs
go to stderr.  Without Redis, in-process workers ingest posted turns and
embed new traces, as under ``memctl up``; with ``REVERIE_REDIS_URL`` the jobs
go to Redis for ``memctl worker``.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

import typer

import memory_core as mc
from memory_core import auth

log = logging.getLogger(__name__)

# Turns a process that exited left pending are ingested at the next start; on exit,
# the client waits about two seconds before it terminates the process.
STOP_TIMEOUT_MS = 1_500


def _scope_id(scope: str) -> Any:
    return typer.Option(help=f"{scope} id the tools act on (over HTTP: X-Reverie-{scope}).")


def register(app: typer.Typer, state_of: object) -> None:
    """Add ``memctl mcp`` to ``app``; ``state_of(ctx)`` gives memctl's State."""

    @app.command()
    def mcp(
        ctx: typer.Context,
        token: Annotated[
            str | None,
            typer.Option(
                envvar="MEMCTL_MCP_TOKEN",
                show_envvar=True,
                help="Act as this token (rvt_...); needed once the brain has any.",
            ),
        ] = None,
        user: Annotated[str | None, _scope_id("User")] = None,
        thread: Annotated[str | None, _scope_id("Thread")] = None,
        persona: Annotated[str | None, _scope_id("Persona")] = None,
        organization: Annotated[str | None, _scope_id("Organization")] = None,
    ) -> None:
        """Serve memory to an MCP client over stdio (tools, memory:// resources)."""
        state = state_of(ctx)  # type: ignore[operator]
        given = {"user": user, "thread": thread, "persona": persona, "organization": organization}
        scope_ids = {scope: value for scope, value in given.items() if value}
        serve_stdio(state.settings, state.brain(create=True), token, scope_ids)


def identity_for(brain: mc.Brain, token: str | None) -> mc.Identity:
    """The token's identity; without one, OPEN only while the brain has no working token."""
    if token:
        return auth.authenticate(brain, token)
    if auth.any_active_token(brain):
        raise mc.Unauthorized(
            "this brain has tokens: give memctl mcp one with --token rvt_... (or MEMCTL_MCP_TOKEN)"
        )
    return mc.OPEN


def serve_stdio(
    settings: mc.Settings, brain: mc.Brain, token: str | None, scope_ids: dict[str, str]
) -> None:
    """Serve until the client closes stdin.  Refuses to start without a valid identity."""
    import anyio
    from mcp.server.stdio import stdio_server

    from reverie.api.jobs import enqueue
    from reverie.api.mcp_server import CALLER, Caller, Memory, accept_and_enqueue, build_server
    from reverie.workers import setup, start_embedded

    caller = Caller(identity_for(brain, token).acting_as(scope_ids.values()), scope_ids)
    embedded = not settings.redis_url
    workers = start_embedded(settings) if embedded else setup(settings)
    try:
        if embedded:  # turns an earlier process accepted but did not ingest
            enqueue("reconcile", workers.actors.reconcile.send)
        server = build_server(Memory(brain, settings, workers, accept_and_enqueue(brain, workers)))

        async def run() -> None:
            CALLER.set(caller)
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())

        log.info("serving MCP over stdio as %s; brain %s", caller.identity.name, brain.path)
        anyio.run(run)
    finally:
        workers.stop(timeout_ms=STOP_TIMEOUT_MS)
