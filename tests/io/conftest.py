"""Fixtures for the import/export tests: a varied brain and an empty second one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.brain.maintenance import doctor
from memory_core.embeddings import store_vectors
from memory_core.textutil import content_hash


@pytest.fixture
def filled(brain: mc.Brain) -> mc.Brain:
    """Traces of several types, scopes and scope ids; one forgotten; vectors; an edge."""
    ids = mc.add_traces(
        brain,
        [
            mc.NewTrace("User prefers dark mode.", type="semantic", tags=["ui", "pref"]),
            mc.NewTrace("Deploy with docker compose up.", type="procedural", tags=["ops"]),
            mc.NewTrace("Met Ana at the café.\nShe likes tea.", scope="thread", scope_id="t-1"),
            mc.NewTrace("Ana is Bob's sister.", type="relational", scope_id="team/ana"),
            mc.NewTrace("User prefers dark mode.", scope="organization", scope_id="acme"),
            mc.NewTrace("An old mistake.", tags=["old"]),
        ],
        now=1_700_000_000.0,
        identity=SYSTEM,
    )
    with brain.transaction() as conn:
        conn.execute(
            text(
                "UPDATE memory_traces SET strength = 0.42, retrieval_count = 3, "
                "last_accessed = 1700000500.5 WHERE id = :id"
            ),
            {"id": ids[0]},
        )
        conn.execute(
            text(
                "INSERT INTO coactivation_edges (a, b, weight, count, updated_at) "
                "VALUES (:a, :b, 2.0, 2, 1700000600.0)"
            ),
            dict(zip("ab", sorted(ids[:2]), strict=True)),
        )
    vectors = np.arange(8, dtype=np.float32).reshape(2, 4) / 7
    store_vectors(
        brain,
        "stub",
        ids[:2],
        vectors,
        content_hashes=[
            content_hash("User prefers dark mode."),
            content_hash("Deploy with docker compose up."),
        ],
    )
    mc.delete_trace(brain, ids[5], reason="forgotten", identity=SYSTEM)
    return brain


@pytest.fixture
def other(settings: mc.Settings, tmp_path: Path) -> mc.Brain:
    """A second, empty brain to import into."""
    return mc.open_brain(settings, url=f"sqlite:///{tmp_path / 'other.sqlite'}")


def _active(brain: mc.Brain, full: bool = False) -> list[tuple[Any, ...]]:
    cols = "content, type, scope, scope_id, tags"
    if full:
        cols += ", strength, retrieval_count, created_at, last_accessed, occurred_at"
    with brain.read() as conn:
        rows = conn.execute(
            text(f"SELECT {cols} FROM memory_traces WHERE deleted = 0 ORDER BY content, scope")
        ).all()
        out = [tuple(r) for r in rows]
        if full:
            vecs = conn.execute(
                text(
                    "SELECT t.content, e.model, e.vector FROM trace_embeddings e "
                    "JOIN memory_traces t ON t.id = e.trace_id ORDER BY t.content"
                )
            ).all()
            out += [("vector", *tuple(v)) for v in vecs]
    return out


@pytest.fixture
def active() -> Callable[..., list[tuple[Any, ...]]]:
    """``active(brain, full=False)``: the active traces as comparable tuples."""
    return _active


@pytest.fixture
def healthy() -> Callable[[mc.Brain], None]:
    """``healthy(brain)`` asserts that doctor finds nothing wrong."""

    def check(brain: mc.Brain) -> None:
        assert [p.to_dict() for p in doctor(brain)] == []

    return check


@pytest.fixture
def count() -> Callable[[mc.Brain], int]:
    """``count(brain)``: every trace row, forgotten ones included."""

    def rows(brain: mc.Brain) -> int:
        with brain.read() as conn:
            return int(conn.execute(text("SELECT count(*) FROM memory_traces")).scalar_one())

    return rows
