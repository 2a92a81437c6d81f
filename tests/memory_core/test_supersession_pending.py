"""Supersession by meaning is a job of its own, after the vectors, and never lost.

The embed job notes its traces before storing their vectors and sends a follow job
once they are stored; the follow job supersedes and clears the notes.  A follow
message that never arrives (a Redis flush, a worker killed) leaves its notes,
which reconcile finds once they are older than its timeout and sends again.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core import embeddings, jobs
from memory_core.auth import SYSTEM
from memory_core.embedders.minilm import MiniLMEmbedder
from memory_core.forget import forget_scope_id
from memory_core.supersession import pending

DAY = 86_400.0


def _noted(brain: mc.Brain) -> set[str]:
    with brain.read() as conn:
        return set(conn.execute(text("SELECT trace_id FROM supersession_pending")).scalars())


def _valid_until(brain: mc.Brain, trace_id: str) -> float | None:
    with brain.read() as conn:
        return conn.execute(
            text("SELECT valid_until FROM memory_traces WHERE id = :id"), {"id": trace_id}
        ).scalar_one()


@pytest.fixture
def embedded(settings: mc.Settings, brain: mc.Brain) -> Iterator[mc.Brain]:
    """The test's brain as a process with the embedder opens it: a statement is chained
    once embedded, by its meaning, not as it is written."""
    opened = mc.open_brain(settings.model_copy(update={"embedder": "minilm"}))
    yield opened
    opened.close()


def test_a_lost_follow_message_is_found_by_reconcile_and_its_change_followed(
    embedded: mc.Brain, settings: mc.Settings
) -> None:
    brain = embedded
    now = time.time()
    earlier, later = mc.add_traces(
        brain,
        [
            mc.NewTrace(
                "I drink three flat whites a day.", scope_id="ana", occurred_at=now - 90 * DAY
            ),
            mc.NewTrace("I'm down to one coffee a day now.", scope_id="ana", occurred_at=now),
        ],
        identity=SYSTEM,
    )
    embedder = MiniLMEmbedder(threads=1)
    # What the embed job does; the follow job it then sends is lost.
    pending.note(brain, [earlier, later, "mt_gone"])
    assert embeddings.embed_traces(brain, embedder, [earlier, later]) == 2
    assert _noted(brain) == {earlier, later}  # a trace that does not exist is not noted
    assert _valid_until(brain, earlier) is None  # searchable by meaning, not yet followed

    # Within reconcile's timeout the follow message may still be on its way.
    assert jobs.plan(brain, settings, embedder, older_than=3600).unfollowed_ids == []
    found = jobs.plan(brain, settings, embedder, older_than=0)
    assert sorted(found.unfollowed_ids) == sorted([earlier, later])
    assert jobs.plan(brain, settings, None, older_than=0).unfollowed_ids == []  # no embedder

    sent: list[list[str]] = []

    class Queue(jobs.NoQueue):
        def follow(self, trace_ids: Sequence[str]) -> None:
            sent.append(list(trace_ids))

    jobs.dispatch(found, Queue(), embed_batch=64)
    [ids] = sent
    pending.follow_noted(brain, embedder, ids)
    assert _valid_until(brain, earlier) == now  # fewer coffees superseded more
    assert _valid_until(brain, later) is None
    assert _noted(brain) == set()
    assert jobs.plan(brain, settings, embedder, older_than=0).unfollowed_ids == []
    # Sent twice (a redelivery): nothing more to supersede, nothing left noted.
    assert pending.follow_noted(brain, embedder, ids) == 0


def test_a_note_goes_with_its_trace(brain: mc.Brain) -> None:
    [trace] = mc.add_traces(
        brain, [mc.NewTrace("Ana keeps bees.", scope_id="ana")], identity=SYSTEM
    )
    pending.note(brain, [trace])
    forget_scope_id(brain, brain.settings, "ana", identity=SYSTEM)
    assert _noted(brain) == set()
