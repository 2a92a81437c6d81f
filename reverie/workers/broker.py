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

Metrics: dramatiq's Prometheus middleware (messages, errors, retries,
in-progress, durations per actor and queue) is added to a worker's broker.
In embedded mode its samples stay in this process and the API's /metrics
serves them.  In ``dramatiq reverie.workers.entry`` worker processes they go, with
Reverie's own, to ``metrics_multiproc_dir``, and one exporter process of the
group (:func:`serve_worker_metrics`, started by the dramatiq CLI as a "fork")
serves them on ``metrics_host:metrics_port`` -- loopback by default, where
dramatiq's own server binds 0.0.0.0.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

import dramatiq
from dramatiq.brokers.stub import StubBroker
from dramatiq.middleware import CurrentMessage
from dramatiq.middleware import prometheus as dramatiq_prometheus
from prometheus_client import CollectorRegistry, make_wsgi_app, multiprocess, values
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector
from redis.exceptions import RedisError

from memory_core import metrics
from memory_core.settings import Settings, load_settings

log = logging.getLogger(__name__)

QUEUES = ("ingest", "embed", "maintenance")


def build_broker(settings: Settings, worker_process: bool = False) -> dramatiq.Broker:
    """A broker for these settings, made the process's global broker.

    ``worker_process``: this is a ``dramatiq reverie.workers.entry`` worker process
    (Redis); its metrics go to the group's exporter.  An embedded broker
    always carries the metrics middleware (its process runs the workers).
    """
    broker: dramatiq.Broker
    if settings.redis_url:
        from dramatiq.brokers.redis import RedisBroker

        broker = RedisBroker(  # type: ignore[no-untyped-call]
            url=settings.redis_url,
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


def multiprocess_dir(settings: Settings) -> Path:
    """Where a worker group's processes write their metric samples."""
    if settings.metrics_multiproc_dir is not None:
        return settings.metrics_multiproc_dir
    return Path(tempfile.gettempdir()) / f"reverie-metrics-{settings.metrics_port}"


_PROM_ENV = ("PROMETHEUS_MULTIPROC_DIR", "prometheus_multiproc_dir")


class Exporter(dramatiq_prometheus.Prometheus):
    """dramatiq's Prometheus middleware, bound to ``metrics_host`` and cleaned at start.

    With ``multiprocess_dir`` (worker processes of the dramatiq CLI) samples
    go to that folder, whose dead processes' files are removed at boot, and
    the CLI forks :func:`serve_worker_metrics` to serve them.  Without it
    (embedded) they stay in :attr:`registry`, which the API serves.

    Every declared actor's series exist from the start, at 0, so that a
    dashboard's error or retry panel shows 0 rather than no data.
    """

    def __init__(self, settings: Settings, multiprocess_dir: Path | None) -> None:
        super().__init__()
        self.host = settings.metrics_host
        self.port = settings.metrics_port
        self.multiprocess_dir = multiprocess_dir
        self.registry = CollectorRegistry()

    @property
    def forks(self) -> list[Callable[[], int]]:
        return [serve_worker_metrics] if self.multiprocess_dir is not None else []

    def after_process_boot(self, broker: dramatiq.Broker) -> None:
        if self.multiprocess_dir is not None:
            enable_multiprocess(self.multiprocess_dir)
            # dramatiq points prometheus_client at its module's DB_PATH.
            dramatiq_prometheus.DB_PATH = str(self.multiprocess_dir)
            super().after_process_boot(broker)  # type: ignore[no-untyped-call]
            self._init_actors(broker)
            # Reverie's families too exist from boot, not from this process's first job.
            metrics.get_metrics()
            return
        saved = {name: os.environ.get(name) for name in _PROM_ENV}
        try:
            super().after_process_boot(broker)  # type: ignore[no-untyped-call]
        finally:  # in-process: dramatiq must not switch this process to files
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        for collector in self._collectors():
            self.registry.register(collector)
        self._init_actors(broker)

    def after_declare_actor(self, broker: dramatiq.Broker, actor: dramatiq.Actor[Any, Any]) -> None:
        if hasattr(self, "total_messages"):  # after boot; earlier ones are done at boot
            self._init_series(actor.queue_name, actor.actor_name)

    def _init_actors(self, broker: dramatiq.Broker) -> None:
        for name in broker.get_declared_actors():
            actor = broker.get_actor(name)
            self._init_series(actor.queue_name, actor.actor_name)

    def _init_series(self, queue_name: str, actor_name: str) -> None:
        for collector in self._collectors():
            collector.labels(queue_name, actor_name)

    def _collectors(self) -> list[Any]:
        names = (
            "total_messages",
            "total_errored_messages",
            "total_retried_messages",
            "total_rejected_messages",
            "inprogress_messages",
            "inprogress_delayed_messages",
            "message_durations",
        )
        return [getattr(self, name) for name in names if hasattr(self, name)]

    def after_worker_shutdown(self, broker: dramatiq.Broker, worker: dramatiq.Worker) -> None:
        if self.multiprocess_dir is not None:
            multiprocess.mark_process_dead(  # type: ignore[no-untyped-call]
                os.getpid(), str(self.multiprocess_dir)
            )


class QueueDepth(Collector):
    """``reverie_queue_messages{queue}``: each queue's messages, read at scrape time.

    On Redis that is every message not yet acknowledged: waiting, delayed
    (retries) and in progress; in-process, the waiting ones.  Served by the
    API, which holds a broker anyway; while Redis is unreachable the family is
    left out of the scrape (and /readyz says why).
    """

    def __init__(self, broker: dramatiq.Broker) -> None:
        self.broker = broker

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily(
            "reverie_queue_messages",
            "Messages not yet acknowledged, by queue (waiting, delayed or in progress).",
            labels=["queue"],
        )
        try:
            for queue in QUEUES:
                family.add_metric([queue], queue_depth(self.broker, queue))
        except RedisError as e:
            log.warning("metrics: queue depths unavailable: %s", e)
            return
        yield family

    def describe(self) -> Iterator[Metric]:
        return iter(())  # read at scrape time only


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        log.debug(format, *args)


def serve_worker_metrics() -> int:
    """The worker group's exporter: every worker process's samples, on one port.

    Run by the dramatiq CLI in a process of its own (a middleware "fork"), so
    it builds its settings itself, as the worker processes do.
    """
    settings = load_settings()
    directory = multiprocess_dir(settings)
    directory.mkdir(parents=True, exist_ok=True)
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=str(directory))  # type: ignore[no-untyped-call]
    server = make_server(
        settings.metrics_host,
        settings.metrics_port,
        make_wsgi_app(registry),
        handler_class=_QuietHandler,
    )
    log.info("worker metrics on http://%s:%d/metrics", settings.metrics_host, settings.metrics_port)
    server.serve_forever()
    return 0


def enable_multiprocess(directory: Path) -> None:
    """Put this process's metrics in ``directory`` (prometheus_client's multiprocess mode).

    For processes that share one exporter (the dramatiq CLI's worker
    processes).  Must run before the first metric is made; prometheus_client
    picks its value store from the environment when it is imported, so the
    choice is made again here, whatever imported it first.  Files left by
    processes that no longer run are removed first: without that, counters
    of earlier runs would add up with this run's.
    """
    if metrics.metrics_made():
        raise RuntimeError("enable_multiprocess: metrics were already made in this process")
    directory.mkdir(parents=True, exist_ok=True)
    remove_dead_files(directory)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(directory)
    values.ValueClass = values.get_value_class()  # type: ignore[no-untyped-call]


def remove_dead_files(directory: Path) -> list[Path]:
    """Remove the multiprocess files of processes no longer running; return them."""
    removed = []
    for path in directory.glob("*.db"):
        pid = path.stem.rsplit("_", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
