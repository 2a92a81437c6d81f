"""Per-job counters, fed by APScheduler's job events, also exported as metrics.

Each event also feeds ``reverie_scheduler_job_runs_total{job,outcome}``,
``reverie_scheduler_messages_sent_total{job}`` and
``reverie_scheduler_job_last_run_timestamp_seconds{job}`` (job ids come from
the fixed job table, so the label is bounded).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from apscheduler.events import (  # type: ignore[import-untyped]
    EVENT_JOB_ERROR,
    EVENT_JOB_EXECUTED,
    EVENT_JOB_MAX_INSTANCES,
    EVENT_JOB_MISSED,
)

from reverie.observability.metrics import Metrics

EVENTS = EVENT_JOB_EXECUTED | EVENT_JOB_ERROR | EVENT_JOB_MISSED | EVENT_JOB_MAX_INSTANCES


_OUTCOMES = {
    EVENT_JOB_EXECUTED: "ok",
    EVENT_JOB_ERROR: "failed",
    EVENT_JOB_MISSED: "missed",
    EVENT_JOB_MAX_INSTANCES: "skipped",
}


@dataclass
class JobStats:
    """What one job did since the scheduler started."""

    fired: int = 0  # runs that finished (EVENT_JOB_EXECUTED)
    sent: int = 0  # of those, runs that enqueued a message (the job returned True)
    failed: int = 0  # runs that raised (EVENT_JOB_ERROR)
    missed: int = 0  # runs later than misfire_grace_time, not run (EVENT_JOB_MISSED)
    skipped: int = 0  # runs not started: the previous one still ran (EVENT_JOB_MAX_INSTANCES)
    last_run_at: float | None = None  # epoch seconds when the last run (ok or failed) ended
    last_error: str | None = None


class SchedulerStats:
    """Counters for each job, safe to update from the scheduler's threads.

    ``metrics``: where each event is also counted (None: metrics are off).
    """

    def __init__(
        self, metrics: Metrics | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.metrics = metrics
        self.clock = clock
        self._lock = threading.Lock()
        self._jobs: dict[str, JobStats] = {}

    def on_event(self, event: Any) -> None:
        """APScheduler listener for :data:`EVENTS`."""
        with self._lock:
            stats = self._jobs.setdefault(event.job_id, JobStats())
            if event.code == EVENT_JOB_EXECUTED:
                stats.fired += 1
                stats.sent += 1 if event.retval is True else 0
                stats.last_run_at = self.clock()
            elif event.code == EVENT_JOB_ERROR:
                stats.failed += 1
                stats.last_run_at = self.clock()
                stats.last_error = repr(event.exception)
            elif event.code == EVENT_JOB_MISSED:
                stats.missed += 1
            elif event.code == EVENT_JOB_MAX_INSTANCES:
                stats.skipped += 1
        outcome = _OUTCOMES.get(event.code)
        if outcome is not None and self.metrics is not None:
            sent = event.code == EVENT_JOB_EXECUTED and event.retval is True
            self.metrics.observe_scheduler_event(event.job_id, outcome, sent=sent)

    def snapshot(self) -> dict[str, JobStats]:
        """A consistent copy of every job's counters, by job id."""
        with self._lock:
            return {job_id: replace(stats) for job_id, stats in self._jobs.items()}
