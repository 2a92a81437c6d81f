"""One scheduler per brain: building it, its lease, and running it until signalled.

:func:`build_scheduler` returns an APScheduler 3.x scheduler (blocking or
background) carrying the jobs of :mod:`scheduler.jobs`.  Its ``start()``
first takes the brain's ``scheduler`` lease and refuses with
:class:`~memory_core.brain.leases.LeaseHeld` while another live scheduler holds
it; a dead scheduler's lease expires after ``scheduler_lease_ttl_s`` and the
next start takes over.  The lease is renewed every third of its TTL by a job;
a scheduler that finds it taken (it stalled longer than the TTL and another
took over) stops itself.  ``shutdown()`` releases the lease.

Messages sent twice around a takeover are harmless: every actor is
idempotent and the dream pass takes its own lease.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from types import FrameType
from typing import Any

from apscheduler.events import EVENT_SCHEDULER_SHUTDOWN  # type: ignore[import-untyped]
from apscheduler.executors.pool import ThreadPoolExecutor  # type: ignore[import-untyped]
from apscheduler.jobstores.memory import MemoryJobStore  # type: ignore[import-untyped]
from apscheduler.schedulers.background import (  # type: ignore[import-untyped]
    BackgroundScheduler,
)
from apscheduler.schedulers.blocking import BlockingScheduler  # type: ignore[import-untyped]

from memory_core.brain.db import Brain
from memory_core.brain.leases import (
    LeaseHeld,
    acquire_lease,
    lease_holder,
    release_lease,
    renew_lease,
)
from memory_core.runtime import Runtime
from reverie.observability.metrics import Metrics
from reverie.scheduler import stats as stats_
from reverie.scheduler.jobs import Clock, job_table

log = logging.getLogger(__name__)

LEASE_NAME = "scheduler"


class SchedulerLease:
    """This scheduler's hold on the brain's ``scheduler`` lease."""

    def __init__(self, brain: Brain, ttl_s: float, clock: Clock = time.time) -> None:
        self.brain = brain
        self.ttl_s = ttl_s
        self.clock = clock
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

    def acquire(self) -> None:
        """Take the lease or raise LeaseHeld naming who holds it."""
        if acquire_lease(self.brain, LEASE_NAME, self.holder, self.ttl_s, now=self.clock()):
            log.info("scheduler %s holds the lease on %s", self.holder, self.brain.path)
            return
        current = lease_holder(self.brain, LEASE_NAME)
        who = current.holder if current else "another scheduler"
        left = max(0.0, current.expires_at - self.clock()) if current else 0.0
        raise LeaseHeld(
            f"another scheduler ({who}) runs on brain {self.brain.path}; "
            f"stop it, or start this one once its lease expires (in {left:.0f} s)"
        )

    def renew(self) -> bool:
        return renew_lease(self.brain, LEASE_NAME, self.holder, self.ttl_s, now=self.clock())

    def release(self) -> None:
        if release_lease(self.brain, LEASE_NAME, self.holder):
            log.info("scheduler %s released the lease", self.holder)


class _Leased:
    """start() takes the lease first; shutdown() is idempotent and releases it.

    Mixed in before an APScheduler scheduler class.
    """

    lease: SchedulerLease
    stats: stats_.SchedulerStats
    lost_lease: bool
    running: bool  # BaseScheduler's property

    def _init_lease(self, lease: SchedulerLease, stats: stats_.SchedulerStats) -> None:
        self.lease = lease
        self.stats = stats
        self.lost_lease = False
        self._stop_lock = threading.Lock()
        self._stopping = False

    def start(self, paused: bool = False) -> None:
        self.lease.acquire()
        try:
            super().start(paused)  # type: ignore[misc]
        except BaseException:
            self.shutdown(wait=False)
            self.lease.release()
            raise

    def shutdown(self, wait: bool = True) -> None:
        with self._stop_lock:
            if self._stopping or not self.running:
                return
            self._stopping = True
        try:
            super().shutdown(wait)  # type: ignore[misc]
        finally:
            self.lease.release()

    def keep_lease(self) -> bool:
        """The renewal job: renew, or stop this scheduler when the lease was taken.

        Returns False: it sends no message.
        """
        if self.lease.renew():
            return False
        log.error(
            "scheduler %s lost its lease on %s to another scheduler; stopping",
            self.lease.holder,
            self.lease.brain.path,
        )
        self.lost_lease = True
        # From a job thread: waiting would wait for this very job.
        self.shutdown(wait=False)
        return False


class LeasedBackgroundScheduler(_Leased, BackgroundScheduler):  # type: ignore[misc]
    """A BackgroundScheduler that holds the brain's scheduler lease while it runs."""

    def __init__(self, lease: SchedulerLease, stats: stats_.SchedulerStats, **options: Any) -> None:
        super().__init__(**options)
        self._init_lease(lease, stats)


