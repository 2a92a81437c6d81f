"""When a dream pass is due: time since the last pass and new traces since it.

Pure functions over the brain, with ``now`` injectable so tests need no
clock.  The scheduler asks :func:`is_due` every few minutes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sqlalchemy import text

from memory_core.brain.db import Brain
from memory_core.brain.leases import PASS_LEASE, lease_row
from memory_core.settings import Settings


@dataclass(frozen=True)
class PassInfo:
    """One finished dream pass, as recorded in ``consolidation_log``."""

    id: str
    started_at: float
    finished_at: float
    status: str


@dataclass(frozen=True)
class DueCheck:
    """Whether a dream pass is due, and the numbers that decided it."""

    due: bool
    reason: str
    hours_since: float | None
    new_traces: int


def last_pass(brain: Brain) -> PassInfo | None:
    """The most recently finished pass that was not a dry run, or None.

    Whatever its status: a pass that failed still counts, so a pass that keeps
    failing is retried by the cron schedule, not every few minutes by the due check.
    """
    with brain.read() as conn:
        row = conn.execute(
            text(
                "SELECT id, started_at, finished_at, status FROM consolidation_log "
                "WHERE finished_at IS NOT NULL AND dry_run = 0 "
                "ORDER BY finished_at DESC LIMIT 1"
            )
        ).first()
    if row is None:
        return None
    return PassInfo(str(row.id), float(row.started_at), float(row.finished_at), str(row.status))


def is_due(brain: Brain, settings: Settings, now: float | None = None) -> DueCheck:
    """Is a dream pass due?  Both thresholds must be met, at or above:

    - ``dream_due_after_hours`` since the last pass finished, and
    - ``dream_due_min_new_traces`` active traces created since it started (a
      trace added while the pass ran may not have been seen by it).

    A brain that never had a pass counts from its first trace; an empty one
    is never due.  Nor is a brain whose :data:`PASS_LEASE` is held: a pass is
    running, and a long one must not be queued again every few minutes.
    """
    now = time.time() if now is None else now
    after_h = settings.dream_due_after_hours
    min_new = settings.dream_due_min_new_traces
    previous = last_pass(brain)
    with brain.read() as conn:
        running = lease_row(conn, PASS_LEASE)
        if previous is None:
            first = conn.execute(
                text("SELECT min(created_at) FROM memory_traces WHERE deleted = 0")
            ).scalar()
            if first is None:
                return DueCheck(False, "not due: the brain has no traces", None, 0)
            elapsed_from = counted_from = float(first)
            what = "the first trace"
        else:
            elapsed_from, counted_from = previous.finished_at, previous.started_at
            what = "the last pass"
        new = int(
            conn.execute(
                text(
                    "SELECT count(*) FROM memory_traces WHERE deleted = 0 AND created_at >= :since"
                ),
                {"since": counted_from},
            ).scalar_one()
        )
    hours = (now - elapsed_from) / 3600
    if running is not None and running.expires_at > now:
        return DueCheck(False, f"not due: pass {running.holder} is running", hours, new)
    if hours < after_h:
        return DueCheck(False, f"not due: {hours:.1f} h since {what} (< {after_h:g} h)", hours, new)
    if new < min_new:
        return DueCheck(False, f"not due: {new} new traces since {what} (< {min_new})", hours, new)
    return DueCheck(True, f"due: {hours:.1f} h and {new} new traces since {what}", hours, new)
