"""Trace vectors in the brain: storing, backfilling and loading."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

import numpy as np
import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.embedders.base import Vectors
from memory_core.embedders.stub import StubEmbedder
from memory_core.embedders.turns import BatchTurns
from memory_core.embeddings import (
    count_missing_embeddings,
    embed_missing,
    embed_traces,
    load_vectors,
    store_vectors,
    traces_missing_embeddings,
)
from memory_core.errors import EmbedderError, InvalidArgument
from memory_core.textutil import content_hash


def stored_rows(brain: mc.Brain) -> dict[tuple[str, str], tuple[int, bytes]]:
    with brain.read() as conn:
        rows = conn.execute(text("SELECT trace_id, model, dim, vector FROM trace_embeddings"))
        return {(r[0], r[1]): (r[2], r[3]) for r in rows}


class HookedStub(StubEmbedder):
    """A stub embedder that runs ``hook`` while it embeds, as a concurrent writer would."""

    def __init__(self, hook: Callable[[], None]) -> None:
        super().__init__()
        self.hook = hook

    def embed(self, texts: Sequence[str]) -> Vectors:
        vectors = super().embed(texts)
        self.hook()
        return vectors


def test_backfill_embeds_only_the_traces_missing_a_vector(brain: mc.Brain) -> None:
    ids = mc.add_traces(brain, [mc.NewTrace(f"fact number {i}") for i in range(5)], identity=SYSTEM)
    stub = StubEmbedder()
    assert embed_traces(brain, stub, ids[:2]) == 2
    assert traces_missing_embeddings(brain, stub.name) == ids[2:]
    assert count_missing_embeddings(brain, stub.name) == 3
    assert embed_missing(brain, stub, batch_size=2) == 3
    assert stub.texts_embedded == 5  # nothing was embedded twice
    assert traces_missing_embeddings(brain, stub.name) == []
    loaded_ids, matrix = load_vectors(brain, stub.name)
    assert loaded_ids == ids
    expected = StubEmbedder().embed([f"fact number {i}" for i in range(5)])
    assert matrix.dtype == np.float32 and np.array_equal(matrix, expected)


def test_rerunning_a_backfill_changes_nothing_and_embeds_nothing(
    brain: mc.Brain, digest: Callable[[mc.Brain], str]
) -> None:
    ids = mc.add_traces(brain, [mc.NewTrace(f"note {i}") for i in range(3)], identity=SYSTEM)
    stub = StubEmbedder()
    assert embed_missing(brain, stub) == 3
    before, calls = digest(brain), stub.calls
    assert embed_missing(brain, stub) == 0
    assert embed_traces(brain, stub, ids) == 0
    assert (digest(brain), stub.calls) == (before, calls)


def test_vectors_are_little_endian_float32_blobs_per_model(brain: mc.Brain) -> None:
    tid = mc.add_trace(brain, "blue is my colour", identity=SYSTEM)
    vec = np.array([[0.6, 0.8, 0.0]], dtype=np.float32)
    digest = content_hash("blue is my colour")
    assert store_vectors(brain, "m3", [tid], vec, content_hashes=[digest]) == 1
    embed_traces(brain, StubEmbedder(), [tid])
    rows = stored_rows(brain)
    assert rows[(tid, "m3")] == (3, vec.astype("<f4").tobytes())
    assert rows[(tid, "stub")][0] == 64
    assert load_vectors(brain, "m3")[1].tolist() == vec.tolist()


def test_a_trace_edited_while_it_was_embedded_gets_no_stale_vector(brain: mc.Brain) -> None:
    edited = mc.add_trace(brain, "the user lives in paris", identity=SYSTEM)
    kept = mc.add_trace(brain, "the user owns a bicycle", identity=SYSTEM)
    stub = HookedStub(
        lambda: mc.update_trace(brain, edited, content="the user lives in rome", identity=SYSTEM)
    )
    assert embed_missing(brain, stub) == 1
    assert traces_missing_embeddings(brain, stub.name) == [edited]
    # The next backfill embeds the new content.
    plain = StubEmbedder()
    assert embed_missing(brain, plain) == 1
    ids, matrix = load_vectors(brain, plain.name)
    assert ids == [edited, kept]
    assert np.array_equal(matrix[0], plain.embed(["the user lives in rome"])[0])


def test_deleted_traces_are_never_embedded_or_loaded(brain: mc.Brain) -> None:
    gone, dying, alive = mc.add_traces(
        brain,
        [mc.NewTrace("old fact"), mc.NewTrace("doomed fact"), mc.NewTrace("live fact")],
        identity=SYSTEM,
    )
    mc.delete_trace(brain, gone, identity=SYSTEM)
    stub = HookedStub(lambda: mc.delete_trace(brain, dying, identity=SYSTEM))
    assert traces_missing_embeddings(brain, stub.name) == [dying, alive]
    assert embed_traces(brain, stub, [gone, dying, alive]) == 1
    assert stub.texts_embedded == 2  # the already-deleted one was not even read
    assert {k[0] for k in stored_rows(brain)} == {alive}
    # A vector stored before deletion stays in the table but is not loaded.
    mc.delete_trace(brain, alive, identity=SYSTEM)
    ids, matrix = load_vectors(brain, stub.name)
    assert ids == [] and matrix.shape == (0, 0)


def test_unknown_ids_and_duplicates_are_skipped(brain: mc.Brain) -> None:
    tid = mc.add_trace(brain, "only one", identity=SYSTEM)
    stub = StubEmbedder()
    assert embed_traces(brain, stub, [tid, "mt_nope", tid]) == 1
    assert stub.texts_embedded == 1


def test_an_embedder_answer_of_the_wrong_shape_stores_nothing(brain: mc.Brain) -> None:
    class Broken(StubEmbedder):
        def embed(self, texts: Sequence[str]) -> Vectors:
            return super().embed(list(texts)[:-1])

    mc.add_traces(brain, [mc.NewTrace("a fact"), mc.NewTrace("b fact")], identity=SYSTEM)
    with pytest.raises(EmbedderError, match="shape"):
        embed_missing(brain, Broken())
    assert stored_rows(brain) == {}


def test_an_embedder_failure_keeps_the_batches_already_stored(brain: mc.Brain) -> None:
    mc.add_traces(brain, [mc.NewTrace(f"item {i}") for i in range(4)], identity=SYSTEM)

    class FailsSecondTime(StubEmbedder):
        def embed(self, texts: Sequence[str]) -> Vectors:
            if self.calls == 1:
                raise EmbedderError("endpoint down")
            return super().embed(texts)

    with pytest.raises(EmbedderError):
        embed_missing(brain, FailsSecondTime(), batch_size=2)
    assert len(stored_rows(brain)) == 2
    assert embed_missing(brain, StubEmbedder(), batch_size=2) == 2


def test_store_vectors_refuses_mismatched_or_non_finite_input(brain: mc.Brain) -> None:
    tid = mc.add_trace(brain, "x marks", identity=SYSTEM)
    h = [content_hash("x marks")]
    with pytest.raises(InvalidArgument):
        store_vectors(brain, "m", [tid], np.ones((2, 3), dtype=np.float32), content_hashes=h)
    with pytest.raises(InvalidArgument):
        store_vectors(brain, "m", [tid], np.full((1, 3), np.nan, np.float32), content_hashes=h)
    assert store_vectors(brain, "m", [tid], np.ones((1, 3)), content_hashes=["stale"]) == 0
    assert stored_rows(brain) == {}


def test_load_vectors_skips_rows_of_another_dimension(brain: mc.Brain) -> None:
    a, b = mc.add_traces(brain, [mc.NewTrace("first"), mc.NewTrace("second")], identity=SYSTEM)
    store_vectors(brain, "m", [a], np.ones((1, 4)), content_hashes=[content_hash("first")])
    store_vectors(brain, "m", [b], np.ones((1, 2)), content_hashes=[content_hash("second")])
    ids, matrix = load_vectors(brain, "m")
    assert ids == [a] and matrix.shape == (1, 4)
    ids, matrix = load_vectors(brain, "m", dim=2)
    assert ids == [b] and matrix.shape == (1, 2)
    assert load_vectors(brain, "other", dim=5)[1].shape == (0, 5)


class _Crowded(StubEmbedder):
    """A local model: it counts how many batches run at once."""

    def __init__(self) -> None:
        super().__init__()
        self.batch_lock = threading.Lock()
        self.running = 0
        self.most = 0
        self._count = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Vectors:
        with self._count:
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(0.02)
        try:
            return super().embed(texts)
        finally:
            with self._count:
                self.running -= 1


def test_a_local_model_embeds_one_batch_at_a_time_and_a_query_never_waits(
    brain: mc.Brain,
) -> None:
    ids = [mc.add_trace(brain, f"walk number {n} on the ridge", identity=SYSTEM) for n in range(24)]
    model = _Crowded()
    threads = [
        threading.Thread(
            target=embed_traces, args=(brain, model, ids[k::4]), kwargs={"batch_size": 2}
        )
        for k in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert model.most == 1
    with brain.read() as conn:
        assert conn.execute(text("SELECT count(*) FROM trace_embeddings")).scalar_one() == 24
    with model.batch_lock:  # a batch is running: a query's embedding goes ahead anyway
        assert model.embed(["where did we walk"]).shape == (1, model.dim)


def test_trace_vectors_take_the_model_before_what_supersession_embeds() -> None:
    turns = BatchTurns(yield_s=5.0)
    order: list[str] = []

    def run(name: str, door: Callable[[], AbstractContextManager[None]]) -> threading.Thread:
        def body() -> None:
            with door():
                order.append(name)

        thread = threading.Thread(target=body)
        thread.start()
        return thread

    with turns.first():  # a batch is running
        later = run("said", turns.later)
        time.sleep(0.05)  # the supersession batch waits first ...
        first = run("trace", turns.first)
        time.sleep(0.05)
        assert order == []  # one batch at a time
    for thread in (later, first):
        thread.join(2)
    assert order == ["trace", "said"]  # ... and the trace's vector goes ahead of it


def test_what_supersession_embeds_is_not_starved_by_trace_vectors() -> None:
    turns = BatchTurns(yield_s=0.2)
    stop = threading.Event()
    said_at: list[float] = []
    trying: list[str] = []

    def trace_batches() -> None:  # two threads: one always waits while one runs
        while not stop.is_set():
            trying.append(threading.current_thread().name)
            with turns:
                time.sleep(0.01)

    workers = [threading.Thread(target=trace_batches, daemon=True) for _ in range(2)]
    for thread in workers:
        thread.start()
    starved = threading.Timer(30, stop.set)  # starving, it would wait for ever
    starved.start()
    try:
        deadline = time.monotonic() + 10
        while not all(t.name in trying for t in workers) or len(trying) < 4:
            assert time.monotonic() < deadline  # both threads are at the door by now
            time.sleep(0.01)
        asked = time.monotonic()
        with turns.later():
            said_at.append(time.monotonic() - asked)
    finally:
        stop.set()
        starved.cancel()
    for thread in workers:
        thread.join(2)
    # It gave way for its yield time, then went next: never the starving wait of starvation.
    assert 0.15 <= said_at[0] < 10
