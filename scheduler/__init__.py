"""APScheduler process that fires dream passes and reconcile sweeps.

``build_scheduler`` makes the scheduler (``memctl up`` runs it in the
background); ``main`` is ``memctl scheduler``.  The jobs and why each has the
timing options it has are in :mod:`scheduler.jobs`.
"""

from scheduler.jobs import SchedulerActors
from scheduler.service import LeasedScheduler, build_scheduler, main
from scheduler.stats import JobStats, SchedulerStats

__all__ = [
    "JobStats",
    "LeasedScheduler",
    "SchedulerActors",
    "SchedulerStats",
    "build_scheduler",
    "main",
]
