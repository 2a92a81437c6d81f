"""Long-running processes: the embedded all-in-one, the API, worker processes."""

from __future__ import annotations

import logging
import os
import sys

import memory_core as mc

log = logging.getLogger(__name__)


def up(settings: mc.Settings, host: str, port: int) -> None:
    """Embedded: API, worker threads and the scheduler in this process.
    With Redis configured: the API only (workers run as `memctl worker`,
    the scheduler as `memctl scheduler`)."""
    from memory_core.schedule import LeaseHeld
    from reverie.api.app import listen, run
    from reverie.api.auth import check_bind
    from reverie.scheduler import LeasedScheduler, build_scheduler
    from reverie.workers import setup, start_embedded

    check_bind(mc.open_brain(settings), host)  # before starting anything
    sock = listen(host, port)
    embedded = not settings.redis_url
    workers = start_embedded(settings) if embedded else setup(settings)
    scheduler: LeasedScheduler | None = None
    try:
        if embedded:
            brain = mc.open_brain(settings)
            scheduler = build_scheduler(settings, workers.actors, brain, background=True)
            try:
                scheduler.start()
            except LeaseHeld as e:  # another process schedules this brain; serve without
                print(f"reverie: scheduler not started: {e}", file=sys.stderr)
                scheduler = None
        mode = "embedded" if embedded else "api only; workers: memctl worker"
        print(
            f"reverie listening on http://{host}:{port} ({mode}); brain {settings.brain_url}",
            file=sys.stderr,
        )
        run(settings, workers, host, port, sock)
    finally:
        if scheduler is not None:
            scheduler.shutdown()
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
        "reverie.workers.entry",
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
