"""memctl copy: a brain to PostgreSQL and back, whole, resumable, never over another."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core import proposals
from memory_core.auth import SYSTEM, create_token
from memory_core.brain import copy as brain_copy
from memory_core.brain.copy import digest
from memory_core.consolidation.dream import dream
from memory_core.embedders.stub import StubEmbedder
from memory_core.embeddings import embed_missing
from memory_core.inbox.turns import Turn, accept_turn
from memory_core.supersession import pending
from tests.backends import SQLITE_ONLY
from tests.conftest import pg_database
from tests.memctl.test_cli import memctl

DAY = 86_400.0


@pytest.fixture
def pg_url(request: pytest.FixtureRequest) -> Iterator[str]:
    with pg_database(request.node.name) as url:
        yield url


def a_lived_in_brain(brain: mc.Brain, settings: mc.Settings) -> None:
    """Traces of several kinds and ages, vectors, a deleted trace (its vectors
    archived), edges from use, a pass's log, proposals decided and pending, an
    undo log, inbox turns, retrieval events, tokens and traces awaiting supersession."""
    stub = StubEmbedder()
    now = 1_800_000_000.0
    ids = [
        mc.add_trace(
            brain,
            f"note {i}: the {['heron', 'kite', 'owl'][i % 3]} came back on day {i}",
            identity=SYSTEM,
            tags=["birds"] if i % 2 else [],
            scope_id="alice" if i % 3 else "bob",
            occurred_at=now - (200 - i) * DAY,
        )
        for i in range(60)
    ]
    mc.add_trace(brain, "note 0: the heron came back on day 0", identity=SYSTEM, scope_id="bob")
    embed_missing(brain, stub)
    pending.note(brain, ids[10:12], at=now)  # embedded, their supersession still to run
    mc.delete_trace(brain, ids[5], identity=SYSTEM)
    with brain.transaction() as conn:  # what use leaves: retrievals, then an edge
        conn.execute(
            text(
                "INSERT INTO retrieval_events (id, trace_ids, at, consolidated) "
                "VALUES ('ret_1', :ids, :at, 1)"
            ),
            {"ids": json.dumps(ids[:2]), "at": now},
        )
        conn.execute(
            text(
                "INSERT INTO coactivation_edges (a, b, weight, count, updated_at) "
                "VALUES (:a, :b, 0.5, 2, :at)"
            ),
            {"a": ids[0], "b": ids[1], "at": now},
        )
    accept_turn(
        brain,
        Turn("I moved to Porto.", "Nice!", "user", "alice", conversation_id="c1"),
        identity=SYSTEM,
    )
    create_token(brain, "reader", ["read"], ["alice"], identity=mc.OPEN)
    dream(brain, settings, embedder=stub, now=now)
    made = proposals.create_proposals(
        brain,
        settings,
        [
            proposals.ProposalDraft("prune", [i], "decayed", {"strength": 0.0}, "prune")
            for i in (ids[7], ids[8])
        ],
        "pass_x",
    )
    assert len(made) == 2
    proposals.accept(brain, settings, [made[0]])  # decided, with its undo log; one pending


def test_a_round_trip_through_postgresql_leaves_the_same_brain(tmp_path: Path, pg_url: str) -> None:
    source_url = f"sqlite:///{tmp_path / 'source.sqlite'}"
    back_url = f"sqlite:///{tmp_path / 'back.sqlite'}"
    settings = mc.load_settings(brain_url=source_url, data_dir=tmp_path / "data")
    source = mc.open_brain(settings)
    a_lived_in_brain(source, settings)
    with source.read() as conn:
        held = {
            table: conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
            for table in (
                "trace_embeddings",
                "vector_archive",
                "coactivation_edges",
                "undo_log",
                "inbox_turns",
                "proposals",
                "tokens",
                "consolidation_log",
                "retrieval_events",
                "supersession_pending",
            )
        }
    assert all(held.values()), held  # every kind of row is there to be copied
    traces = brain_copy.sizes(source)["memory_traces"]
    before = digest(source)
    source.close()

    env = {"REVERIE_HOME": str(tmp_path / "home")}
    there = memctl("--json", "copy", source_url, pg_url, env=env)
    assert there.returncode == 0, there.stderr
    assert json.loads(there.stdout)["copied"]["memory_traces"] == traces
    back = memctl("--json", "copy", pg_url, back_url, env=env)
    assert back.returncode == 0, back.stderr

    for url in (pg_url, back_url):
        copy = mc.open_brain(settings, url=url, create=False)
        try:
            assert digest(copy) == before
            assert copy.brain_id == json.loads(there.stdout)["brain_id"]
            assert memctl("doctor", env={**env, "REVERIE_BRAIN_URL": url}).returncode == 0
            hits = mc.search(copy, "heron", embedder=StubEmbedder(), identity=SYSTEM).results
            assert hits and all("heron" in h.trace.content for h in hits[:3])
        finally:
            copy.close()


def test_a_copy_cut_off_goes_on_where_it_stopped(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = mc.load_settings(
        brain_url=f"sqlite:///{tmp_path / 's.sqlite'}", data_dir=tmp_path / "data"
    )
    source = mc.open_brain(settings)
    a_lived_in_brain(source, settings)
    target = mc.open_brain(settings, url=pg_url)
    monkeypatch.setattr(brain_copy, "CHUNK", 7)
    seen: list[tuple[str, int]] = []

    def cut_off(table: str, done: int, _total: int) -> None:
        seen.append((table, done))
        if table == "memory_traces" and done >= 21:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        brain_copy.copy_brain(source, target, progress=cut_off)
    with target.read() as conn:
        assert conn.execute(text("SELECT count(*) FROM memory_traces")).scalar_one() == 21
    result = brain_copy.copy_brain(source, target)
    traces = brain_copy.sizes(source)["memory_traces"]
    assert result.resumed and result.rows["memory_traces"] == traces - 21
    assert digest(target) == digest(source)
    # Finished: not again, and never into a brain holding something else.
    with pytest.raises(mc.BrainError, match="not empty"):
        brain_copy.copy_brain(source, target)


@SQLITE_ONLY
def test_a_copy_never_writes_into_a_brain_that_holds_memories(
    tmp_path: Path, brain: mc.Brain, brain_url: str
) -> None:
    mc.add_trace(brain, "a memory of its own", identity=SYSTEM)
    brain.close()
    other = f"sqlite:///{tmp_path / 'other.sqlite'}"
    settings = mc.load_settings(brain_url=other, data_dir=tmp_path / "d")
    made = mc.open_brain(settings)
    mc.add_trace(made, "what the source knows", identity=SYSTEM)
    made.close()
    r = memctl("copy", other, brain_url, env={"REVERIE_HOME": str(tmp_path / "home")})
    assert r.returncode == 3 and "not empty" in r.stderr, r.stderr
    again = mc.open_brain(settings, url=brain_url, create=False)
    assert [t.content for t in mc.list_traces(again, identity=SYSTEM).traces] == [
        "a memory of its own"
    ]
    again.close()
    missing = memctl("copy", f"sqlite:///{tmp_path / 'nope.sqlite'}", other)
    assert missing.returncode == 3 and "no brain" in missing.stderr
