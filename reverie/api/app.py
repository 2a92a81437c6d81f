"""The HTTP API: validates, writes the durable inbox, enqueues, serves reads.

Handlers are plain functions (FastAPI runs them in its thread pool, since the
brain is blocking SQLite); each parses its input, calls one memory_core
function and maps errors through :mod:`reverie.api.errors`.  The app is built
over a process's runtime (``reverie.compose`` builds both): its follow-up
work goes wherever the runtime's jobs go, and the API knows no queue.
"""

from __future__ import annotations

import contextlib
import logging
import socket
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from fastapi import Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi_offline import FastAPIOffline
from prometheus_client.registry import Collector

import memory_core as mc
from memory_core.runtime import Runtime
from reverie.api import console, dream_routes, errors, proposal_routes, routes, token_routes
from reverie.api.auth import is_loopback, token_works
from reverie.api.limits import BodyLimit, wellformed_url
from reverie.api.mcp_http import mount as mount_mcp
from reverie.api.schemas import document_refusals
from reverie.api.site import SiteGuard
from reverie.observability.brain import BrainCollector
from reverie.observability.http import RequestMetrics, process_registry
from reverie.observability.metrics import Metrics
from reverie.observability.queues import QueueDepth

log = logging.getLogger(__name__)


def create_app(
    runtime: Runtime,
    *,
    host: str | None = None,
    metrics: Metrics | None = None,
    collectors: Sequence[Collector] = (),
) -> FastAPI:
    """The API over ``runtime``'s brain, queueing its follow-up work through the runtime.

    ``host`` is the address it will listen on (default ``api_host``): only on
    loopback may it answer without a token while the brain has none.
    ``metrics``: this process's (None: metrics off, ``GET /metrics`` answers
    501); ``collectors``: more of the process's own for ``/metrics`` to serve.
    """
    settings = runtime.settings
    app = FastAPIOffline(  # /docs and /redoc from packaged assets: they work offline
        title="Reverie",
        version="0.1.0",
        summary="Long-term memory for AI agents.",
        dependencies=[Depends(wellformed_url)],
    )
    app.state.runtime = runtime
    app.state.settings = settings
    app.state.brain = runtime.brain
    app.state.open_allowed = is_loopback(host or settings.api_host)
    errors.install(app)
    app.include_router(routes.router)
    app.include_router(token_routes.router)
    app.include_router(proposal_routes.router)
    app.include_router(dream_routes.router)
    app.add_middleware(BodyLimit, max_bytes=settings.api_max_body_bytes)
    if settings.api_cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.api_cors_origins,
            allow_methods=["*"],
            allow_headers=["*"],
        )
    app.add_middleware(
        SiteGuard,
        loopback=app.state.open_allowed,
        origins=frozenset(settings.api_cors_origins),
        authenticates=partial(token_works, runtime.brain),
    )
    app.state.metrics = metrics
    app.state.metrics_registry = None  # GET /metrics answers 501 while metrics are off
    if metrics is not None:
        app.add_middleware(RequestMetrics, metrics=metrics)  # outermost: times refusals too
        app.state.brain_metrics = BrainCollector(
            runtime.brain, _embedder_model(runtime), settings.metrics_brain_ttl_s
        )
        app.state.metrics_registry = process_registry(
            app.state.brain_metrics, QueueDepth(runtime.jobs), *collectors
        )
    console.mount(app)  # the pages at /console, over the same routes and tokens
    mount_mcp(app, runtime)  # MCP over streamable HTTP at /mcp, with the same bearer tokens
    app.openapi = _documented(app)  # type: ignore[method-assign]
    return app


def _documented(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """FastAPI's OpenAPI document with every refusal the API answers (api.schemas)."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document_refusals(generate())
        return app.openapi_schema or {}

    return openapi


def _embedder_model(runtime: Runtime) -> Callable[[], str | None]:
    """The configured embedder's name, for the missing-embeddings gauge."""

    def embedder_model() -> str | None:
        embedder = runtime.embedder()
        return embedder.name if embedder is not None else None

    return embedder_model


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port``, so a taken address is said before anything starts
    (uvicorn would bind it only once serving, after "listening" was printed)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
    except OSError as e:
        sock.close()
        raise mc.AddressUnavailable(f"cannot listen on {host}:{port}: {e.strerror or e}") from e
    return sock


def run(
    app: FastAPI,
    host: str,
    port: int,
    sock: socket.socket | None = None,
    **uvicorn_options: Any,
) -> None:
    """Serve ``app`` with uvicorn until interrupted, on ``sock`` when given (bound by
    :func:`listen`).

    The caller checks the address first (:func:`reverie.api.auth.check_bind`),
    before it starts workers and a scheduler beside the API.
    """
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", **uvicorn_options)
    server = uvicorn.Server(config)
    # The interrupt that stops the server is re-raised by uvicorn once it has stopped.
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock] if sock is not None else None)
    if not server.started:
        raise mc.ReverieError("the API did not start (REVERIE_LOG_LEVEL=INFO shows why)")
