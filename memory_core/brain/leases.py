"""Leases: one holder of a named role per brain (one scheduler, one dream pass).

A lease is a row of the ``leases`` table (name, holder, expires_at).  Every
change happens inside :meth:`Brain.transaction`, which begins ``IMMEDIATE``:
the write lock is taken before the row is read, so two processes racing for
the same lease are serialized by SQLite and exactly one of them wins.  Expiry
is wall-clock time (``time.time()``, injectable as ``now``), so holders on
different machines need reasonably synchronized clocks; a TTL of tens of
seconds tolerates the usual skew.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sqlalchemy import Connection, text

from memory_core.brain.db import Brain
from memory_core.errors import Conflict

# The lease a running dream pass holds (see memory_core.consolidation.dream).
PASS_LEASE = "dream"


class LeaseHeld(Conflict):
    """Raised when a lease another holder still holds is needed (e.g. a second scheduler)."""

    code = "lease_held"


@dataclass(frozen=True)
class Lease:
    """A lease row: who holds ``name`` and until when (epoch seconds)."""

    name: str
    holder: str
    expires_at: float


def acquire_lease(
    brain: Brain, name: str, holder: str, ttl_s: float, now: float | None = None
) -> bool:
    """Take lease ``name`` for ``ttl_s`` seconds; True when ``holder`` now holds it.

    Taken when nobody holds it, when its holder's time ran out (expires_at at or
    before now), or when ``holder`` already holds it (then it is extended).
    """
    now = time.time() if now is None else now
    with brain.transaction() as conn:
        current = lease_row(conn, name)
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
        return lease_row(conn, name)


def lease_row(conn: Connection, name: str) -> Lease | None:
    row = conn.execute(
        text("SELECT name, holder, expires_at FROM leases WHERE name = :name"), {"name": name}
    ).first()
    if row is None:
        return None
    return Lease(str(row.name), str(row.holder), float(row.expires_at))
