"""What a database driver's error means for Reverie: the brain refusing writes (a full
disk, a read-only file or database), the brain away for a while (a connection
dropped, a server restarting), or a fault of its own.

Every use of the brain's connections is wrapped by :func:`wrap_errors`, so the rest
of Reverie meets one error root (:class:`~memory_core.errors.BrainError`) and its
two kinds, :class:`~memory_core.errors.BrainUnwritable` (readiness fails, a full
SQLite brain checkpoints) and :class:`~memory_core.errors.BrainUnavailable` (a
process starting waits it out); :func:`unavailable` tells ingestion whether a
failed write was the brain's state rather than what was written.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy.exc import DatabaseError, OperationalError

from memory_core.errors import BrainError, BrainUnavailable, BrainUnwritable


@contextmanager
def wrap_errors(where: Path | str) -> Iterator[None]:
    """A driver's error inside as the :class:`BrainError` it means (:func:`brain_error`),
    naming the brain as ``where``."""
    try:
        yield
    except OperationalError as e:
        raise brain_error(f"brain {where}: {e.orig}", e.orig, e.connection_invalidated) from e
    except DatabaseError as e:
        raise brain_error(f"brain {where} is not usable: {e.orig}", e.orig) from e
    except sqlite3.Error as e:  # begin_immediate's, and a driver connection's
        raise brain_error(f"brain {where}: {e}", e) from e
    except Exception as e:
        if not type(e).__module__.startswith("psycopg"):
            raise
        raise brain_error(f"brain {where}: {e}", e) from e  # a driver connection's


# SQLite's errors (by name) and PostgreSQL's (by SQLSTATE, or its class) that say the
# brain refuses writes: a full disk, a read-only file or database, failing storage.
_UNWRITABLE_SQLITE = ("SQLITE_FULL", "SQLITE_READONLY", "SQLITE_IOERR", "SQLITE_CANTOPEN")
_UNWRITABLE_PG = ("53", "58", "25006")
# PostgreSQL's that say the connection is gone or the server is going: try again later.
_UNAVAILABLE_PG = ("08", "57P")


def brain_error(message: str, cause: Any, invalidated: bool = False) -> BrainError:
    """The :class:`BrainError` a driver's error means: unwritable, unavailable, or other."""
    name = str(getattr(cause, "sqlite_errorname", "") or "")
    state = str(getattr(cause, "sqlstate", "") or "")
    if name.startswith(_UNWRITABLE_SQLITE) or (state and state.startswith(_UNWRITABLE_PG)):
        return BrainUnwritable(message, full=name == "SQLITE_FULL" or state == "53100")
    from_pg = type(cause).__module__.startswith("psycopg")
    lost = from_pg and type(cause).__name__ == "OperationalError" and not state
    if invalidated or lost or (state and state.startswith(_UNAVAILABLE_PG)):
        return BrainUnavailable(message)
    return BrainError(message)


def unavailable(error: BaseException) -> bool:
    """Whether ``error`` says the brain could not be used at all (locked, unreachable,
    gone), rather than refusing what was written: no write's own fault."""
    cause = error.__cause__ if isinstance(error, BrainError) else error
    return isinstance(cause, OperationalError | sqlite3.OperationalError)
