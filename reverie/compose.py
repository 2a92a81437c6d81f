"""The composition root: each run mode of Reverie wired once, here.

A process builds its :class:`~memory_core.runtime.Runtime` (settings, brain,
embedder, extractor) at its entry point, then the adapters it runs over that
runtime: the queue and its actors (:mod:`reverie.workers`), the HTTP API
(:mod:`reverie.api`), the scheduler (:mod:`reverie.scheduler`), the MCP
server (:mod:`reverie.mcp`), and the process's metrics
(:mod:`reverie.observability`).  The adapters never import one another; only
this module knows them all, and memctl reaches them through it.

Run modes:

============================  =================================================
``memctl up`` (no Redis)      :func:`up`: API, worker threads and scheduler in
                              one process, on the in-process broker
``memctl up`` / ``api``       :func:`up`: the API alone, sending to Redis
``memctl worker``             :func:`worker`: the dramatiq CLI, whose worker
                              processes each call :func:`worker_process`
``memctl scheduler``          :func:`scheduler`: cron and due-checked passes,
                              reconcile sweeps, sending to Redis
``memctl mcp``                :func:`mcp_stdio`: MCP over stdio for one client
one-shot commands             :func:`command`: a runtime over the brain, and
                              :func:`queue_for` when one sends to Redis
============================  =================================================
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memory_core.errors import ConfigError
from memory_core.runtime import Runtime
from memory_core.settings import Settings, load_settings

if TYPE_CHECKING:  # the adapters are imported where a run mode needs them: a one-shot
    # command loads no queue, web or scheduler framework
    import dramatiq
    from fastapi import FastAPI

    from reverie.observability.metrics import Metrics
    from reverie.scheduler import LeasedScheduler
    from reverie.workers import Workers
    from reverie.workers.actors import Actors

log = logging.getLogger(__name__)

# Turns a process that exited left pending are ingested at the next start; on exit,
# an MCP client waits about two seconds before it terminates the process.
MCP_STOP_TIMEOUT_MS = 1_500
# What the dramatiq CLI imports in each worker process of ``memctl worker``.
WORKER_BROKER = f"{__name__}:worker_process"


@dataclass
class Process:
    """A process's runtime, the queue it sends to (and maybe runs), and its metrics."""

    runtime: Runtime
    workers: Workers
    metrics: Metrics | None
    scheduler: LeasedScheduler | None = field(default=None)

    @property
    def settings(self) -> Settings:
        return self.runtime.settings

    @property
    def broker(self) -> dramatiq.Broker:
        """The dramatiq broker the process sends to."""
        return self.workers.broker

    @property
    def actors(self) -> Actors:
        """The actors declared on it."""
        return self.workers.actors

    def join(self, timeout_ms: int = 60_000) -> None:
        """Wait until the in-process workers are idle (tests, shutdown)."""
        self.workers.join(timeout_ms)

    def stop(self, timeout_ms: int = 10_000) -> None:
        """Stop the scheduler, the workers and the runtime, in that order."""
        if self.scheduler is not None:
            self.scheduler.shutdown()
            self.scheduler = None
        self.workers.stop(timeout_ms)
        self.runtime.close()


def process(settings: Settings, *, run_workers: bool, threads: int | None = None) -> Process:
    """A runtime over ``settings``' brain and the queue it sends to: in-process without
    Redis, Redis with it; ``run_workers`` runs the actors on this process's threads."""
    return _with_queue(Runtime.open(settings), run_workers=run_workers, threads=threads)


def _with_queue(runtime: Runtime, *, run_workers: bool, threads: int | None = None) -> Process:
    from reverie.observability.metrics import metrics_for
    from reverie.workers import declare

    metrics = metrics_for(runtime.settings)
    try:
        workers = declare(runtime, metrics)
        if run_workers:
            workers.start(threads or runtime.settings.worker_threads)
    except BaseException:
        runtime.close()
        raise
    return Process(runtime, workers, metrics)


def embedded(settings: Settings, *, threads: int | None = None) -> Process:
    """The embedded default: the in-process queue with worker threads (or, on Redis,
    worker threads of this process consuming from it)."""
    return process(settings, run_workers=True, threads=threads)


def app(served: Process, *, host: str | None = None) -> FastAPI:
    """The HTTP API over a process, with its metrics (and, in-process, dramatiq's)."""
    from reverie.api.app import create_app
    from reverie.observability.workers import Exporter

    collectors = [
        middleware.registry
        for middleware in served.workers.broker.middleware
        if isinstance(middleware, Exporter) and middleware.multiprocess_dir is None
    ]
    return create_app(served.runtime, host=host, metrics=served.metrics, collectors=collectors)


def up(settings: Settings, host: str, port: int) -> None:
    """``memctl up``: API, worker threads and the scheduler in this process; with Redis
    configured, the API only (workers run as ``memctl worker``, the scheduler as
    ``memctl scheduler``)."""
    from reverie.api.app import listen, run
    from reverie.api.auth import check_bind

    embedded_mode = not settings.redis_url
    runtime = Runtime.open(settings)
    try:
        check_bind(runtime.brain, host)  # before starting anything
        sock = listen(host, port)
    except BaseException:
        runtime.close()
        raise
    served = _with_queue(runtime, run_workers=embedded_mode)
    runtime.warm_up()  # searches embed queries; embedded workers embed traces
    try:
        if embedded_mode:
            served.scheduler = _background_scheduler(served)
        mode = "embedded" if embedded_mode else "api only; workers: memctl worker"
        print(
            f"reverie listening on http://{host}:{port} ({mode}); brain {settings.brain_url}",
            file=sys.stderr,
        )
        run(app(served, host=host), host, port, sock)
    finally:
        served.stop()


