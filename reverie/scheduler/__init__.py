"""APScheduler process that fires dream passes and reconcile sweeps.

``build_scheduler`` makes the scheduler (``memctl up`` runs it in the
background, ``memctl scheduler`` until signalled: both wired by
``reverie.compose``).  The jobs and why each has the timing options it has
are in :mod:`reverie.scheduler.jobs`.
"""

from reverie.scheduler.service import LeasedScheduler, build_scheduler, run_until_signalled
from reverie.scheduler.stats import JobStats, SchedulerStats

__all__ = [
    "JobStats",
    "LeasedScheduler",
    "SchedulerStats",
    "build_scheduler",
    "run_until_signalled",
]
