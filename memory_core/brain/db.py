"""The brain's engine, connections, transactions and migrations.

A brain is a SQLite file (one host, any number of processes) or a PostgreSQL
database (any number of hosts).  One module owns the engine: each open
:class:`Brain` has its own, with SQLite pragmas (WAL, busy timeout, foreign
keys, synchronous) set in a connect listener.  Nothing is cached by the
module: a process opens its brain once (its runtime holds it), and a brain
opened again, with the same settings or others, is another object that shares
nothing but the file (or database).

Every write goes through :meth:`Brain.transaction`, which begins
``IMMEDIATE``: SQLite's deferred transactions take the write lock only at the
first write, and a reader that then wants to write fails with "database is
locked" whatever the busy timeout, because the lock it waits for cannot be
granted while it holds its own snapshot.  Taking the lock up front makes a
writer wait its turn instead.

On PostgreSQL a write transaction takes the brain's transaction-level advisory
lock first, so writers of every host take turns as SQLite's do on its file
lock: compare-and-set checks, the vector change log's order and the stream
links keep the one semantics on both backends.  Each statement after the lock
reads everything committed before it (READ COMMITTED); reads run in a
REPEATABLE READ snapshot, as a SQLite read does.
"""

from __future__ import annotations

import logging
import random
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, make_url, text
from sqlalchemy.exc import ArgumentError

from memory_core.brain.failures import wrap_errors
from memory_core.brain.health import WriteHealth, after_write
from memory_core.brain.postgresql import WRITE_LOCK, PgCursor, ensure_database, make_engine
from memory_core.errors import BrainError, BrainNotFound, ConfigError
from memory_core.language.scripts import segmented
from memory_core.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")

_BEGIN_OPTION = "reverie_begin"
MMAP_BYTES = 256 * 1024 * 1024


@dataclass
class Brain:
    """An open brain: its engine and identity.  Cheap to pass around."""

    url: str
    engine: Engine
    path: Path | None  # the SQLite file; None for a PostgreSQL brain
    brain_id: str
    settings: Settings
    _local: threading.local = field(default_factory=threading.local, repr=False)
    # Writers of one process queue here rather than in SQLite's busy handler,
    # which polls with growing sleeps; other processes still meet the file lock.
    _write_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _state: dict[type, Any] = field(default_factory=dict, repr=False)
    # The last write's outcome in this process, for readiness (memory_core.brain.health).
    write_health: WriteHealth = field(default_factory=WriteHealth, repr=False)
    _state_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.engine.dialect.name

    @property
    def where(self) -> str:
        """Where the brain lives, for people: the file, or the URL without its password."""
        if self.path is not None:
            return str(self.path)
        return make_url(self.url).render_as_string(hide_password=True)

    @property
    def shown(self) -> str:
        """The brain as answers to clients name it: a SQLite brain by its file name (never
        the server's path), a PostgreSQL one by its URL without the password."""
        return self.path.name if self.path is not None else self.where

    def state(self, kind: type[T]) -> T:
        """This brain's one ``kind()``: in-memory state derived from its rows (the
        search's vector indexes, its term counts), made on first use and kept by this
        object alone, so two brains never share it."""
        with self._state_lock:
            found = self._state.get(kind)
            if found is None:
                found = self._state[kind] = kind()
            return found

    def close(self) -> None:
        """Release the engine's connections and file handles (the object is done)."""
        with self._state_lock:
            for held in self._state.values():
                closing_hook = getattr(held, "close", None)
                if closing_hook is not None:
                    closing_hook()
            self._state.clear()
        self.engine.dispose()

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """A write transaction (BEGIN IMMEDIATE); nested calls become savepoints.

        Commits when the block ends, rolls back on any exception.
        """
        outer: Connection | None = getattr(self._local, "conn", None)
        if outer is not None:
            with outer.begin_nested():
                yield outer
            return
        try:
            with wrap_errors(self.shown), self._write_lock, self.engine.connect() as conn:
                conn.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})
                self._local.conn = conn
                try:
                    with conn.begin():
                        if self.path is None:
                            conn.exec_driver_sql(WRITE_LOCK)
                        yield conn
                finally:
                    self._local.conn = None
        except BrainError as e:
            after_write(self, e)
            raise
        after_write(self, None)

    @contextmanager
    def driver_connection(self, *, take_turn: bool = True) -> Iterator[Any]:
        """The driver's own connection (a SQLite one autocommits), in this process's
        writers' turn unless ``take_turn`` is False: for what runs outside a transaction
        (SQLite's VACUUM and checkpoints) or must not wait (the write probe)."""
        with wrap_errors(self.shown), self._write_lock if take_turn else nullcontext():
            raw = self.engine.raw_connection()
            try:
                yield raw.driver_connection
            finally:
                raw.close()

    def try_write_turn(self) -> bool:
        """Take this process's writers' turn if nobody holds it (release it after)."""
        return self._write_lock.acquire(blocking=False)

    def release_write_turn(self) -> None:
        self._write_lock.release()

    def in_transaction(self) -> bool:
        """Whether this thread is inside :meth:`transaction`."""
        return getattr(self._local, "conn", None) is not None

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read-only snapshot; inside a transaction, that transaction's view."""
        outer: Connection | None = getattr(self._local, "conn", None)
        if outer is not None:
            yield outer
            return
        with wrap_errors(self.shown), self.engine.connect() as conn:
            if self.path is None:
                conn.execution_options(isolation_level="REPEATABLE READ")
            yield conn

    def file_sizes(self) -> dict[str, int]:
        """Bytes on disk of the brain file and its WAL and shared-memory files (on
        PostgreSQL: the database's size)."""
        if self.path is None:
            with self.read() as conn:
                size = conn.exec_driver_sql("SELECT pg_database_size(current_database())")
                return {"brain": int(size.scalar_one()), "wal": 0, "shm": 0}
        sizes = {}
        for suffix, name in (("", "brain"), ("-wal", "wal"), ("-shm", "shm")):
            p = Path(str(self.path) + suffix)
            sizes[name] = p.stat().st_size if p.exists() else 0
        return sizes


