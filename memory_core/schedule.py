"""When a dream pass is due, and leases: one holder of a named role per brain.

Pure functions over the brain, with ``now`` injectable so tests need no clock.
The scheduler asks :func:`is_due` every few minutes; the lease functions keep
exactly one scheduler per brain and are generic, so the dream pass reuses them
for its own one-pass-at-a-time lease.

A lease is a row of the ``leases`` table (name, holder, expires_at).  Every
change happens inside :meth:`Brain.transaction`, which begins ``IMMEDIATE``:
the write lock is taken before the row is read, so two processes racing for
the same lease are serialized by SQLite and exactly one of them wins.  Expiry
is wall-clock time (``time.time()``), so holders on different machines need
reasonably synchronized clocks; a TTL of tens of seconds tolerates the usual
skew.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sqlalchemy import Connection, text

from memory_core.db import Brain
from memory_core.errors import Conflict
from memory_core.settings import Settings

# The lease a running dream pass holds (see memory_core.consolidation.dream).
PASS_LEASE = "dream"


class LeaseHeld(Conflict):
    """Raised when a lease another holder still holds is needed (e.g. a second scheduler)."""

    code = "lease_held"


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


@dataclass(frozen=True)
class Lease:
    """A lease row: who holds ``name`` and until when (epoch seconds)."""

    name: str
    holder: str
    expires_at: float


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
        running = _lease_row(conn, PASS_LEASE)
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


def acquire_lease(
    brain: Brain, name: str, holder: str, ttl_s: float, now: float | None = None
) -> bool:
    """Take lease ``name`` for ``ttl_s`` seconds; True when ``holder`` now holds it.

    Taken when nobody holds it, when its holder's time ran out (expires_at at or
    before now), or when ``holder`` already holds it (then it is extended).
    """
    now = time.time() if now is None else now
    with brain.transaction() as conn:
        current = _lease_row(conn, name)
        if current is not None and current.holder != holder and current.expires_at > now:
            return False
        conn.execute(
            text(
                "INSERT INTO leases(name, holder, expires_at) VALUES (:name, :holder, :exp) "
                "ON CONFLICT(name) DO UPDATE SET holder = :holder, expires_at = :exp"
            ),
            {"name": name, "holder": holder, "exp": now + ttl_s},
        )
    return True


def renew_lease(
    brain: Brain, name: str, holder: str, ttl_s: float, now: float | None = None
) -> bool:
    """Extend ``holder``'s lease to now + ``ttl_s``; False when it is no longer theirs.

    A lease that expired but that nobody else took is still ``holder``'s and
    is renewed: nobody else acted on it in between.
    """
    now = time.time() if now is None else now
    with brain.transaction() as conn:
        result = conn.execute(
            text("UPDATE leases SET expires_at = :exp WHERE name = :name AND holder = :holder"),
            {"name": name, "holder": holder, "exp": now + ttl_s},
        )
        return result.rowcount == 1


def release_lease(brain: Brain, name: str, holder: str) -> bool:
    """Give lease ``name`` up; False (and nothing changed) when ``holder`` did not hold it."""
    with brain.transaction() as conn:
        result = conn.execute(
            text("DELETE FROM leases WHERE name = :name AND holder = :holder"),
            {"name": name, "holder": holder},
        )
        return result.rowcount == 1


def lease_holder(brain: Brain, name: str) -> Lease | None:
    """Who holds lease ``name`` (possibly expired), for error messages and status."""
    with brain.read() as conn:
        return _lease_row(conn, name)


def _lease_row(conn: Connection, name: str) -> Lease | None:
    row = conn.execute(
        text("SELECT name, holder, expires_at FROM leases WHERE name = :name"), {"name": name}
    ).first()
    if row is None:
        return None
    return Lease(str(row.name), str(row.holder), float(row.expires_at))
