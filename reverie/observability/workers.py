"""Metrics of dramatiq worker processes: dramatiq's middleware and the group's exporter.

dramatiq's Prometheus middleware (messages, errors, retries, in-progress,
durations per actor and queue) is added to a worker's broker.  In embedded
mode its samples stay in the process and the API's ``/metrics`` serves them.
In ``memctl worker`` processes they go, with Reverie's own, to
``metrics_multiproc_dir`` (prometheus_client's multiprocess mode), and one
exporter process of the group (:func:`serve_worker_metrics`, started by the
dramatiq CLI as a "fork") serves them on ``metrics_host:metrics_port`` --
loopback by default, where dramatiq's own server binds 0.0.0.0.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

import dramatiq
from dramatiq.middleware import prometheus as dramatiq_prometheus
from prometheus_client import CollectorRegistry, make_wsgi_app, multiprocess, values

from memory_core.settings import Settings, load_settings
from reverie.observability import metrics

log = logging.getLogger(__name__)


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
            if os.environ.get("PROMETHEUS_MULTIPROC_DIR") != str(self.multiprocess_dir):
                enable_multiprocess(self.multiprocess_dir)  # unless the process did already
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