def _background_scheduler(served: Process) -> LeasedScheduler | None:
    """The scheduler in this process's background, or None when another holds the brain."""
    from memory_core.brain.leases import LeaseHeld
    from reverie.scheduler import build_scheduler

    scheduler = build_scheduler(served.runtime, background=True, metrics=served.metrics)
    try:
        scheduler.start()
    except LeaseHeld as e:  # another process schedules this brain; serve without
        print(f"reverie: scheduler not started: {e}", file=sys.stderr)
        return None
    return scheduler


def api(settings: Settings, host: str, port: int) -> None:
    """``memctl api``: the API alone, sending jobs to Redis."""
    if not settings.redis_url:
        raise ConfigError(
            "memctl api needs REVERIE_REDIS_URL (its workers run elsewhere); "
            "without Redis, memctl up runs API and workers together"
        )
    up(settings, host, port)


def worker(settings: Settings, processes: int, threads: int) -> None:
    """``memctl worker``: replace this process with the dramatiq CLI running worker
    processes, each wired by :func:`worker_process`.

    The dramatiq master does not restart a worker process that dies; it shuts
    the whole group down.  Run it under a supervisor (systemd, a container
    runtime) that restarts it.
    """
    if not settings.redis_url:
        raise ConfigError(
            "memctl worker needs REVERIE_REDIS_URL; without Redis, memctl up runs the workers"
        )
    os.environ["REVERIE_BRAIN_URL"] = settings.brain_url
    args = [
        sys.executable,
        "-m",
        "dramatiq",
        WORKER_BROKER,
        "--processes",
        str(processes),
        "--threads",
        str(threads),
        "--queues",
        "ingest",
        "embed",
        "maintenance",
    ]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, args)


def worker_process() -> None:
    """A ``memctl worker`` process, as the dramatiq CLI starts it: settings from the
    environment, the runtime (waiting out a brain briefly away), the Redis broker (the
    process's dramatiq broker) and the actors on it; metrics to the group's exporter."""
    from memory_core.brain.boot import open_brain_patiently
    from memory_core.logs import configure_logging
    from reverie.observability.metrics import get_metrics
    from reverie.observability.workers import enable_multiprocess, multiprocess_dir
    from reverie.workers import declare

    settings = load_settings()
    configure_logging(settings, keep_handlers=True)
    metrics = None
    if settings.metrics_enabled:  # before any metric exists: its samples go to files
        enable_multiprocess(multiprocess_dir(settings))
        metrics = get_metrics()
    # A brain briefly away (a dropped connection, a restarting server) is waited out:
    # a worker process that exits takes its whole group down.
    runtime = Runtime(settings, open_brain_patiently(settings))
    declare(runtime, metrics, worker_process=True)
    runtime.warm_up()


def scheduler(settings: Settings) -> None:
    """``memctl scheduler``: the scheduler, sending to Redis, until SIGTERM or SIGINT; its
    metrics on ``metrics_host:scheduler_metrics_port``."""
    from reverie.scheduler import build_scheduler, run_until_signalled

    if not settings.redis_url:
        raise ConfigError(
            "memctl scheduler needs REVERIE_REDIS_URL (its jobs run on memctl worker); "
            "without Redis, memctl up runs the scheduler"
        )
    served = process(settings, run_workers=False)
    exporter: list[Any] = []

    def serve_metrics() -> None:  # once the lease is ours: one exporter per brain
        server = scheduler_metrics(settings, served.metrics)
        if server is not None:
            exporter.append(server)

    try:
        built = build_scheduler(served.runtime, background=True, metrics=served.metrics)
        run_until_signalled(built, serve_metrics)
    finally:
        for server in exporter:
            server.shutdown()
        served.stop()


def scheduler_metrics(settings: Settings, metrics: Metrics | None) -> Any:
    """The scheduler process's metrics served on ``metrics_host:scheduler_metrics_port``;
    None (no server) when the port is 0 or metrics are off."""
    from reverie.observability.http import process_registry, serve

    if not settings.scheduler_metrics_port or metrics is None:
        return None
    port = settings.scheduler_metrics_port
    return serve(process_registry(), settings.metrics_host, port, "scheduler")


def mcp_stdio(settings: Settings, token: str | None, scope_ids: Mapping[str, str]) -> None:
    """``memctl mcp``: serve one MCP client over stdio as the token's caller (refused before
    anything starts without a valid one).  Without Redis, in-process workers ingest
    posted turns and embed new traces, as under ``memctl up``; with it, the jobs go to
    Redis for ``memctl worker``."""
    from reverie.mcp.stdio import caller_for, serve

    runtime = Runtime.open(settings)
    try:
        caller = caller_for(runtime.brain, token, scope_ids)
    except BaseException:
        runtime.close()
        raise
    embedded_mode = not settings.redis_url
    served = _with_queue(runtime, run_workers=embedded_mode)
    if embedded_mode:
        runtime.jobs.reconcile()  # turns an earlier process accepted but did not ingest
    try:
        serve(runtime, caller)
    finally:
        served.stop(timeout_ms=MCP_STOP_TIMEOUT_MS)


def command(settings: Settings, *, create: bool = False) -> Runtime:
    """A one-shot command's runtime: its brain (created only with ``create``; reading
    commands never make one) and no queue: work it leaves stays in the brain, where
    reconcile finds it."""
    return Runtime.open(settings, create=create)


def queue_for(runtime: Runtime) -> Workers:
    """Send ``runtime``'s jobs to Redis from now on (a one-shot command's ``--enqueue``,
    reconcile, an import's vectors); stop the returned workers when done."""
    from reverie.workers import declare

    if not runtime.settings.redis_url:
        raise ConfigError("sending jobs to the workers needs REVERIE_REDIS_URL")
    return declare(runtime, None)