def _sqlite_path(url: str) -> Path | None:
    """The brain file a ``sqlite:///`` URL names; None for a PostgreSQL URL."""
    try:
        parsed = make_url(url)
    except ArgumentError as e:
        raise ConfigError(f"bad brain URL {url!r}: {e}") from e
    backend = parsed.get_backend_name()
    if backend == "postgresql":
        if parsed.get_driver_name() != "psycopg":
            raise ConfigError(
                f"bad brain URL {url!r}: a PostgreSQL brain is reached with psycopg 3, "
                "postgresql+psycopg://user@host/database"
            )
        if not parsed.database:
            raise ConfigError(f"bad brain URL {url!r}: name the database")
        return None
    if backend != "sqlite":
        raise ConfigError(
            f"bad brain URL {url!r}: a brain is sqlite:///FILE or postgresql+psycopg://HOST/DB"
        )
    if not parsed.database or parsed.database == ":memory:":
        raise ConfigError(f"bad brain URL {url!r}: give a file path, e.g. sqlite:///brain.sqlite")
    return Path(parsed.database)


def _make_engine(url: str, settings: Settings) -> Engine:
    if make_url(url).get_backend_name() == "postgresql":
        return make_engine(url)
    engine = create_engine(url, pool_size=8, max_overflow=32, pool_timeout=60)
    busy_ms = settings.sqlite_busy_timeout_ms
    synchronous = settings.sqlite_synchronous

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy's begin listener below decide how each transaction
        # starts; the driver's own implicit BEGIN would always be DEFERRED.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute(f"PRAGMA synchronous = {synchronous}")
        cur.execute("PRAGMA foreign_keys = ON")
        # Reads through the OS page cache instead of copying into SQLite's
        # small private cache: large brains search markedly faster.
        cur.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        cur.close()
        # What tag expressions call (PostgreSQL has it from its migration); no regex
        # runs in the database (memory_core.retrieval.tagvocab matches them).
        dbapi_conn.create_function("reverie_number", 1, _number, deterministic=True)
        # What the full-text index reads of a text (the migration 0020 made it read so).
        dbapi_conn.create_function("reverie_segmented", 1, segmented, deterministic=True)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get(_BEGIN_OPTION, "DEFERRED")
        if mode == "IMMEDIATE":
            begin_immediate(conn.connection.dbapi_connection, busy_ms)
        else:
            conn.exec_driver_sql(f"BEGIN {mode}")

    return engine


_NUMBER = re.compile(r"^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$")


def _number(value: Any) -> float | None:
    """SQLite's ``reverie_number(text)``: the text as a number, or NULL when it is none."""
    return float(value) if isinstance(value, str) and _NUMBER.match(value) else None


def begin_immediate(dbapi_conn: Any, timeout_ms: int) -> None:
    """BEGIN IMMEDIATE, waiting for the write lock in short, jittered steps.

    SQLite's own busy handler sleeps 1, 2, 5 ... up to 100 ms between tries,
    so a writer of one process facing a busy writer of another waits tens of
    milliseconds for a lock freed in one or two: throughput collapses and
    latency tails grow.  Here the wait polls every 0.2-2 ms instead, up to the
    same timeout; once the lock is held, the connection's normal busy timeout
    applies again.
    """
    deadline = time.monotonic() + timeout_ms / 1000
    delay = 0.0002
    dbapi_conn.execute("PRAGMA busy_timeout = 0")
    try:
        while True:
            try:
                dbapi_conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as e:
                message = str(e)
                if "locked" not in message and "busy" not in message:
                    raise
                if time.monotonic() >= deadline:
                    raise
            time.sleep(delay * random.uniform(0.5, 1.5))
            delay = min(delay * 1.5, 0.002)
    finally:
        dbapi_conn.execute(f"PRAGMA busy_timeout = {int(timeout_ms)}")


