"""dramatiq broker setup and actors: thin shells over memory_core.

``setup(settings)`` builds the broker (Redis or in-process) and declares the
actors on it; ``start_embedded`` also runs in-process worker threads, for
``memctl up`` without Redis.  Separate worker processes on Redis are run by
``memctl worker`` (the dramatiq CLI over ``workers.entry``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import dramatiq
from dramatiq.brokers.stub import StubBroker

from memory_core.settings import Settings
from reverie.workers.actors import Actors, declare
from reverie.workers.broker import QUEUES, build_broker

log = logging.getLogger(__name__)


@dataclass
class Workers:
    broker: dramatiq.Broker
    actors: Actors
    worker: dramatiq.Worker | None = None

    def stop(self, timeout_ms: int = 10_000) -> None:
        if self.worker is not None:
            self.worker.stop(timeout=timeout_ms)
            self.worker = None
        self.broker.close()

    def join(self, timeout_ms: int = 60_000) -> None:
        """Wait until every queue is empty and every job finished (tests, shutdown)."""
        options: dict[str, object] = {"timeout": timeout_ms}
        if isinstance(self.broker, StubBroker):
            options["fail_fast"] = False
        for _ in range(2):  # a job may enqueue another (ingest -> embed)
            for queue in QUEUES:
                self.broker.join(queue, **options)  # type: ignore[arg-type]
            if self.worker is not None:
                self.worker.join()


def setup(settings: Settings) -> Workers:
    """The broker for these settings with Reverie's actors declared on it."""
    broker = build_broker(settings)
    return Workers(broker, declare(broker, settings))


def start_embedded(settings: Settings, threads: int | None = None) -> Workers:
    """Broker and in-process worker threads: the embedded default."""
    workers = setup(settings)
    workers.worker = dramatiq.Worker(
        workers.broker, worker_threads=threads or settings.worker_threads, worker_timeout=100
    )
    workers.worker.start()
    log.info("embedded workers: %d threads", threads or settings.worker_threads)
    return workers
