"""Per-job counters, fed by APScheduler's job events, read by metrics later."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace
from typing import Any

from apscheduler.events import (  # type: ignore[import-untyped]
    EVENT_JOB_ERROR,
    EVENT_JOB_EXECUTED,
    EVENT_JOB_MAX_INSTANCES,
    EVENT_JOB_MISSED,
)

EVENTS = EVENT_JOB_EXECUTED | EVENT_JOB_ERROR | EVENT_JOB_MISSED | EVENT_JOB_MAX_INSTANCES


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
    """Counters for each job, safe to update from the scheduler's threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[str, JobStats] = {}

    def on_event(self, event: Any) -> None:
        """APScheduler listener for :data:`EVENTS`."""
        with self._lock:
            stats = self._jobs.setdefault(event.job_id, JobStats())
            if event.code == EVENT_JOB_EXECUTED:
                stats.fired += 1
                stats.sent += 1 if event.retval is True else 0
                stats.last_run_at = time.time()
            elif event.code == EVENT_JOB_ERROR:
                stats.failed += 1
                stats.last_run_at = time.time()
                stats.last_error = repr(event.exception)
            elif event.code == EVENT_JOB_MISSED:
                stats.missed += 1
            elif event.code == EVENT_JOB_MAX_INSTANCES:
                stats.skipped += 1

    def snapshot(self) -> dict[str, JobStats]:
        """A consistent copy of every job's counters, by job id."""
        with self._lock:
            return {job_id: replace(stats) for job_id, stats in self._jobs.items()}
