"""APScheduler process that fires dream passes and reconcile sweeps.

``build_scheduler`` makes the scheduler (``memctl up`` runs it in the
background); ``main`` is ``memctl scheduler``.  The jobs and why each has the
timing options it has are in :mod:`scheduler.jobs`.
"""

from reverie.scheduler.jobs import SchedulerActors
from reverie.scheduler.service import LeasedScheduler, build_scheduler, main
from reverie.scheduler.stats import JobStats, SchedulerStats

__all__ = [
    "JobStats",
    "LeasedScheduler",
    "SchedulerActors",
    "SchedulerStats",
    "build_scheduler",
    "main",
]
