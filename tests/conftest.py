"""Shared fixtures: settings on a temporary folder, a real brain file."""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import text

import memory_core as mc
from tests.fakes import FakeLLM

# The tools every surface (REST, MCP, Python) offers, by name, in order.
TOOL_NAMES = [
    "memory_add",
    "memory_update",
    "memory_delete",
    "memory_merge",
    "memory_search",
    "memory_reflect",
    "memory_post_turn",
    "memory_context",
    "memory_read",
    "memory_undo_supersession",
]


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No REVERIE_* variable of the developer's shell leaks into a test, and the default
    home is a temporary folder, never the developer's own brain."""
    import os

    for key in list(os.environ):
        if key.upper().startswith("REVERIE_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("REVERIE_HOME", str(tmp_path / "reverie-home"))
    yield


# The backends every brain-touching test runs on: a SQLite file, and a PostgreSQL
# database of its own, made for the test from a migrated template and dropped after.
BACKENDS = ("sqlite", "postgresql")
PG_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432"
# Test runs side by side on one machine (several checkouts) take different slots:
# PYTEST_SLOT=1, 2 ... gives a run Redis database indexes and templates of its own.
SLOT = int(os.environ.get("PYTEST_SLOT") or 0)
_SLOT_SUFFIX = f"_s{SLOT}" if SLOT else ""
_PG_TEMPLATE = f"reverie_test_template_{os.environ.get('PYTEST_XDIST_WORKER', 'gw0')}{_SLOT_SUFFIX}"


@pytest.fixture(params=BACKENDS)
def brain_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'brain.sqlite'}"
        return
    with pg_database(request.node.name) as url:
        yield url


@contextmanager
def pg_database(name: str) -> Iterator[str]:
    """A new PostgreSQL brain database (schema migrated, no brain id yet), dropped after.

    Skips when no PostgreSQL answers on 127.0.0.1:5432; in CI a missing server fails.
    """
    import os
    import uuid

    from memory_core.brain.postgresql import drop_pg_database

    template = _pg_template()
    if template is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL is required in CI and is not reachable on 127.0.0.1:5432")
        pytest.skip("no PostgreSQL on 127.0.0.1:5432")
    slug = "".join(c if c.isalnum() else "_" for c in name.lower())[:30]
    url = f"{PG_SERVER}/rt_{slug}_{uuid.uuid4().hex[:8]}"
    _pg_admin(f'CREATE DATABASE "{url.rsplit("/", 1)[1]}" TEMPLATE {template}')
    try:
        yield url
    finally:
        drop_pg_database(url)


_template_state: dict[str, str | None] = {}


def _pg_template() -> str | None:
    """The migrated template database, made once per test run (None: no server)."""
    if "name" in _template_state:
        return _template_state["name"]
    import psycopg

    try:
        _pg_admin(f"DROP DATABASE IF EXISTS {_PG_TEMPLATE} WITH (FORCE)")
    except psycopg.OperationalError:
        _template_state["name"] = None
        return None
    template_url = f"{PG_SERVER}/{_PG_TEMPLATE}"
    opened = mc.open_brain(mc.load_settings(brain_url=template_url))
    with opened.transaction() as conn:
        conn.execute(text("DELETE FROM brain_meta"))  # each copy names itself
    opened.close()
    _template_state["name"] = _PG_TEMPLATE
    return _PG_TEMPLATE


def _pg_admin(statement: str) -> None:
    import psycopg

    with psycopg.connect(
        "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=30",
        autocommit=True,
    ) as admin:
        admin.execute(statement)  # type: ignore[arg-type]


@pytest.fixture
def settings(tmp_path: Path, brain_url: str) -> mc.Settings:
    return mc.load_settings(brain_url=brain_url, data_dir=tmp_path / "data")


@pytest.fixture
def brain(settings: mc.Settings) -> Iterator[mc.Brain]:
    opened = mc.open_brain(settings)
    yield opened
    opened.close()


