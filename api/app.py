"""The HTTP API: validates, writes the durable inbox, enqueues, serves reads.

Handlers are plain functions (FastAPI runs them in its thread pool, since the
brain is blocking SQLite); each parses its input, calls one memory_core
function and maps errors through :mod:`api.errors`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

import memory_core as mc
from api import errors, routes
from api.limits import BodyLimit
from memory_core.group_commit import TurnBatcher
from workers import Workers

log = logging.getLogger(__name__)


def create_app(settings: mc.Settings, workers: Workers) -> FastAPI:
    """The API over ``settings``' brain, enqueueing through ``workers``' broker."""
    app = FastAPI(
        title="Reverie",
        version="0.1.0",
        summary="Long-term memory for AI agents.",
    )
    app.state.settings = settings
    app.state.workers = workers
    app.state.brain = mc.open_brain(settings)
    app.state.batcher = TurnBatcher(app.state.brain, _enqueuer(workers))
    app.router.add_event_handler("shutdown", app.state.batcher.close)
    errors.install(app)
    app.include_router(routes.router)
    app.add_middleware(BodyLimit, max_bytes=settings.api_max_body_bytes)
    return app


def _enqueuer(workers: Workers) -> Callable[[list[str]], bool]:
    """One ingest job per committed batch of turns."""

    def send(turn_ids: list[str]) -> bool:
        workers.actors.ingest_batch.send(turn_ids)
        return True

    return send


def run(
    settings: mc.Settings, workers: Workers, host: str, port: int, **uvicorn_options: Any
) -> None:
    """Serve the API with uvicorn until interrupted."""
    import uvicorn

    uvicorn.run(
        create_app(settings, workers), host=host, port=port, log_level="warning", **uvicorn_options
    )
