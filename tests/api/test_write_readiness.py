"""Readiness says when the brain refuses writes, and a SQLite brain recovers from a full
disk as soon as a little room is back.

A real full disk: a small tmpfs mounted for the test, so that SQLite meets its own
SQLITE_FULL (mounting needs root; where it is refused the case skips, saying so).
A real read-only brain: a PostgreSQL database whose sessions are read-only.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import memory_core as mc
from reverie.compose import Process, embedded
from reverie.compose import app as api_app
from tests.conftest import LOCAL, _pg_admin

# Room for the brain, its write-ahead log at its checkpoint size (4 MB) and the
# checkpoint's copy into the brain file, with some to spare before it is filled.
DISK_BYTES = 16 * 1024 * 1024


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A small filesystem of its own (tmpfs), unmounted after."""
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _serve(settings: mc.Settings) -> tuple[Process, TestClient]:
    served = embedded(settings, threads=1)
    return served, TestClient(api_app(served), base_url=LOCAL)


def _add(client: TestClient, k: int) -> Any:
    return client.post(
        "/v1/memories",
        json={"content": f"Note {k}: " + "the heron stood in the reeds " * 40, "scope_id": "ana"},
    )


def _fill(filler: Path) -> Path:
    """Fill the disk by growing ``filler`` (made before, while there was room), unbuffered:
    a buffered file would fail once more, closing, on what it still held."""
    with filler.open("ab", buffering=0) as fh:
        try:
            while fh.write(b"\0" * 65536):
                pass
        except OSError:
            pass
    return filler


def _wait_ready(client: TestClient, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while (r := client.get("/readyz")).status_code != 200:
        assert time.monotonic() < deadline, r.json()
        time.sleep(0.1)
    return r


def test_a_full_disk_fails_readiness_and_writes_come_back_once_a_little_room_is_freed(
    disk: Path,
) -> None:
    settings = mc.load_settings(
        brain_url=f"sqlite:///{disk / 'brain.sqlite'}", data_dir=disk / "data", embedder="stub"
    )
    filler = disk / "filler"
    filler.touch()
    served, client = _serve(settings)
    try:
        with client:
            for k in range(40):
                assert _add(client, k).status_code == 201
            served.join()
            _fill(filler)
            # The log's room already taken goes first; then a write fails.
            refused = next(
                (r for k in range(500) if (r := _add(client, 100 + k)).status_code != 201), None
            )
            assert refused is not None and refused.status_code == 503, "the disk never filled"
            assert refused.json()["error"]["code"] == "brain_unwritable"
            assert "full" in refused.json()["error"]["message"]
            assert str(disk) not in refused.text  # never the server's own path
            ready = client.get("/readyz")
            assert ready.status_code == 503 and "full" in ready.json()["checks"]["brain"]
            # A little room (far less than the 4 MB the log would grow to before its own
            # checkpoint): every write goes through again.
            os.truncate(filler, filler.stat().st_size - 256 * 1024)
            added = [_add(client, 200 + k).status_code for k in range(30)]
            assert added == [201] * 30
            # And once the disk has room, the API is ready again.
            os.truncate(filler, 0)
            assert _wait_ready(client).json()["checks"]["brain"] == "ok"
    finally:
        served.stop()


@pytest.mark.parametrize("brain_url", ["postgresql"], indirect=True)
def test_a_read_only_postgresql_brain_fails_readiness_until_it_takes_writes_again(
    brain_url: str, tmp_path: Path
) -> None:
    settings = mc.load_settings(brain_url=brain_url, data_dir=tmp_path / "data", embedder="stub")
    database = brain_url.rsplit("/", 1)[1]
    served, client = _serve(settings)
    try:
        with client:
            assert _wait_ready(client).json()["checks"]["brain"] == "ok"
            _pg_admin(f'ALTER DATABASE "{database}" SET default_transaction_read_only = on')
            served.runtime.brain.engine.dispose()  # sessions from now on are read-only
            r = _add(client, 0)
            assert r.status_code == 503 and r.json()["error"]["code"] == "brain_unwritable"
            ready = client.get("/readyz")
            assert ready.status_code == 503
            assert "read-only" in ready.json()["checks"]["brain"]
            _pg_admin(f'ALTER DATABASE "{database}" RESET default_transaction_read_only')
            served.runtime.brain.engine.dispose()
            assert _wait_ready(client).json()["checks"]["brain"] == "ok"
            assert _add(client, 1).status_code == 201
    finally:
        served.stop()
