"""A turn that cannot be ingested fails alone: the rest of its job is kept, it falls back
to the offline extractor, and a turn that fails for good is tried again later."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core import inbox, ingest
from memory_core.auth import SYSTEM
from memory_core.extraction.base import Extraction, Fact

POISON = "Mallory"


def extract_with(bad: str, extractor: str = "llm") -> Any:
    """Facts as an LLM might answer them: Mallory's turns get a fact holding ``bad``."""

    def extract(user: str, assistant: str, *, when: float | None = None) -> Extraction:
        said = f"The user said: {user}"
        if POISON in user:
            said = f"The user is Mallory{bad}."
        return Extraction([Fact(said, "knowledge", 0.8, [])], extractor)

    return extract


def post(brain: mc.Brain, user: str, scope_id: str) -> str:
    turn = inbox.Turn(user, "Noted.", "user", scope_id)
    return inbox.accept_turn(brain, turn, identity=SYSTEM).turn_id


def rows(brain: mc.Brain) -> dict[str, tuple[str, int]]:
    with brain.read() as conn:
        found = conn.execute(text("SELECT id, status, attempts FROM inbox_turns")).all()
    return {r.id: (r.status, r.attempts) for r in found}


def batch(brain: mc.Brain) -> tuple[list[str], str]:
    """Twelve of Alice's turns with one of Mallory's among them; all ids, and Mallory's."""
    alice = [post(brain, f"I repotted the fern number {i}.", "alice") for i in range(6)]
    mallory = post(brain, f"I am {POISON}.", "mallory")
    alice += [post(brain, f"I repotted the fern number {i}.", "alice") for i in range(6, 12)]
    return [*alice, mallory], mallory


@pytest.mark.parametrize("bad", ["\x00", "\ud800"], ids=["nul", "surrogate"])
def test_facts_that_cannot_be_stored_fall_back_offline_and_lose_no_other_turn(
    brain: mc.Brain, bad: str
) -> None:
    ids, _ = batch(brain)
    report = ingest.ingest_turns(brain, ids, extract_with(bad))
    assert sorted(report.ingested) == sorted(ids) and report.failed == {}
    assert {status for status, _ in rows(brain).values()} == {"done"}
    with brain.read() as conn:
        facts = conn.execute(
            text(
                "SELECT content FROM memory_traces WHERE scope_id = 'mallory' "
                "AND type != 'episodic'"
            )
        ).scalars()
        assert all(bad not in f for f in facts)  # the offline extractor's, if any


def test_a_turn_that_cannot_be_written_at_all_fails_alone(brain: mc.Brain) -> None:
    ids, mallory = batch(brain)
    report = ingest.ingest_turns(brain, ids, extract_with("\x00", extractor="offline"))
    assert sorted(report.ingested) == sorted(t for t in ids if t != mallory)
    assert list(report.failed) == [mallory]
    status = inbox.turn_status(brain, mallory, identity=SYSTEM)
    assert (status["status"], status["attempts"]) == ("pending", 1)
    assert "NUL" in status["last_error"]


def test_a_turn_whose_extraction_breaks_fails_alone(brain: mc.Brain) -> None:
    def extract(user: str, assistant: str, *, when: float | None = None) -> Extraction:
        if POISON in user:
            raise RuntimeError("a bug for these words")
        return Extraction([], "offline")

    ids, mallory = batch(brain)
    report = ingest.ingest_turns(brain, ids, extract)
    assert list(report.failed) == [mallory] and len(report.ingested) == 12
    assert rows(brain)[mallory] == ("pending", 1)


@pytest.fixture
def strict(tmp_path: Path, brain_url: str) -> Iterator[mc.Brain]:
    """A brain whose turns fail after one attempt, then get two more, 10 s and 20 s on."""
    settings = mc.load_settings(
        brain_url=brain_url,
        data_dir=tmp_path / "data",
        ingest_max_attempts=1,
        ingest_failed_retries=2,
        ingest_failed_retry_s=10.0,
    )
    opened = mc.open_brain(settings)
    yield opened
    opened.close()


def test_a_failed_turn_is_tried_again_after_a_growing_back_off_a_bounded_number_of_times(
    strict: mc.Brain,
) -> None:
    brain = strict
    mallory = post(brain, f"I am {POISON}.", "mallory")
    always_bad = extract_with("\x00", extractor="offline")

    def again_at(seconds: float) -> list[str]:
        return inbox.due_again(
            brain, max_attempts=1, tries=2, after_s=10.0, now=time.time() + seconds
        )

    ingest.ingest_turns(brain, [mallory], always_bad)
    assert rows(brain)[mallory] == ("failed", 1)
    assert again_at(5) == []  # not yet
    assert again_at(11) == [mallory] and rows(brain)[mallory] == ("pending", 1)
    ingest.ingest_turns(brain, [mallory], always_bad)
    assert rows(brain)[mallory] == ("failed", 2)  # one attempt per try
    assert again_at(15) == []  # the wait doubled
    assert again_at(21) == [mallory]
    ingest.ingest_turns(brain, [mallory], always_bad)
    assert again_at(10_000) == []  # its tries are spent
    assert rows(brain)[mallory] == ("failed", 3)


def test_reconcile_plans_a_failed_turn_again_and_it_is_ingested(strict: mc.Brain) -> None:
    from memory_core import jobs

    brain = strict
    mallory = post(brain, f"I am {POISON}.", "mallory")
    ingest.ingest_turns(brain, [mallory], extract_with("\x00", extractor="offline"))
    with brain.transaction() as conn:  # it failed a while ago
        conn.execute(text("UPDATE inbox_turns SET updated_at = updated_at - 60"))
    plan = jobs.plan(brain, brain.settings, None)
    assert plan.retried_ids == [mallory] and plan.turn_ids == []
    report = ingest.ingest_turns(brain, plan.retried_ids, extract_with(""))
    assert report.ingested == [mallory] and rows(brain)[mallory] == ("done", 2)
