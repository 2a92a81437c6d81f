"""What a successful call leaves to the workers, queued the same way by every adapter.

Enqueueing never fails a call: the brain already holds the work, and
reconcile re-enqueues what the queue did not get.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import memory_core as mc
from memory_core import feedback
from reverie.workers import Workers

log = logging.getLogger(__name__)


def enqueue(what: str, send: Callable[..., Any], *args: Any) -> bool:
    """Send one message; False (logged) when the broker is down."""
    try:
        send(*args)
        return True
    except Exception as e:  # broker down: reconcile covers it
        log.warning("could not enqueue %s: %s", what, e)
        return False


def embed(workers: Workers, settings: mc.Settings, trace_ids: list[str]) -> None:
    """Queue vectors for traces whose content is new."""
    if settings.embedder != "none" and trace_ids:
        enqueue("embed", workers.actors.send_embed, trace_ids, settings.embed_batch_size)


def retrieved(workers: Workers, trace_ids: list[str]) -> None:
    """Queue the retrieval feedback of a search that returned ``trace_ids``."""
    if trace_ids:
        send = workers.actors.record_retrieval.send
        enqueue("record_retrieval", send, feedback.new_event_id(), trace_ids, time.time())


def after_tool(
    workers: Workers,
    settings: mc.Settings,
    name: str,
    arguments: dict[str, Any],
    result: dict[str, Any],
) -> None:
    """Queue what a successful memory tool call leaves to the workers."""
    if name == "memory_add":
        embed(workers, settings, [result["traceId"]])
    elif name == "memory_update" and "content" in arguments and result["updated"]:
        embed(workers, settings, [arguments["traceId"]])
    elif name == "memory_merge":
        embed(workers, settings, [result["survivorId"]])
    elif name == "memory_search":
        retrieved(workers, [r["id"] for r in result["results"]])
