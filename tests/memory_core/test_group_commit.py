"""Group commit: concurrent turns share transactions, each answered after its commit."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import event, text

import memory_core as mc
from memory_core import inbox
from memory_core.auth import SYSTEM
from memory_core.inbox.group_commit import TurnBatcher


def turn(i: int, key: str | None = None) -> inbox.Turn:
    return inbox.Turn(f"turn {i}", "ok", "user", "alice", idempotency_key=key)


def test_concurrent_turns_are_committed_in_shared_transactions(brain: mc.Brain) -> None:
    commits: list[int] = []
    event.listen(brain.engine, "commit", lambda conn: commits.append(1))
    sent: list[list[str]] = []
    lock = threading.Lock()

    def on_commit(ids: list[str]) -> bool:
        with lock:
            sent.append(ids)
        return True

    batcher = TurnBatcher(brain, on_commit)
    try:
        with ThreadPoolExecutor(32) as pool:
            results = list(pool.map(lambda i: batcher.submit(turn(i)), range(400)))
    finally:
        batcher.close()
    ids = [accepted.turn_id for accepted, _ in results]
    assert len(set(ids)) == 400 and all(enqueued for _, enqueued in results)
    assert sorted(i for batch in sent for i in batch) == sorted(ids)
    assert len(commits) < 400  # shared commits; exact count depends on timing
    with brain.read() as conn:
        assert conn.execute(text("SELECT count(*) FROM inbox_turns")).scalar() == 400


def test_a_repeated_key_in_one_batch_is_accepted_once(brain: mc.Brain) -> None:
    accepted = inbox.accept_turns(brain, [turn(1, "k"), turn(2, "k"), turn(3)], identity=SYSTEM)
    assert accepted[1] == inbox.Accepted(accepted[0].turn_id, duplicate=True)
    assert not accepted[2].duplicate


def test_a_bad_turn_is_refused_in_the_callers_thread_and_stores_nothing(
    brain: mc.Brain,
) -> None:
    batcher = TurnBatcher(brain, lambda ids: True)
    try:
        with pytest.raises(mc.InvalidArgument):
            batcher.submit(inbox.Turn(" ", "", "user", "alice"))
    finally:
        batcher.close()
    with brain.read() as conn:
        assert conn.execute(text("SELECT count(*) FROM inbox_turns")).scalar() == 0


def test_a_failing_enqueue_still_answers_with_the_committed_turn(brain: mc.Brain) -> None:
    def broken(ids: list[str]) -> bool:
        raise ConnectionError("redis is down")

    batcher = TurnBatcher(brain, broken)
    try:
        accepted, enqueued = batcher.submit(turn(1))
    finally:
        batcher.close()
    assert not enqueued
    assert inbox.turn_status(brain, accepted.turn_id, identity=SYSTEM)["status"] == "pending"


def test_a_turn_that_fails_its_shared_commit_fails_alone(brain: mc.Brain) -> None:
    """Metadata that cannot be written (here not JSON) breaks the batch's transaction;
    the batch is then committed turn by turn: every other turn is kept and answered."""
    busy, release = threading.Event(), threading.Event()

    def on_commit(ids: list[str]) -> bool:
        busy.set()  # the batcher is held here: every turn posted meanwhile waits
        return release.wait(60)

    batcher = TurnBatcher(brain, on_commit)
    unwritable = inbox.Turn("poison", "ok", "user", "mallory", metadata={"x": {1, 2}})
    try:
        with ThreadPoolExecutor(21) as pool:
            first = pool.submit(batcher.submit, turn(0))
            assert busy.wait(30)
            poisoned = pool.submit(batcher.submit, unwritable)
            rest = [pool.submit(batcher.submit, turn(i)) for i in range(1, 20)]
            deadline = time.monotonic() + 30
            while batcher.waiting < 20:  # the next commit will take all twenty
                assert time.monotonic() < deadline, "the turns never queued"
                time.sleep(0.01)
            release.set()
            results = [f.result(timeout=60) for f in [first, *rest]]
            with pytest.raises(TypeError):
                poisoned.result(timeout=60)
    finally:
        release.set()
        batcher.close()
    assert len({accepted.turn_id for accepted, _ in results}) == 20
    assert all(enqueued for _, enqueued in results)
    with brain.read() as conn:
        assert conn.execute(text("SELECT count(*) FROM inbox_turns")).scalar() == 20
