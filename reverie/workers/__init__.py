"""dramatiq broker and actors: thin shells over memory_core.

:func:`declare` builds the broker (Redis or in-process) for a runtime and
declares the actors on it, running against that runtime; :meth:`Workers.start`
runs in-process worker threads (the embedded default).  Worker processes on
Redis are the dramatiq CLI's (``memctl worker``), each wired by
``reverie.compose.worker_process``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import dramatiq
from dramatiq.brokers.stub import StubBroker

from memory_core.jobs import QUEUES, JobSender
from memory_core.runtime import Runtime
from reverie.observability.metrics import Metrics
from reverie.workers.actors import Actors
from reverie.workers.actors import declare as declare_actors
from reverie.workers.broker import build_broker

log = logging.getLogger(__name__)


@dataclass
class Workers:
    """A broker, the actors declared on it and, when this process runs them, its worker."""

    broker: dramatiq.Broker
    actors: Actors
    worker: dramatiq.Worker | None = None

    def sender(self) -> JobSender:
        """Where a runtime's jobs go: these actors' queues."""
        return self.actors.sender()

    def start(self, threads: int) -> None:
        """Run the actors on ``threads`` worker threads of this process."""
        self.worker = dramatiq.Worker(self.broker, worker_threads=threads, worker_timeout=100)
        self.worker.start()
        log.info("in-process workers: %d threads", threads)

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


def declare(runtime: Runtime, metrics: Metrics | None, *, worker_process: bool = False) -> Workers:
    """The broker for ``runtime``'s settings with Reverie's actors declared on it, running
    against ``runtime``; the runtime's jobs go to them from now on.

    ``worker_process``: this is a ``memctl worker`` process (its metrics go to the
    group's exporter).
    """
    broker = build_broker(runtime.settings, worker_process=worker_process)
    workers = Workers(broker, declare_actors(broker, runtime, metrics))
    runtime.send_jobs_to(workers.sender())
    return workers
