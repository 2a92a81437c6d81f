"""The brain file: pragmas, migrations, transactions, refusals."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import make_url, text

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.brain.db import current_revision, head_revision, tables
from memory_core.brain.schema import PG_INDEX_TRIGGERS, TRIGGERS, metadata
from memory_core.retrieval.lexical import TermCounts


def test_pragmas_wal_foreign_keys_busy_timeout(brain: mc.Brain) -> None:
    if brain.dialect == "postgresql":
        # A read is one snapshot, as SQLite's; a commit is durable before it returns.
        with brain.read() as conn:
            assert conn.exec_driver_sql("SHOW transaction_isolation").scalar() == "repeatable read"
            assert conn.exec_driver_sql("SHOW synchronous_commit").scalar() == "on"
        with brain.transaction() as conn:
            assert conn.exec_driver_sql("SHOW transaction_isolation").scalar() == "read committed"
        return
    with brain.read() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30_000
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL


def test_first_open_creates_and_migrates_to_head(brain: mc.Brain) -> None:
    with brain.read() as conn:
        assert current_revision(conn) == head_revision()
        names = tables(conn)
    assert {
        "memory_traces",
        "memory_traces_fts",
        "trace_embeddings",
        "inbox_turns",
        "coactivation_edges",
        "consolidation_log",
        "proposals",
        "leases",
    } <= names
    assert brain.brain_id.startswith("br_")


def test_the_migrated_brain_has_exactly_the_documented_triggers(brain: mc.Brain) -> None:
    if brain.dialect == "sqlite":
        query = "SELECT name FROM sqlite_master WHERE type = 'trigger'"
        expected = set(TRIGGERS)
    else:  # and those that make a table a full-text index
        query = "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal"
        expected = set(TRIGGERS) | set(PG_INDEX_TRIGGERS)
    with brain.read() as conn:
        names = {r[0] for r in conn.exec_driver_sql(query)}
    assert names == expected


def test_migrated_schema_matches_the_metadata(brain: mc.Brain) -> None:
    with brain.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    # The full-text index's tables (FTS5's shadow tables; on PostgreSQL, the index
    # and its postings) and PostgreSQL's rowid columns are not in the metadata;
    # nothing else may differ.
    index = ("memory_traces_fts", "memory_traces_vocab", "memory_traces_postings", "alembic")
    real = [
        d
        for d in diff
        if not (d[0] == "remove_table" and d[1].name.startswith(index))
        and not (d[0] == "remove_index" and d[1].table.name.startswith(index))
        and not (d[0] == "remove_column" and d[3].name == "rowid")
        and not (d[0] == "remove_constraint" and [c.name for c in d[1].columns] == ["rowid"])
        and not (d[0] == "remove_index" and "rowid" in [c.name for c in d[1].columns])
    ]
    assert real == []


def test_brain_id_survives_reopening(settings: mc.Settings) -> None:
    brain = mc.open_brain(settings)
    first = brain.brain_id
    brain.close()
    assert mc.open_brain(settings).brain_id == first


def test_read_open_of_a_missing_brain_creates_nothing(
    tmp_path: Path, settings: mc.Settings
) -> None:
    url = f"sqlite:///{tmp_path / 'nope' / 'brain.sqlite'}"
    with pytest.raises(mc.BrainNotFound, match="no brain"):
        mc.open_brain(settings, url=url, create=False)
    assert not (tmp_path / "nope").exists()


@pytest.mark.parametrize(
    "url",
    [
        "not a url",
        "postgresql+psycopg2://localhost/x",
        "postgresql+psycopg://127.0.0.1:5432",
        "mysql://localhost/x",
        "sqlite://",
        "sqlite:///:memory:",
    ],
)
def test_bad_brain_urls_are_config_errors(settings: mc.Settings, url: str) -> None:
    with pytest.raises(mc.ConfigError, match="brain URL"):
        mc.open_brain(settings, url=url)


def test_a_foreign_sqlite_file_is_refused_and_left_alone(
    tmp_path: Path, settings: mc.Settings
) -> None:
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes(x)")
    before = path.read_bytes()
    with pytest.raises(mc.BrainError, match="not a Reverie brain"):
        mc.open_brain(settings, url=f"sqlite:///{path}")
    assert path.read_bytes() == before


def test_a_file_that_is_not_sqlite_is_a_brain_error(tmp_path: Path, settings: mc.Settings) -> None:
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(mc.BrainError):
        mc.open_brain(settings, url=f"sqlite:///{path}")


def test_transaction_rolls_back_whole_on_error(brain: mc.Brain) -> None:
    with pytest.raises(RuntimeError), brain.transaction() as conn:
        conn.execute(text("INSERT INTO leases(name, holder, expires_at) VALUES ('a', 'me', 1)"))
        raise RuntimeError("boom")
    with brain.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM leases").scalar() == 0


def test_nested_transactions_are_savepoints(brain: mc.Brain) -> None:
    with brain.transaction() as conn:
        conn.execute(text("INSERT INTO leases(name, holder, expires_at) VALUES ('outer', 'me', 1)"))
        with pytest.raises(RuntimeError), brain.transaction() as inner:
            inner.execute(
                text("INSERT INTO leases(name, holder, expires_at) VALUES ('inner', 'me', 1)")
            )
            raise RuntimeError("undo the inner part only")
    with brain.read() as conn:
        names = [r[0] for r in conn.exec_driver_sql("SELECT name FROM leases")]
    assert names == ["outer"]


def test_write_transactions_begin_immediate(brain: mc.Brain, tmp_path: Path) -> None:
    """While a write transaction is open, another connection cannot even begin one."""
    if brain.dialect == "postgresql":  # nor, on any host, take the writers' lock
        import psycopg

        from memory_core.brain.postgresql import PG_WRITE_LOCK_KEY

        url = make_url(brain.url)
        with psycopg.connect(
            host=url.host, port=url.port, user=url.username, dbname=url.database, autocommit=True
        ) as other:
            try_lock = f"SELECT pg_try_advisory_lock({PG_WRITE_LOCK_KEY})"
            with brain.transaction():
                assert other.execute(try_lock).fetchone() == (False,)  # type: ignore[arg-type]
            assert other.execute(try_lock).fetchone() == (True,)  # type: ignore[arg-type]
        return
    assert brain.path is not None
    other = sqlite3.connect(brain.path, timeout=0, isolation_level=None)
    with brain.transaction(), pytest.raises(sqlite3.OperationalError, match="locked"):
        other.execute("BEGIN IMMEDIATE")
    other.execute("BEGIN IMMEDIATE")
    other.execute("ROLLBACK")
    other.close()


def test_migration_links_turns_already_ingested_into_streams(
    settings: mc.Settings, tmp_path: Path
) -> None:
    """A brain made before streams existed gets them for its ingested turns."""
    from alembic import command
    from sqlalchemy import create_engine

    from memory_core.brain.db import _alembic_config

    path = tmp_path / "old.sqlite"
    engine = create_engine(f"sqlite:///{path}")
    cfg = _alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        try:
            command.upgrade(cfg, "0002")
        finally:
            cfg.attributes.pop("connection", None)
        rows = [
            ("a", "User: I adopted a beagle", '["turn"]', '{"conversation_id": "c1"}', 1),
            ("b", "User: she is called Miso", '["turn"]', '{"conversation_id": "c1"}', 1),
            ("c", "User: a fact, not a turn", '["knowledge"]', '{"conversation_id": "c1"}', 0),
            ("d", "User: other chat", '["turn"]', '{"conversation_id": "c2"}', 1),
            ("e", "User: my pin is 4321", '["turn"]', '{"conversation_id": "c3"}', 1),
            ("f", "User: thanks", '["turn"]', '{"conversation_id": "c3"}', 1),
        ]
        for i, (tid, content, tags, meta, is_turn) in enumerate(rows, start=1):
            sources = '[{"turn": "turn_x"}]' if is_turn else "[]"
            conn.execute(
                text(
                    "INSERT INTO memory_traces (seq, id, brain_id, type, scope, scope_id, content, "
                    "content_hash, tags, created_at, updated_at, occurred_at, metadata, sources, "
                    "deleted) VALUES (:seq, :id, 'br_x', 'episodic', 'user', 'alice', :content, "
                    "'h', :tags, 0, 0, 0, :meta, :sources, :deleted)"
                ),
                {
                    "seq": i,
                    "id": tid,
                    "content": content,
                    "tags": tags,
                    "meta": meta,
                    "sources": sources,
                    "deleted": int(tid == "e"),
                },
            )
            conn.execute(
                text(
                    "INSERT INTO trace_embeddings (trace_id, model, dim, vector, created_at) "
                    "VALUES (:id, 'm', 1, x'0000803f', 0)"
                ),
                {"id": tid},
            )
            conn.execute(
                text("INSERT INTO memory_traces_fts(rowid, content, tags) VALUES (:s, :c, :t)"),
                {"s": i, "c": content, "t": tags},
            )
    engine.dispose()
    brain = mc.open_brain(settings, url=f"sqlite:///{path}")
    with brain.read() as conn:
        got = {
            r[0]: (r[1], r[2], r[3])
            for r in conn.execute(text("SELECT id, stream, prev_seq, context FROM memory_traces"))
        }
    assert got == {
        "a": ("user:alice:c1", None, ""),
        "b": ("user:alice:c1", 1, "User: I adopted a beagle"),
        "c": (None, None, ""),
        "d": ("user:alice:c2", None, ""),
        "e": ("user:alice:c3", None, ""),
        "f": ("user:alice:c3", 5, ""),  # what followed a deleted turn no longer copies it
    }
    with brain.read() as conn:
        vectors = {r[0] for r in conn.execute(text("SELECT trace_id FROM trace_embeddings"))}
    assert vectors == set("abcdf")  # the deleted trace lost its vector
    # The rebuilt index holds the context: "Miso" is found by "beagle" too.
    hits = mc.search(brain, "beagle", embedder=None, identity=SYSTEM).results
    assert [h.trace.id for h in hits] == ["a", "b"]
    assert maintenance_ok(brain)


def maintenance_ok(brain: mc.Brain) -> bool:
    from memory_core.brain.maintenance import _check_fts

    return _check_fts(brain) == []


def test_a_brain_opened_with_other_settings_follows_its_own(settings: mc.Settings) -> None:
    first = mc.open_brain(settings)
    lexical_only = settings.model_copy(update={"search_vector_weight": 0.0})
    second = mc.open_brain(lexical_only)
    assert second is not first and second.path == first.path
    assert (first.settings, second.settings) == (settings, lexical_only)
    # Nothing is cached by the module: opened again, even with the same settings, a
    # brain is another object, and its in-memory state (vector indexes, term counts)
    # is its own.
    again = mc.open_brain(settings)
    assert again is not first and again.settings == settings
    assert again.state(TermCounts) is not first.state(TermCounts)
    # Both see the same file.
    trace_id = mc.add_trace(second, "the red kite nests in the oak", identity=SYSTEM)
    assert mc.get_trace(first, trace_id, identity=SYSTEM).content == "the red kite nests in the oak"
    if first.dialect != "sqlite":
        return
    slow = settings.model_copy(update={"sqlite_busy_timeout_ms": 1234})
    with mc.open_brain(slow).read() as conn:
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 1234
    with first.read() as conn:
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30_000


def test_idempotency_keys_become_each_tenants_own_on_upgrade(brain: mc.Brain) -> None:
    """Turns written before keys were per tenant get their scope and scope id from their
    payload, keep their order, and their keys no longer stand in another tenant's way."""
    import json

    from alembic import command

    from memory_core import inbox
    from memory_core.brain.db import _alembic_config

    cfg = _alembic_config()

    def migrate(step: Any, target: str) -> None:
        with brain.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            try:
                step(cfg, target)
            finally:
                cfg.attributes.pop("connection", None)

    migrate(command.downgrade, "0016")
    old = [("t2", "bob", "c-17/42"), ("t1", "alice", "a-1"), ("t3", "bob", None)]
    with brain.engine.begin() as conn:
        for at, (turn_id, scope_id, key) in enumerate(old):
            payload = {"user": f"{scope_id} said", "assistant": "ok", "scope": "user"}
            conn.execute(
                text(
                    "INSERT INTO inbox_turns (id, idempotency_key, payload, status, attempts, "
                    "created_at, updated_at) VALUES (:id, :key, :payload, 'done', 1, :at, :at)"
                ),
                {
                    "id": turn_id,
                    "key": key,
                    "payload": json.dumps({**payload, "scope_id": scope_id}),
                    "at": float(at),
                },
            )
    migrate(command.upgrade, "head")
    with brain.read() as conn:
        rows = conn.execute(
            text("SELECT id, scope, scope_id, idempotency_key FROM inbox_turns ORDER BY rowid")
        ).all()
    assert [tuple(r) for r in rows] == [
        ("t2", "user", "bob", "c-17/42"),
        ("t1", "user", "alice", "a-1"),
        ("t3", "user", "bob", None),
    ]
    alice = inbox.Turn("Alice's own", "ok", "user", "alice", idempotency_key="c-17/42")
    assert not inbox.accept_turn(brain, alice, identity=SYSTEM).duplicate
    bob = inbox.Turn("Bob again", "ok", "user", "bob", idempotency_key="c-17/42")
    assert inbox.accept_turn(brain, bob, identity=SYSTEM) == inbox.Accepted("t2", duplicate=True)
