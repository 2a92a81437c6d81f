"""What a PostgreSQL brain needs beyond SQLAlchemy: its engine, the advisory lock its
writers take turns by, its database made or dropped, and a cursor that takes the
SQLite parameter style the hot paths are written in (see
:func:`memory_core.brain.db.raw_cursor`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from sqlalchemy import Engine, create_engine, make_url

from memory_core.brain.failures import brain_error
from memory_core.errors import BrainError, BrainNotFound

# Every writer of a PostgreSQL brain holds this lock until its transaction ends.
PG_WRITE_LOCK_KEY = 0x5245564552494531  # "REVERIE1"
WRITE_LOCK = f"SELECT pg_advisory_xact_lock({PG_WRITE_LOCK_KEY})"


def make_engine(url: str) -> Engine:
    """The engine of a PostgreSQL brain."""
    # READ COMMITTED, the server's default: a writer's statements after the
    # advisory lock see every transaction committed before it.
    return create_engine(
        url,
        pool_size=8,
        max_overflow=32,
        pool_timeout=60,
        pool_pre_ping=True,
        connect_args={"connect_timeout": 10, "application_name": "reverie"},
    )


_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


@cache
def pg_paramstyle(sql: str) -> str:
    """``sql`` with SQLite's ``?`` and ``:name`` parameters in psycopg's style."""
    sql = sql.replace("%", "%%")
    sql = _NAMED.sub(r"%(\1)s", sql)
    return sql.replace("?", "%s")


class PgCursor:
    """A psycopg cursor that takes statements in SQLite's parameter style."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    def execute(self, sql: str, params: Any = ()) -> PgCursor:
        self._cursor.execute(pg_paramstyle(sql), params if params else None)
        return self

    def executemany(self, sql: str, params: Any) -> PgCursor:
        self._cursor.executemany(pg_paramstyle(sql), params)
        return self

    def fetchone(self) -> Any:
        return self._cursor.fetchone() if self._cursor.description is not None else None

    def fetchall(self) -> list[Any]:
        # As sqlite3's: a statement without rows (an UPDATE) reads as no rows.
        return list(self._cursor.fetchall()) if self._cursor.description is not None else []

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())

    def __getattr__(self, name: str) -> Any:  # description, rowcount, close ...
        return getattr(self._cursor, name)


def ensure_database(url: str, *, create: bool) -> None:
    """Make the database a PostgreSQL URL names when it is missing (with ``create``)."""
    import psycopg
    from psycopg import sql

    parsed = make_url(url)
    shown = parsed.render_as_string(hide_password=True)
    try:
        with psycopg.connect(libpq_uri(url), connect_timeout=10):
            return
    except psycopg.OperationalError as e:
        if "does not exist" not in str(e):
            raise brain_error(f"brain {shown}: {e}", e) from e
    if not create:
        raise BrainNotFound(f"no brain at {shown}: the database does not exist")
    try:
        with psycopg.connect(libpq_uri(url, "postgres"), autocommit=True) as admin:
            admin.execute(
                sql.SQL("CREATE DATABASE {}").format(sql.Identifier(str(parsed.database)))
            )
    except psycopg.errors.DuplicateDatabase:
        pass  # another process made it first
    except psycopg.Error as e:
        raise BrainError(f"cannot create the database of {shown}: {e}") from e


def drop_pg_database(url: str) -> None:
    """Drop the PostgreSQL database ``url`` names, closing its other sessions first."""
    import psycopg
    from psycopg import sql

    name = str(make_url(url).database)
    with psycopg.connect(libpq_uri(url, "postgres"), autocommit=True) as admin:
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def libpq_uri(url: str, database: str | None = None) -> str:
    """The SQLAlchemy URL as libpq's (optionally naming another database)."""
    parsed = make_url(url).set(drivername="postgresql")
    if database is not None:
        parsed = parsed.set(database=database)
    return parsed.render_as_string(hide_password=False)
