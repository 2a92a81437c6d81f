"""The jobs table: what the scheduler fires, when, and how it treats lateness.

Each job is a thin adapter: it sends one message (the work runs on the
workers) or asks memory_core one question.  Every job returns True when it
enqueued a message, which the counters record as ``sent``.

Timing options, set on every job on purpose (APScheduler 3.x semantics):

- ``coalesce=True``: after downtime (a suspended process or host, a long
  stall) a job runs once, not once per missed run time.  Measured by the
  issue's author: with ``coalesce=False`` five seconds of downtime fired every
  missed run at once.  ``max_instances`` does not prevent that burst, because
  one instance runs all the missed run times in a row.
- ``max_instances=1``: a run still going (the due check waiting on a busy
  brain) is never joined by a second one beside it; the skip is counted.
- ``misfire_grace_time``: how late a run may still start; a later one is
  counted as missed and not run.  Interval jobs get one interval (a coalesced
  catch-up run is at most one interval late, so it still runs once); the cron
  pass gets ``dream_misfire_grace_s`` (a machine off at 03:30 and back at noon
  skips that night's pass instead of starting a heavy pass in the working day;
  the due check still catches a brain that needs one); the lease renewal has
  no limit (a late renewal still either renews or learns the lease is lost).

The jobs live in APScheduler's in-memory job store: the schedule is derived
from settings, so there is nothing to persist, and a persistent store would
remember past run times and replay missed passes after a restart.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from apscheduler.triggers.cron import CronTrigger  # type: ignore[import-untyped]
from apscheduler.triggers.interval import IntervalTrigger  # type: ignore[import-untyped]

from memory_core.brain.db import Brain
from memory_core.consolidation.due import is_due
from memory_core.errors import ConfigError
from memory_core.jobs import JobSender
from memory_core.settings import Settings

log = logging.getLogger(__name__)

# Epoch seconds now: the wall clock, or a test's.
Clock = Callable[[], float]

DREAM_CRON = "dream_cron"
DREAM_DUE = "dream_due"
RECONCILE = "reconcile"
LEASE = "lease"


@dataclass(frozen=True)
class JobSpec:
    """One row of the jobs table."""

    id: str
    func: Callable[[], bool]
    trigger: Any  # an APScheduler trigger
    misfire_grace_s: int | None
    run_at_start: bool


def send_dream_cron(jobs: JobSender) -> bool:
    log.info("scheduler: dream pass requested (cron)")
    jobs.dream("cron", None)
    return True


def check_dream_due(jobs: JobSender, brain: Brain, settings: Settings, clock: Clock) -> bool:
    check = is_due(brain, settings, now=clock())
    if not check.due:
        log.debug("scheduler: %s", check.reason)
        return False
    log.info("scheduler: dream pass requested (%s)", check.reason)
    jobs.dream("due", None)
    return True


def send_reconcile(jobs: JobSender) -> bool:
    log.info("scheduler: reconcile sweep requested")
    jobs.reconcile()
    return True


def _every(seconds: float, clock: Clock) -> Any:
    """An interval trigger whose first run is one interval from now, by ``clock``."""
    first = datetime.fromtimestamp(clock(), UTC) + timedelta(seconds=seconds)
    return IntervalTrigger(seconds=seconds, start_date=first)


def _grace(interval_s: float) -> int:
    return max(1, math.ceil(interval_s))


def cron_trigger(expression: str) -> Any:
    """The trigger for a crontab line (local time); a bad line is a ConfigError."""
    try:
        return CronTrigger.from_crontab(expression)
    except ValueError as e:
        raise ConfigError(f"invalid setting dream_cron {expression!r}: {e}") from e


def job_table(
    settings: Settings,
    jobs: JobSender,
    brain: Brain,
    keep_lease: Callable[[], bool],
    clock: Clock = time.time,
) -> list[JobSpec]:
    """The scheduler's jobs for these settings, sending to ``jobs`` (a failed send fails
    the run, which is counted; the next run tries again)."""
    due_every_s = settings.dream_due_check_minutes * 60
    renew_every_s = settings.scheduler_lease_ttl_s / 3
    return [
        JobSpec(
            DREAM_CRON,
            lambda: send_dream_cron(jobs),
            cron_trigger(settings.dream_cron),
            settings.dream_misfire_grace_s,
            run_at_start=False,
        ),
        # Also at start: a restarted scheduler does not wait one interval to
        # notice a brain that is already due.
        JobSpec(
            DREAM_DUE,
            lambda: check_dream_due(jobs, brain, settings, clock),
            _every(due_every_s, clock),
            _grace(due_every_s),
            run_at_start=True,
        ),
        # Also at start: one sweep picks up what arrived while nothing swept.
        JobSpec(
            RECONCILE,
            lambda: send_reconcile(jobs),
            _every(settings.reconcile_every_s, clock),
            _grace(settings.reconcile_every_s),
            run_at_start=True,
        ),
        JobSpec(
            LEASE,
            keep_lease,
            _every(renew_every_s, clock),
            None,
            run_at_start=False,
        ),
    ]