@contextmanager
def raw_cursor(conn: Connection) -> Iterator[Any]:
    """The driver's own cursor on ``conn`` (closed on exit), for the hot paths alone.

    Everywhere else the brain is read and written with SQL text through
    SQLAlchemy's connection (``conn.execute(text(...), {...})``).  A few
    statements run for every candidate of every search, or every trace of an
    import: there SQLAlchemy's statement and result machinery doubled the
    fixed cost, so they use the cursor directly, in the same transaction.
    The statements are written in SQLite's parameter style (``?`` or
    ``:name``); on PostgreSQL the cursor translates them for psycopg.
    """
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        yield cursor if conn.dialect.name == "sqlite" else PgCursor(cursor)
    finally:
        cursor.close()


def read_meta(conn: Connection, key: str) -> str | None:
    """A value of the brain's own key-value table (``brain_meta``), or None."""
    value = conn.execute(text("SELECT value FROM brain_meta WHERE key = :k"), {"k": key}).scalar()
    return None if value is None else str(value)


def write_meta(conn: Connection, key: str, value: str) -> None:
    """Set a ``brain_meta`` value; ``conn`` must be in a write transaction."""
    conn.execute(
        text(
            "INSERT INTO brain_meta (key, value) VALUES (:k, :v) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
        ),
        {"k": key, "v": value},
    )


def open_brain(settings: Settings, *, url: str | None = None, create: bool = True) -> Brain:
    """Open (and, with ``create``, create and migrate) the brain at ``url``.

    ``url`` defaults to ``settings.brain_url``.  Without ``create`` a missing
    file (or PostgreSQL database) raises :class:`BrainNotFound`, so read
    commands never make empty brains.  Every call opens a new :class:`Brain` on
    its own engine, run by these settings: a process opens its brain once, at
    its entry point, and hands it down; :meth:`Brain.close` releases it.
    """
    url = url or settings.brain_url
    path = _sqlite_path(url)
    if path is None:
        ensure_database(url, create=create)
    elif not path.exists():
        if not create:
            raise BrainNotFound(f"no brain at {path}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise BrainError(f"cannot create {path.parent}: {e}") from e
    else:
        _refuse_foreign(path)
    engine = _make_engine(url, settings)
    try:
        brain_id = migrate(engine, path or make_url(url).render_as_string(hide_password=True))
    except BaseException:
        engine.dispose()
        raise
    return Brain(url, engine, path, brain_id, settings)


def _refuse_foreign(path: Path) -> None:
    """Refuse a file that is not a brain before anything writes to it.

    Checked read-only: the engine's first connection switches the journal to
    WAL, which would already change a foreign file's header.
    """
    if path.is_dir():
        raise BrainError(f"brain path {path} is a directory")
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as e:
        raise BrainError(f"{path} is not a SQLite brain: {e}") from e
    if names and "alembic_version" not in names:
        raise BrainError(f"{path} is a SQLite file but not a Reverie brain")


def _alembic_config() -> Any:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", "memory_core.brain:migrations")
    return cfg


@cache
def head_revision() -> str:
    """The newest migration this code knows."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(_alembic_config()).get_current_head()
    assert head is not None
    return head


def tables(conn: Connection) -> set[str]:
    """The names of the brain's tables."""
    if conn.dialect.name == "sqlite":
        query = "SELECT name FROM sqlite_master WHERE type='table'"
    else:
        query = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
    return {str(r[0]) for r in conn.exec_driver_sql(query)}


def current_revision(conn: Connection) -> str | None:
    """The brain's recorded schema revision, None for a database without one."""
    if "alembic_version" not in tables(conn):
        return None
    return conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()


def migrate(engine: Engine, where: Path | str) -> str:
    """Bring the brain to the newest schema; returns its brain id.

    Runs in one IMMEDIATE transaction (on PostgreSQL, under the writers'
    advisory lock), so two processes opening a new brain at the same time
    migrate it exactly once.  A database that holds other tables but no
    Reverie schema is refused, never written.
    """
    from alembic import command

    with wrap_errors(where), engine.connect() as conn:
        conn.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})
        with conn.begin():
            if conn.dialect.name == "postgresql":
                conn.exec_driver_sql(WRITE_LOCK)
            rev = current_revision(conn)
            if rev is None and tables(conn):
                kind = "a SQLite file" if conn.dialect.name == "sqlite" else "a database"
                raise BrainError(f"{where} is {kind} but not a Reverie brain")
            if rev != head_revision():
                log.info("migrating brain %s from %s to %s", where, rev, head_revision())
                cfg = _alembic_config()
                cfg.attributes["connection"] = conn
                try:
                    command.upgrade(cfg, "head")
                finally:
                    cfg.attributes.pop("connection", None)
            brain_id = conn.execute(
                text("SELECT value FROM brain_meta WHERE key = 'brain_id'")
            ).scalar()
            if brain_id is None:
                brain_id = f"br_{uuid.uuid4()}"
                conn.execute(
                    text(
                        "INSERT INTO brain_meta(key, value) "
                        "VALUES ('brain_id', :v), ('created_at', :t)"
                    ),
                    {"v": brain_id, "t": repr(time.time())},
                )
    return str(brain_id)
