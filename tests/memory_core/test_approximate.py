"""The vector channel's approximate graph: the same answers as the exact index, kept
current from the change log, built in the background, saved and restored."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.embeddings import store_vectors
from memory_core.errors import ChannelUnavailable
from memory_core.retrieval import approximate
from memory_core.retrieval.approximate import ApproximateIndex, ApproximateScores
from memory_core.retrieval.dense import allowed_rows, score_all
from memory_core.retrieval.vector_index import VectorIndex, VectorIndexes

DIM = 24


def _settings(settings: mc.Settings, threshold: int = 1) -> mc.Settings:
    return settings.model_copy(update={"search_approximate_from": threshold})


def _clustered(rng: np.random.Generator, n: int) -> npt.NDArray[np.float32]:
    """Unit vectors around a few centres, as a model's vectors cluster by topic."""
    centres = rng.standard_normal((12, DIM))
    vectors = centres[rng.integers(12, size=n)] + 0.6 * rng.standard_normal((n, DIM))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype(np.float32)


def _store(brain: mc.Brain, ids: Sequence[str], vectors: npt.NDArray[np.float32]) -> None:
    hashes = [mc.get_trace(brain, i, identity=SYSTEM).content_hash for i in ids]
    store_vectors(brain, "unit", list(ids), vectors, content_hashes=hashes)


def _traces(brain: mc.Brain, n: int, streams: int = 7) -> list[str]:
    return mc.add_traces(
        brain,
        [
            mc.NewTrace(f"turn {i}", stream=f"s{i % streams}", scope_id=f"u{i % 3}")
            for i in range(n)
        ],
        identity=SYSTEM,
    )


def _graph(brain: mc.Brain) -> ApproximateIndex:
    with brain.read() as conn:
        index = brain.state(VectorIndexes).channel(conn, brain, "unit")
    assert isinstance(index, ApproximateIndex)
    return index


def _ready(index: ApproximateIndex, brain: mc.Brain) -> approximate.ApproximateSnapshot:
    """The graph's snapshot once its background build is done."""
    for _ in range(3):
        try:
            with brain.read() as conn:
                return index.snapshot(conn)
        except ChannelUnavailable:
            assert index.wait(60)
    raise AssertionError("the graph was never built")


