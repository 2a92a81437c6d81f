"""Reconcile's dispatch, written once for every process that re-enqueues lost work."""

from __future__ import annotations

from collections.abc import Sequence

from memory_core.jobs import INGEST_BATCH, ReconcilePlan, dispatch


class Recorder:
    def __init__(self, backlog: int) -> None:
        self.backlog = backlog
        self.ingested: list[list[str]] = []
        self.embedded: list[list[str]] = []
        self.followed: list[list[str]] = []

    def ingest(self, turn_ids: Sequence[str]) -> None:
        self.ingested.append(list(turn_ids))

    def embed(self, trace_ids: Sequence[str]) -> None:
        self.embedded.append(list(trace_ids))

    def follow(self, trace_ids: Sequence[str]) -> None:
        self.followed.append(list(trace_ids))

    def depth(self, queue: str) -> int:
        return self.backlog if queue == "embed" else 0


def test_turns_go_in_batches_and_vectors_only_when_no_embed_job_waits() -> None:
    turns = [f"turn_{k}" for k in range(INGEST_BATCH * 2 + 5)]
    unfollowed = [f"mt_{k}" for k in range(12)]
    found = ReconcilePlan(turns, ["mt_a", "mt_b"], unfollowed)
    idle = Recorder(backlog=0)
    dispatch(found, idle, embed_batch=10)
    assert [len(b) for b in idle.ingested] == [INGEST_BATCH, INGEST_BATCH, 5]
    assert [t for batch in idle.ingested for t in batch] == turns
    assert idle.embedded == [["mt_a", "mt_b"]]
    assert idle.followed == [unfollowed[:10], unfollowed[10:]]
    busy = Recorder(backlog=3)  # those traces wait behind the backlog: not lost
    dispatch(found, busy, embed_batch=10)
    assert busy.embedded == busy.followed == [] and len(busy.ingested) == 3
    nothing = Recorder(backlog=0)
    dispatch(ReconcilePlan([], []), nothing, embed_batch=10)
    assert nothing.ingested == nothing.embedded == nothing.followed == []