def brain_digest(brain: mc.Brain) -> str:
    """A digest of every trace row, embedding and index entry: equal means unchanged."""
    h = hashlib.sha256()
    index = "memory_traces_fts_docsize" if brain.dialect == "sqlite" else "memory_traces_fts"
    with brain.read() as conn:
        for table in ("memory_traces", "trace_embeddings", index):
            for row in conn.execute(text(f"SELECT * FROM {table} ORDER BY 1, 2")):
                h.update(repr(tuple(row)).encode())
    return h.hexdigest()


@pytest.fixture
def digest() -> Callable[[mc.Brain], str]:
    """``digest(brain)`` before and after a refused call must be equal."""
    return brain_digest


# The test run's worker (pytest-xdist runs the suite in several processes): each
# has a Redis database index and PostgreSQL template of its own (runs of at most
# three workers each: slots 0 to 4 fit Redis's sixteen indexes).
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
_WORKER_NUMBER = int(WORKER.removeprefix("gw") or 0)
REDIS_TEST_URL = f"redis://127.0.0.1:6379/{13 - _WORKER_NUMBER - 3 * SLOT}"


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A real Redis on a dedicated database index, flushed before and after.

    Skips when no Redis answers locally; in CI (CI=true) a missing Redis fails.
    """
    import os

    import redis

    client = redis.Redis.from_url(REDIS_TEST_URL)
    try:
        client.ping()
    except redis.ConnectionError:
        if os.environ.get("CI"):
            pytest.fail("Redis is required in CI and is not reachable on 127.0.0.1:6379")
        pytest.skip("no Redis on 127.0.0.1:6379")
    client.flushdb()
    yield REDIS_TEST_URL
    client.flushdb()
    client.close()


@pytest.fixture
def llm_server() -> Iterator[FakeLLM]:
    """A fake chat-completions endpoint on loopback, answering from a script."""
    fake = FakeLLM()
    thread = threading.Thread(target=fake.server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield fake
    fake.release.set()
    fake.server.shutdown()
    fake.server.server_close()


# Where test clients address the API: a loopback name, as a local agent would.
LOCAL = "http://127.0.0.1:8420"


@contextmanager
def memctl_up(env: dict[str, str], log: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A real ``memctl up`` on a free loopback port with ``env`` (on no REVERIE_* of the
    caller's): its base URL once ready and the process; interrupted on exit."""
    import os
    import signal
    import socket
    import sys
    import time

    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    full = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")} | env
    with log.open("w") as errors:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memctl", "up", "--port", str(port)],
            env=full,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "memctl up did not become ready"
            time.sleep(0.2)
        yield base, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.wait(30)


def memctl_in_process(
    args: list[str],
    *,
    env: dict[str, str | None] | None = None,
    cwd: Path | None = None,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """memctl's entry point (``main``, which maps errors to exit codes) run in this
    process, with stdin, stdout, stderr, the environment (no REVERIE_* of the
    caller's) and the folder swapped as a shell would give them: what it printed and
    the code it exited with.  Much cheaper than a process per command."""
    import logging
    import os
    import sys

    from typer.testing import CliRunner

    from memctl.cli import main

    wanted: dict[str, str | None] = {k: None for k in os.environ if k.startswith("REVERIE_")}
    wanted |= env or {}
    root = logging.getLogger()
    handlers, level, here = root.handlers[:], root.level, os.getcwd()
    with CliRunner().isolation(input=input, env=wanted) as (stdout, stderr, _):
        try:
            if cwd is not None:
                os.chdir(cwd)
            main(args)
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
        finally:
            os.chdir(here)
            root.handlers[:], root.level = handlers, level
            sys.stdout.flush()
            sys.stderr.flush()
        return subprocess.CompletedProcess(
            args, code, stdout.getvalue().decode(), stderr.getvalue().decode()
        )