def _exact_best(brain: mc.Brain, query: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
    with brain.read() as conn:
        snap = VectorIndex("unit", brain.settings.search_neighbour_smoothing).snapshot(conn)
    return score_all(snap, query, None).best(k)


def _same(got: list[tuple[int, float]], exact: list[tuple[int, float]]) -> None:
    """The same best traces: equal scores rank by rank (the exact index holds its raw
    vectors at half precision, so scores differ in the fourth decimal and near ties may
    swap), and every trace of one not in the other only by such a tie."""
    assert len(got) == len(exact)
    assert [v for _, v in got] == pytest.approx([v for _, v in exact], abs=1e-3)
    edge = exact[-1][1]
    for seq, value in got:
        assert seq in {q for q, _ in exact} or abs(value - edge) < 1e-3


def test_the_graph_answers_as_the_exact_index_does(settings: mc.Settings) -> None:
    brain = mc.open_brain(_settings(settings))
    rng = np.random.default_rng(3)
    ids = _traces(brain, 600)
    _store(brain, ids, _clustered(rng, len(ids)))
    index = _graph(brain)
    snap = _ready(index, brain)
    queries = _clustered(rng, 20)
    with brain.read() as conn:
        for query in queries:
            graph = ApproximateScores(conn, snap, query)
            exact = _exact_best(brain, query, 10)
            _same(graph.best(10), exact)
            # Every score is exact, the smoothing with stream neighbours included.
            with brain.read() as other:
                ref = VectorIndex("unit", brain.settings.search_neighbour_smoothing).snapshot(other)
            scores = score_all(ref, query, None)
            top = exact[0][0]
            assert graph.of(top) == pytest.approx(scores.of(top), abs=1e-3)
    brain.close()


def test_a_selective_filter_scores_every_trace_it_allows(settings: mc.Settings) -> None:
    brain = mc.open_brain(_settings(settings))
    rng = np.random.default_rng(4)
    ids = _traces(brain, 300)
    _store(brain, ids, _clustered(rng, len(ids)))
    snap = _ready(_graph(brain), brain)
    query = _clustered(rng, 1)[0]
    with brain.read() as conn:
        where, params = "t.scope_id = :s AND t.deleted = 0", {"s": "u1"}
        rows = allowed_rows(conn, snap, where, params)
        graph = ApproximateScores(conn, snap, query, rows)
        ref = VectorIndex("unit", brain.settings.search_neighbour_smoothing).snapshot(conn)
        exact = score_all(ref, query, allowed_rows(conn, ref, where, params))
        _same(graph.best(5), exact.best(5))
        assert graph.high == pytest.approx(exact.high, abs=1e-3)
    assert len(rows) == 100
    brain.close()


def test_the_graph_follows_changes_as_the_exact_index_does(settings: mc.Settings) -> None:
    brain = mc.open_brain(_settings(settings))
    rng = np.random.default_rng(5)
    ids = _traces(brain, 200, streams=2)
    vectors = _clustered(rng, 200)
    _store(brain, ids[:120], vectors[:120])
    index = _graph(brain)
    _ready(index, brain)
    # New vectors (whose stream neighbours change with them), a replaced one and a
    # removed one, each followed by a search.
    _store(brain, ids[120:150], vectors[120:150])
    _store(brain, ids[:1], _clustered(rng, 1))
    mc.update_trace(brain, ids[7], content="turn seven, edited", identity=SYSTEM)
    for query in _clustered(rng, 5):
        with brain.read() as conn:
            snap = index.snapshot(conn)
            assert not snap.pending  # a few changes are taken in as the search waits
            got = ApproximateScores(conn, snap, query).best(10)
        _same(got, _exact_best(brain, query, 10))
    seq7 = mc.get_trace(brain, ids[7], identity=SYSTEM).seq
    assert snap.row(seq7) is None
    brain.close()


def test_a_large_backlog_is_searched_exactly_while_the_graph_catches_up(
    settings: mc.Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    brain = mc.open_brain(_settings(settings))
    rng = np.random.default_rng(6)
    ids = _traces(brain, 300)
    vectors = _clustered(rng, 300)
    _store(brain, ids[:100], vectors[:100])
    index = _graph(brain)
    _ready(index, brain)
    started: list[object] = []
    monkeypatch.setattr(index, "_start", started.append)  # the graph stays behind
    _store(brain, ids[100:], vectors[100:])  # more changes than a search waits for
    with brain.read() as conn:
        snap = index.snapshot(conn)
        assert started and len(snap.pending) == 200
        query = vectors[250]
        got = ApproximateScores(conn, snap, query).best(10)
    _same(got, _exact_best(brain, query, 10))
    # The query is one of the traces the graph lacks: found all the same, with or
    # without a filter that names the traces allowed.
    wanted = mc.get_trace(brain, ids[250], identity=SYSTEM).seq
    assert wanted in [q for q, _ in got]
    with brain.read() as conn:
        where, params = "t.scope_id = :s AND t.deleted = 0", {"s": f"u{250 % 3}"}
        rows = allowed_rows(conn, snap, where, params)
        scoped = ApproximateScores(conn, snap, query, rows).best(10)
    assert len(rows) == 100 and wanted in [q for q, _ in scoped]
    brain.close()


def test_search_goes_on_without_the_channel_until_the_graph_is_built(
    settings: mc.Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_core.embedders.stub import StubEmbedder
    from memory_core.embeddings import embed_missing

    brain = mc.open_brain(_settings(settings))
    stub = StubEmbedder()
    mc.add_traces(brain, [mc.NewTrace("kiwis are green"), mc.NewTrace("figs")], identity=SYSTEM)
    embed_missing(brain, stub)
    # The graph is built in the background; it is held until the first search has
    # answered, so that search never depends on the build being slower than it.
    built = threading.Event()
    run = ApproximateIndex._run

    def held(index: ApproximateIndex, work: Any) -> None:
        built.wait(60)
        run(index, work)

    monkeypatch.setattr(ApproximateIndex, "_run", held)
    first = mc.search(brain, "kiwis", embedder=stub, identity=SYSTEM)
    built.set()
    assert first.degraded == ["vector"] and len(first.results) == 1
    with brain.read() as conn:
        index = brain.state(VectorIndexes).channel(conn, brain, stub.name)
    assert isinstance(index, ApproximateIndex) and index.wait(60)
    later = mc.search(brain, "kiwis", embedder=stub, identity=SYSTEM)
    assert later.degraded == [] and later.channels == ["bm25", "vector"]
    assert [h.trace.id for h in later.results] == [h.trace.id for h in first.results]
    brain.close()


def test_a_saved_graph_is_restored_and_caught_up_by_the_next_process(
    settings: mc.Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = _settings(settings)
    brain = mc.open_brain(s)
    rng = np.random.default_rng(7)
    ids = _traces(brain, 150)
    vectors = _clustered(rng, 150)
    _store(brain, ids[:100], vectors[:100])
    first = _graph(brain)
    _ready(first, brain)
    assert first.cache is not None and first.cache.exists()
    brain.close()

    again = mc.open_brain(s)
    _store(again, ids[100:], vectors[100:])  # changes the saved graph lacks

    def no_build(conn: object) -> None:
        raise AssertionError("built afresh")

    monkeypatch.setattr(ApproximateIndex, "_build", no_build)
    index = _graph(again)
    snap = _ready(index, again)
    deadline = time.monotonic() + 60
    while (len(index) < 150 or snap.pending) and time.monotonic() < deadline:
        index.wait(60)  # the changes are caught up in the background
        snap = _ready(index, again)
    assert len(index) == 150 and not snap.pending
    query = vectors[120]
    with again.read() as conn:
        got = ApproximateScores(conn, snap, query).best(10)
    _same(got, _exact_best(again, query, 10))
    again.close()


def test_below_the_threshold_the_search_is_exact(settings: mc.Settings) -> None:
    brain = mc.open_brain(_settings(settings, threshold=1_000))
    ids = _traces(brain, 20)
    _store(brain, ids, _clustered(np.random.default_rng(8), 20))
    with brain.read() as conn:
        assert isinstance(brain.state(VectorIndexes).channel(conn, brain, "unit"), VectorIndex)
    brain.close()


def test_the_graph_library_and_the_embedder_runtime_load_in_either_order() -> None:
    """Some builds of the graph's library carry SIMD kernels that crash the embedder's
    runtime loaded after them (a search may build the graph before its first query is
    embedded)."""
    import subprocess
    import sys

    for first, second in (("usearch.index", "onnxruntime"), ("onnxruntime", "usearch.index")):
        done = subprocess.run(
            [sys.executable, "-c", f"import {first}; import {second}"],
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, (first, second, done.stderr[-500:])


def test_an_exact_index_grown_past_the_threshold_serves_until_the_graph_is_built(
    settings: mc.Settings,
) -> None:
    brain = mc.open_brain(_settings(settings, threshold=50))
    rng = np.random.default_rng(9)
    ids = _traces(brain, 80)
    vectors = _clustered(rng, 80)
    _store(brain, ids[:40], vectors[:40])
    indexes = brain.state(VectorIndexes)
    with brain.read() as conn:
        exact = indexes.channel(conn, brain, "unit")
        assert isinstance(exact, VectorIndex)
        exact.snapshot(conn)
    _store(brain, ids[40:], vectors[40:])  # past the threshold
    with brain.read() as conn:
        exact.snapshot(conn)
        assert indexes.channel(conn, brain, "unit") is exact  # the graph is being built
    graph = indexes._graphs[("unit", brain.settings.search_neighbour_smoothing)]
    assert graph.wait(60) and graph.ready
    with brain.read() as conn:
        assert indexes.channel(conn, brain, "unit") is graph
    assert indexes._indexes == {}  # the exact matrix is let go
    brain.close()


def test_a_graph_behind_a_pruned_log_is_built_afresh(settings: mc.Settings) -> None:
    from memory_core.retrieval.vector_index import prune_events

    brain = mc.open_brain(_settings(settings))
    rng = np.random.default_rng(10)
    ids = _traces(brain, 60)
    vectors = _clustered(rng, 60)
    _store(brain, ids[:30], vectors[:30])
    index = _graph(brain)
    _ready(index, brain)
    _store(brain, ids[30:], vectors[30:])
    mc.update_trace(brain, ids[0], content="turn zero, edited", identity=SYSTEM)
    with brain.transaction() as conn:
        assert prune_events(conn, keep=1) > 0  # the events the graph needs are gone
    with brain.read() as conn, pytest.raises(ChannelUnavailable):
        index.snapshot(conn)  # rebuilding
    snap = _ready(index, brain)
    seqs = [mc.get_trace(brain, i, identity=SYSTEM).seq for i in ids]
    assert snap.row(seqs[0]) is None and all(snap.row(q) == q for q in seqs[1:])
    assert len(index) == 59
    brain.close()
