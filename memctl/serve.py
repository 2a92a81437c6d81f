"""Long-running processes: the embedded all-in-one, the API, worker processes."""

from __future__ import annotations

import logging
import os
import sys
import threading

import memory_core as mc

log = logging.getLogger(__name__)


def _reconcile_loop(send: object, interval: float, stop: threading.Event) -> None:
    """Send a reconcile job now and every ``interval`` seconds until stopped."""
    while not stop.is_set():
        try:
            send()  # type: ignore[operator]
        except Exception:  # a missed sweep is retried next interval
            log.exception("could not enqueue reconcile")
        stop.wait(interval)


def up(settings: mc.Settings, host: str, port: int) -> None:
    """Embedded: API, worker threads and the reconcile loop in this process.
    With Redis configured: the API only (workers run as `memctl worker`)."""
    from api.app import run
    from workers import setup, start_embedded

    embedded = not settings.redis_url
    workers = start_embedded(settings) if embedded else setup(settings)
    stop = threading.Event()
    if embedded:
        threading.Thread(
            target=_reconcile_loop,
            args=(workers.actors.reconcile.send, settings.reconcile_after_s, stop),
            name="reconcile-loop",
            daemon=True,
        ).start()
    mode = "embedded" if embedded else "api only; workers: memctl worker"
    print(
        f"reverie listening on http://{host}:{port} ({mode}); brain {settings.brain_url}",
        file=sys.stderr,
    )
    try:
        run(settings, workers, host, port)
    finally:
        stop.set()
        workers.stop()


def api(settings: mc.Settings, host: str, port: int) -> None:
    """The API alone, sending jobs to Redis."""
    if not settings.redis_url:
        raise mc.ConfigError(
            "memctl api needs REVERIE_REDIS_URL (its workers run elsewhere); "
            "without Redis, memctl up runs API and workers together"
        )
    up(settings, host, port)


def worker(settings: mc.Settings, processes: int, threads: int) -> None:
    """Replace this process with the dramatiq CLI running worker processes.

    The dramatiq master does not restart a worker process that dies; it shuts
    the whole group down.  Run it under a supervisor (systemd, a container
    runtime) that restarts it.
    """
    if not settings.redis_url:
        raise mc.ConfigError(
            "memctl worker needs REVERIE_REDIS_URL; without Redis, memctl up runs the workers"
        )
    os.environ["REVERIE_BRAIN_URL"] = settings.brain_url
    args = [
        sys.executable,
        "-m",
        "dramatiq",
        "workers.entry",
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
