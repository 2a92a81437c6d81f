"""Whether the brain takes writes now, and getting a SQLite brain out of a full disk.

Readiness asks :func:`write_problem`: a brain that answers reads may still refuse
every write (a full disk, a read-only file or database).  The answer is the last
write's outcome in this process -- every write transaction reports it here -- and,
when no write told it lately, a probe: one tiny row written in ``brain_meta``, at
most every :data:`PROBE_EVERY_S` seconds (every second while writes fail, so that
readiness comes back soon after the cause is fixed).  The probe never waits for
another writer: a brain busy with a write is taking writes.  On SQLite the free
space of the brain's disk is read too.

A full disk wedges a SQLite brain in WAL mode: the write-ahead log is reset only
by a checkpoint, which runs when the log reaches about 4 MB, so space freed later
goes to the log's growth and writes keep failing until 4 MB are free.  So, after a
write fails for a full disk, :func:`reclaim_log` checkpoints and truncates the log
(its space returns to the disk at once, as soon as the brain file can take the
pages), and until the disk has :data:`ROOM_BYTES` free again each write is
followed by a checkpoint, so that the log does not grow into what little room
there is.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import threading
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from memory_core.errors import BrainError, BrainUnwritable
from memory_core.settings import Settings

log = logging.getLogger(__name__)

PROBE_EVERY_S = 10.0
PROBE_FAILING_EVERY_S = 1.0
# Below this much free space on a SQLite brain's disk, readiness says the disk is full.
MIN_FREE_BYTES = 1024 * 1024
# After a full disk, each write is followed by a checkpoint until this much is free.
ROOM_BYTES = 64 * 1024 * 1024
PROBE_KEY = "ready.probe"
_PROBE_WAIT_MS = 200


@dataclass
class WriteHealth:
    """One brain's last write outcome in this process (held by the :class:`Brain`)."""

    failure: str | None = None  # why the last write failed; None: it succeeded
    at: float = 0.0  # when the last write ended (monotonic)
    probed_at: float = -1e18
    low_disk: bool = False  # a full disk was met, and not enough room is back yet
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def succeeded(self) -> None:
        self.failure, self.at = None, time.monotonic()

    def failed(self, error: BrainUnwritable) -> None:
        self.failure, self.at = str(error), time.monotonic()
        if error.full:
            self.low_disk = True


class Brain(Protocol):
    """What this module needs of a :class:`memory_core.brain.db.Brain` (which reports
    each write here, so this module does not import it)."""

    path: Path | None
    settings: Settings
    write_health: WriteHealth

    @property
    def shown(self) -> str: ...

    def driver_connection(self, *, take_turn: bool = True) -> AbstractContextManager[Any]: ...

    def try_write_turn(self) -> bool: ...

    def release_write_turn(self) -> None: ...


def after_write(brain: Brain, error: BrainError | None) -> None:
    """What a write transaction reports when it ends (``error``: why it failed)."""
    health = brain.write_health
    if error is None:
        health.succeeded()
        if health.low_disk and brain.path is not None:
            reclaim_log(brain, truncate=False)
    elif isinstance(error, BrainUnwritable):
        health.failed(error)
        if error.full and brain.path is not None:
            reclaim_log(brain, truncate=True)


def reclaim_log(brain: Brain, *, truncate: bool) -> None:
    """Checkpoint a SQLite brain's write-ahead log (truncating it: its space returns to
    the disk), and leave low-disk care once there is room again."""
    assert brain.path is not None
    mode = "TRUNCATE" if truncate else "PASSIVE"
    try:
        with brain.driver_connection() as raw:
            busy, frames, done = raw.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
    except BrainError as e:
        log.warning("brain %s: the write-ahead log could not be checkpointed: %s", brain.shown, e)
        return
    free = _free_bytes(brain.path.parent)
    if truncate:
        log.warning(
            "brain %s: disk full; write-ahead log checkpointed (%s of %s frames%s), %d bytes free",
            brain.shown,
            done,
            frames,
            ", readers kept some" if busy else "",
            free,
        )
    if free is not None and free >= ROOM_BYTES:
        brain.write_health.low_disk = False
        log.info("brain %s: the disk has room again", brain.shown)


def write_problem(brain: Brain, *, now: float | None = None) -> str | None:
    """Why the brain does not take writes now, or None when it does."""
    now = time.monotonic() if now is None else now
    health = brain.write_health
    folders = [("data folder", brain.settings.data_dir)]  # proposals and reports
    if brain.path is not None:
        folders.insert(0, ("brain", brain.path.parent))
    for what, folder in folders:
        free = _free_bytes(folder)
        if free is not None and free < MIN_FREE_BYTES:
            return f"the {what}'s disk is full ({free} bytes free)"
    every = PROBE_FAILING_EVERY_S if health.failure else PROBE_EVERY_S
    recent = max(health.at, health.probed_at)
    if now - recent >= every and health.lock.acquire(blocking=False):
        try:
            health.probed_at = now
            _probe(brain)
        finally:
            health.lock.release()
    return None if health.failure is None else f"writes fail: {health.failure}"


def _probe(brain: Brain) -> None:
    """Write one tiny row, unless another writer is at work (then writes are going)."""
    try:
        if brain.path is not None:
            _probe_sqlite(brain)
        else:
            _probe_pg(brain)
    except BrainUnwritable as e:
        after_write(brain, e)
    except BrainError as e:  # busy, or unreachable: readiness's read check says so
        log.debug("brain %s: write probe not made: %s", brain.shown, e)


def _probe_sqlite(brain: Brain) -> None:
    if not brain.try_write_turn():
        return  # this process is writing
    try:
        with brain.driver_connection(take_turn=False) as raw:
            raw.execute(f"PRAGMA busy_timeout = {_PROBE_WAIT_MS}")
            try:
                _probe_write(raw)
            except sqlite3.OperationalError as e:
                if e.sqlite_errorcode not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                    raise
                return  # another process is writing
            finally:
                raw.execute(f"PRAGMA busy_timeout = {int(brain.settings.sqlite_busy_timeout_ms)}")
    finally:
        brain.release_write_turn()
    after_write(brain, None)


def _probe_write(raw: sqlite3.Connection) -> None:
    raw.execute("BEGIN IMMEDIATE")
    try:
        raw.execute(_UPSERT, (PROBE_KEY, repr(time.time())))
        raw.execute("COMMIT")
    except BaseException:
        raw.execute("ROLLBACK")
        raise


def _probe_pg(brain: Brain) -> None:
    with brain.driver_connection(take_turn=False) as raw, raw.transaction():
        raw.execute(f"SET LOCAL lock_timeout = '{_PROBE_WAIT_MS}ms'")
        raw.execute("SET LOCAL statement_timeout = '5s'")
        raw.execute(_UPSERT.replace("?", "%s"), (PROBE_KEY, repr(time.time())))
    after_write(brain, None)


_UPSERT = (
    "INSERT INTO brain_meta (key, value) VALUES (?, ?) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)


def _free_bytes(folder: Path) -> int | None:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None
