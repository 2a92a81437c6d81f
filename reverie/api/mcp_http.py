"""MCP over streamable HTTP at ``/mcp`` on the API.

Every request is authenticated like any other route -- the bearer token,
through :func:`memory_core.auth.identify` -- before the MCP layer sees it: a
missing, malformed, unknown or revoked token answers 401 (with
``WWW-Authenticate``) and nothing is processed.  The caller, and the scope ids
of the ``X-Reverie-User``/``-Thread``/``-Persona``/``-Organization`` headers,
then reach the tool and resource handlers through :data:`reverie.mcp.server.CALLER`.

The server is stateless (every request stands alone; nothing to resume) and
answers JSON.  Its session manager lives for one run of the app's lifespan.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import Any

import anyio.to_thread
from fastapi import FastAPI
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

import memory_core as mc
from memory_core import auth
from memory_core.runtime import Runtime
from reverie.api.auth import scope_ids
from reverie.mcp.server import CALLER, Caller, Memory, build_server

log = logging.getLogger(__name__)

PATH = "/mcp"
# A server bound to loopback may run open: refuse requests a DNS-rebinding page could send.
_LOOPBACK_ONLY = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
    allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
)


class McpEndpoint:
    """The ASGI app at /mcp: authenticate, then hand the request to the MCP session manager."""

    def __init__(self, server: Server[Any], brain: mc.Brain, *, open_allowed: bool) -> None:
        self.server = server
        self.brain = brain
        self.open_allowed = open_allowed
        self.manager: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run a session manager (its task group) for as long as the app runs."""
        manager = StreamableHTTPSessionManager(
            self.server,
            json_response=True,
            stateless=True,
            security_settings=_LOOPBACK_ONLY if self.open_allowed else None,
        )
        async with manager.run():
            self.manager = manager
            try:
                yield
            finally:
                self.manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        named = scope_ids(headers)
        identify = partial(
            auth.identify,
            self.brain,
            headers.get("authorization"),
            open_allowed=self.open_allowed,
        )
        # Unauthorized: 401, Forbidden: 403 (api.errors)
        identity = (await anyio.to_thread.run_sync(identify)).acting_as(named)
        if self.manager is None:
            response = JSONResponse(
                {"error": {"code": "unavailable", "message": "MCP is not running"}},
                status_code=503,
            )
            await response(scope, receive, send)
            return
        token = CALLER.set(Caller(identity, named))
        try:
            await self.manager.handle_request(scope, receive, send)
        finally:
            CALLER.reset(token)


def mount(app: FastAPI, runtime: Runtime) -> McpEndpoint:
    """Serve MCP at /mcp on the API ``create_app`` built, over its runtime.

    Turns go through the runtime's group commit, as POST /v1/turns does; the
    session manager runs inside the app's lifespan.
    """
    endpoint = McpEndpoint(
        build_server(Memory(runtime)), runtime.brain, open_allowed=app.state.open_allowed
    )
    # POST only: stateless, the server never opens a stream of its own (GET answers 405).
    app.router.routes.append(Route(PATH, endpoint, methods=["POST"], include_in_schema=False))
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(target: Any) -> AsyncIterator[Any]:
        context: AbstractAsyncContextManager[Any] = inner(target)
        async with context as state, endpoint.running():
            yield state

    app.router.lifespan_context = lifespan
    return endpoint
