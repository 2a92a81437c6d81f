"""The dramatiq broker: Redis when REVERIE_REDIS_URL is set, in-process otherwise.

Import this (through :func:`workers.setup`) before anything sends a message.

Redis redelivery: dramatiq requeues a dead worker's unacknowledged messages
during "maintenance", which each broker call runs with a chance of
``maintenance_chance`` per million, for workers silent for
``heartbeat_timeout`` ms.  dramatiq's defaults (60 s, 0.1%) leave a job of a
worker killed with -9 waiting 7 to 17 minutes.  Reverie's defaults (15 s, 5%)
bring that to well under a minute while a worker stalled by a long SQLite
lock wait (its other consumer threads keep heartbeating) is not declared dead.
Redelivery can duplicate a job; every actor is idempotent, so that is harmless.
"""

from __future__ import annotations

import logging

import dramatiq
from dramatiq.brokers.stub import StubBroker

from memory_core.settings import Settings

log = logging.getLogger(__name__)

QUEUES = ("ingest", "embed", "maintenance")


def build_broker(settings: Settings) -> dramatiq.Broker:
    """A broker for these settings, made the process's global broker."""
    broker: dramatiq.Broker
    if settings.redis_url:
        from dramatiq.brokers.redis import RedisBroker

        broker = RedisBroker(  # type: ignore[no-untyped-call]
            url=settings.redis_url,
            heartbeat_timeout=settings.redis_heartbeat_timeout_ms,
            maintenance_chance=settings.redis_maintenance_chance,
        )
        log.info("broker: redis %s", _redacted(settings.redis_url))
    else:
        broker = StubBroker()
        broker.emit_after("process_boot")
        log.info("broker: embedded (in-process)")
    for queue in QUEUES:
        broker.declare_queue(queue)
    dramatiq.set_broker(broker)
    return broker


def _redacted(url: str) -> str:
    """The URL without its password, for logs."""
    if "@" not in url:
        return url
    scheme, rest = url.split("://", 1) if "://" in url else ("", url)
    return f"{scheme}://***@{rest.split('@', 1)[1]}"


def queue_depth(broker: dramatiq.Broker, queue: str) -> int:
    """Messages waiting in ``queue`` (not counting delayed retries)."""
    if isinstance(broker, StubBroker):
        return int(broker.queues[queue].qsize())
    return int(broker.do_qsize(queue))  # type: ignore[attr-defined]
