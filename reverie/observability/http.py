"""Metrics over HTTP: the API's request counters, and a process's own exposition server."""

from __future__ import annotations

import logging
import time
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reverie.observability.metrics import HTTP_METHODS, OTHER, Metrics

log = logging.getLogger(__name__)

UNMATCHED_ROUTE = "unmatched"


class RequestMetrics:
    """Pure ASGI middleware: counts and times requests by route template and status.

    The route label is the matched route's path template, never the raw
    path; a path no route matches is labelled ``unmatched``.
    """

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

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
            self.metrics.http_requests.labels(*labels).inc()
            self.metrics.http_duration.labels(*labels).observe(time.perf_counter() - started)


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


def process_registry(*collectors: Any) -> CollectorRegistry:
    """What a process serves: prometheus_client's process-wide registry (Reverie's
    metrics, the process and platform collectors) and ``collectors`` (registries or
    collectors of its own: the brain's gauges, queue depths, dramatiq's in-process
    samples)."""
    registry = CollectorRegistry()
    registry.register(REGISTRY)
    for collector in collectors:
        registry.register(collector)
    return registry


def serve(registry: CollectorRegistry, host: str, port: int, what: str) -> Any:
    """Serve ``registry`` on ``host:port`` in a thread of its own; returns the server."""
    from prometheus_client import start_http_server

    server, _thread = start_http_server(port, addr=host, registry=registry)
    log.info("%s metrics on http://%s:%d/metrics", what, host, port)
    return server
