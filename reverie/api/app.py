"""The HTTP API: validates, writes the durable inbox, enqueues, serves reads.

Handlers are plain functions (FastAPI runs them in its thread pool, since the
brain is blocking SQLite); each parses its input, calls one memory_core
function and maps errors through :mod:`api.errors`.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import time
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi_offline import FastAPIOffline
from prometheus_client import REGISTRY, CollectorRegistry
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import memory_core as mc
from memory_core.group_commit import TurnBatcher
from memory_core.metrics import HTTP_METHODS, OTHER, BrainCollector, get_metrics, metrics_for
from reverie.api import errors, proposal_routes, routes, token_routes
from reverie.api.auth import is_loopback
from reverie.api.limits import BodyLimit
from reverie.api.mcp_http import mount as mount_mcp
from reverie.api.schemas import document_refusals
from reverie.api.site import SiteGuard
from reverie.workers import Workers
from reverie.workers.broker import Exporter, QueueDepth

UNMATCHED_ROUTE = "unmatched"

log = logging.getLogger(__name__)


def create_app(settings: mc.Settings, workers: Workers, *, host: str | None = None) -> FastAPI:
    """The API over ``settings``' brain, enqueueing through ``workers``' broker.

    ``host`` is the address it will listen on (default ``api_host``): only on
    loopback may it answer without a token while the brain has none.
    """
    app = FastAPIOffline(  # /docs and /redoc from packaged assets: they work offline
        title="Reverie",
        version="0.1.0",
        summary="Long-term memory for AI agents.",
    )
    app.state.settings = settings
    app.state.workers = workers
    app.state.brain = mc.open_brain(settings)
    app.state.open_allowed = is_loopback(host or settings.api_host)
    app.state.batcher = TurnBatcher(app.state.brain, _enqueuer(workers))
    app.router.add_event_handler("shutdown", app.state.batcher.close)
    errors.install(app)
    app.include_router(routes.router)
    app.include_router(token_routes.router)
    app.include_router(proposal_routes.router)
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
    )
    app.state.metrics = metrics_for(settings)
    app.state.metrics_registry = None  # GET /metrics answers 501 while metrics are off
    if app.state.metrics is not None:
        app.add_middleware(RequestMetrics)  # outermost: times refusals too
        app.state.brain_metrics = BrainCollector(
            app.state.brain, _embedder_model(workers), settings.metrics_brain_ttl_s
        )
        app.state.metrics_registry = _metrics_registry(app.state.brain_metrics, workers)
    mount_mcp(app)  # MCP over streamable HTTP at /mcp, with the same bearer tokens
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


def _embedder_model(workers: Workers) -> Callable[[], str | None]:
    """The configured embedder's name, for the missing-embeddings gauge."""

    def embedder_model() -> str | None:
        embedder = workers.actors.runtime.embedder()
        return embedder.name if embedder is not None else None

    return embedder_model


def _metrics_registry(brain_metrics: BrainCollector, workers: Workers) -> CollectorRegistry:
    """What GET /metrics serves: this process's metrics, the brain's gauges, the
    queues' depths and, in embedded mode, dramatiq's."""
    get_metrics()  # every family is exposed from the first scrape
    registry = CollectorRegistry()
    registry.register(REGISTRY)
    registry.register(brain_metrics)
    registry.register(QueueDepth(workers.broker))
    for middleware in workers.broker.middleware:
        if isinstance(middleware, Exporter) and middleware.multiprocess_dir is None:
            registry.register(middleware.registry)
    return registry


class RequestMetrics:
    """Pure ASGI middleware: counts and times requests by route template and status.

    The route label is the matched route's path template, never the raw
    path; a path no route matches is labelled ``unmatched``.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # until the app answers otherwise

        async def recording_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, recording_send)
        finally:
            method = scope["method"] if scope["method"] in HTTP_METHODS else OTHER
            labels = (_route(scope), method, str(status))
            metrics = get_metrics()
            metrics.http_requests.labels(*labels).inc()
            metrics.http_duration.labels(*labels).observe(time.perf_counter() - started)


def _route(scope: Scope) -> str:
    """The path template of the route serving ``scope``."""
    path = getattr(scope.get("route"), "path", None)
    if isinstance(path, str):
        return path
    # Refused before routing (413) or not routed: match the template ourselves.
    app = scope.get("app")
    for candidate in getattr(getattr(app, "router", None), "routes", ()):
        match, child = candidate.matches(scope)
        if match is not Match.NONE:
            path = getattr(child.get("route", candidate), "path", None)
            if isinstance(path, str):
                return path
    return UNMATCHED_ROUTE


def _enqueuer(workers: Workers) -> Callable[[list[str]], bool]:
    """One ingest job per committed batch of turns."""

    def send(turn_ids: list[str]) -> bool:
        workers.actors.ingest_batch.send(turn_ids)
        return True

    return send


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
    settings: mc.Settings,
    workers: Workers,
    host: str,
    port: int,
    sock: socket.socket | None = None,
    **uvicorn_options: Any,
) -> None:
    """Serve the API with uvicorn until interrupted, on ``sock`` when given (bound by
    :func:`listen`).

    The caller checks the address first (:func:`api.auth.check_bind`), before
    it starts workers and a scheduler beside the API.
    """
    import uvicorn

    app = create_app(settings, workers, host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", **uvicorn_options)
    server = uvicorn.Server(config)
    # The interrupt that stops the server is re-raised by uvicorn once it has stopped.
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock] if sock is not None else None)
    if not server.started:
        raise mc.ReverieError("the API did not start (REVERIE_LOG_LEVEL=INFO shows why)")
