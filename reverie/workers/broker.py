"""The dramatiq broker: Redis when REVERIE_REDIS_URL is set, in-process otherwise.

Redis redelivery: dramatiq requeues a dead worker's unacknowledged messages
during "maintenance", which each broker call runs with a chance of
``maintenance_chance`` per million, for workers silent for
``heartbeat_timeout`` ms.  dramatiq's defaults (60 s, 0.1%) leave a job of a
worker killed with -9 waiting 7 to 17 minutes.  Reverie's defaults (15 s, 5%)
bring that to well under a minute while a worker stalled by a long SQLite
lock wait (its other consumer threads keep heartbeating) is not declared dead.
Redelivery can duplicate a job; every actor is idempotent, so that is harmless.

Metrics: a broker that runs workers carries dramatiq's Prometheus middleware
(:class:`reverie.observability.workers.Exporter`): embedded, its samples stay
in the process for the API's /metrics; in ``memctl worker`` processes they go
to the group's exporter.
"""

from __future__ import annotations

import logging
from collections import defaultdict, deque
from typing import Any

import dramatiq
from dramatiq.brokers.stub import StubBroker
from dramatiq.middleware import CurrentMessage

from memory_core.jobs import QUEUES
from memory_core.settings import Settings
from reverie.observability.workers import Exporter, multiprocess_dir

log = logging.getLogger(__name__)
REDIS_SOCKET_TIMEOUT_S = 30.0  # a Redis that answers nothing for this long is down


def build_broker(settings: Settings, worker_process: bool = False) -> dramatiq.Broker:
    """A broker for these settings, made the process's global broker.

    ``worker_process``: this is a ``memctl worker`` process (Redis); its metrics go
    to the group's exporter.  An embedded broker
    always carries the metrics middleware (its process runs the workers).
    """
    broker: dramatiq.Broker
    if settings.redis_url:
        import redis
        from dramatiq.brokers.redis import RedisBroker

        # redis-py answers a command that takes over 5 s with an error by default;
        # a busy machine's Redis may, and a send given up leaves its turn to reconcile.
        client = redis.Redis.from_url(
            settings.redis_url,
            socket_timeout=REDIS_SOCKET_TIMEOUT_S,
            socket_connect_timeout=REDIS_SOCKET_TIMEOUT_S,
        )
        broker = RedisBroker(  # type: ignore[no-untyped-call]
            client=client,
            heartbeat_timeout=settings.redis_heartbeat_timeout_ms,
            maintenance_chance=settings.redis_maintenance_chance,
        )
        log.info("broker: redis %s", _redacted(settings.redis_url))
        if worker_process and settings.metrics_enabled:
            broker.add_middleware(Exporter(settings, multiprocess_dir(settings)))
    else:
        broker = EmbeddedBroker()
        if settings.metrics_enabled:
            broker.add_middleware(Exporter(settings, multiprocess_dir=None))
        broker.emit_after("process_boot")
        log.info("broker: embedded (in-process)")
    broker.add_middleware(CurrentMessage())  # the job id in log lines
    for queue in QUEUES:
        broker.declare_queue(queue)
    dramatiq.set_broker(broker)
    return broker


class EmbeddedBroker(StubBroker):
    """dramatiq's in-process broker, for the embedded default, with its dead letters
    bounded: it keeps the newest :data:`DEAD_LETTERS` a queue, not every message that
    ever failed (a failed turn is recorded in the brain's inbox, which reconcile
    retries from, not here)."""

    def __init__(self) -> None:
        super().__init__()
        bounded: defaultdict[str, Any] = defaultdict(lambda: deque(maxlen=DEAD_LETTERS))
        self.dead_letters_by_queue = bounded  # its consumers only append to each


DEAD_LETTERS = 1_000


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
