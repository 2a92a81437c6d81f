"""SQLite export and import."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core.io import export_brain, import_into


def test_sqlite_export_is_a_brain_with_every_portable_table(filled, settings, tmp_path) -> None:
    with filled.transaction() as conn:
        conn.execute(text("INSERT INTO leases VALUES ('dream', 'me', 9e9)"))
        conn.execute(
            text(
                "INSERT INTO consolidation_log (id, started_at, status) VALUES ('p1', 1.0, 'done')"
            )
        )
    path = tmp_path / "copy.sqlite"
    doc = export_brain(filled, "sqlite", path)
    assert (doc["traces"], doc["embeddings"], doc["edges"]) == (6, 2, 1)
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT count(*) FROM leases").fetchone() == (0,)
        assert db.execute("SELECT id FROM consolidation_log").fetchall() == [("p1",)]
    copy = mc.open_brain(settings, url=f"sqlite:///{path}", create=False)
    assert copy.brain_id == filled.brain_id


def test_sqlite_round_trip_keeps_traces_counts_timestamps_and_vectors(
    filled, other, active, healthy, tmp_path
) -> None:
    path = tmp_path / "copy.sqlite"
    export_brain(filled, "sqlite", path)
    result = import_into(other, "sqlite", path)
    assert (result.imported, result.skipped, result.errors, result.edges) == (6, 0, [], 1)
    assert active(other, full=True) == active(filled, full=True)
    healthy(other)


def test_sqlite_import_into_its_own_brain_adds_nothing(filled, digest, tmp_path) -> None:
    path = tmp_path / "copy.sqlite"
    export_brain(filled, "sqlite", path)
    before = digest(filled)
    result = import_into(filled, "sqlite", path)
    assert (result.imported, result.skipped, result.edges) == (0, 6, 0)
    assert digest(filled) == before


def test_a_sqlite_file_that_is_not_a_brain_is_refused(brain, digest, tmp_path) -> None:
    foreign = tmp_path / "foreign.sqlite"
    with closing(sqlite3.connect(foreign)) as db:
        db.execute("CREATE TABLE notes (body TEXT)")
        db.commit()
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not a database" * 100)
    before = digest(brain)
    with pytest.raises(mc.InvalidArgument, match="not a Reverie brain"):
        import_into(brain, "sqlite", foreign)
    with pytest.raises(mc.InvalidArgument, match="not a SQLite brain"):
        import_into(brain, "sqlite", garbage)
    assert digest(brain) == before


def test_sqlite_export_never_overwrites(filled, tmp_path) -> None:
    path = tmp_path / "taken.sqlite"
    path.write_bytes(b"")
    with pytest.raises(mc.InvalidArgument, match="already exists"):
        export_brain(filled, "sqlite", path)
    assert path.read_bytes() == b""