class LeasedBlockingScheduler(_Leased, BlockingScheduler):  # type: ignore[misc]
    """A BlockingScheduler that holds the brain's scheduler lease while it runs."""

    def __init__(self, lease: SchedulerLease, stats: stats_.SchedulerStats, **options: Any) -> None:
        super().__init__(**options)
        self._init_lease(lease, stats)


LeasedScheduler = LeasedBackgroundScheduler | LeasedBlockingScheduler


def build_scheduler(
    runtime: Runtime,
    *,
    background: bool,
    metrics: Metrics | None = None,
    clock: Clock = time.time,
) -> LeasedScheduler:
    """The scheduler for ``runtime``'s brain: dream on cron and when due, reconcile, lease
    renewal, each sending to where the runtime's jobs go.

    Nothing runs (and no lease is taken) until ``start()``.  ``background``
    picks a BackgroundScheduler (its own thread; ``memctl up``) or a
    BlockingScheduler (``start()`` blocks until shutdown).  ``metrics``: this
    process's, fed by every job event (None: metrics off).  ``clock`` (epoch
    seconds) is what this module and the jobs read the time from: the first run
    times, the lease's expiry, whether a pass is due.  (APScheduler 3 reads the
    wall clock itself to fire jobs; tests point it at the same clock.)
    """
    settings, brain = runtime.settings, runtime.brain
    lease = SchedulerLease(brain, settings.scheduler_lease_ttl_s, clock)
    cls = LeasedBackgroundScheduler if background else LeasedBlockingScheduler
    scheduler = cls(
        lease,
        stats_.SchedulerStats(metrics, clock),
        jobstores={"default": MemoryJobStore()},
        executors={"default": ThreadPoolExecutor(max_workers=4)},
        # Defaults for any job added later; every job below sets its own.
        job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": 60},
    )
    scheduler.add_listener(scheduler.stats.on_event, stats_.EVENTS)
    jobs = job_table(settings, runtime.jobs.sender, brain, scheduler.keep_lease, clock)
    if metrics is not None:
        metrics.init_scheduler_jobs(spec.id for spec in jobs)
    now = datetime.fromtimestamp(clock(), UTC)
    for spec in jobs:
        first = {"next_run_time": now} if spec.run_at_start else {}
        scheduler.add_job(
            spec.func,
            spec.trigger,
            id=spec.id,
            name=spec.id,
            coalesce=True,
            max_instances=1,
            misfire_grace_time=spec.misfire_grace_s,
            **first,
        )
    return scheduler


def run_until_signalled(scheduler: LeasedScheduler, on_started: Callable[[], Any]) -> None:
    """``memctl scheduler``: run ``scheduler`` (a background one) until SIGTERM or SIGINT.

    The scheduler runs in its own thread while this one waits for a signal, so
    shutting down (waiting for running jobs, releasing the lease) never runs
    inside a signal handler.  ``on_started`` runs once the lease is held (the
    process's metrics server: one per brain).  Raises LeaseHeld when another
    scheduler holds the brain, or took it over while this one ran.
    """
    wake = threading.Event()

    def _on_signal(signum: int, _frame: FrameType | None) -> None:
        log.info("scheduler: %s received, shutting down", signal.Signals(signum).name)
        wake.set()

    previous = {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        scheduler.add_listener(lambda _event: wake.set(), EVENT_SCHEDULER_SHUTDOWN)
        scheduler.start()
        on_started()
        try:
            wake.wait()
        finally:
            scheduler.shutdown()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if scheduler.lost_lease:
        raise LeaseHeld("another scheduler took over this brain's lease; this one stopped")
