"""Hybrid search: channels, fusion, filters first, degraded mode, as_of, score breakdown."""

from __future__ import annotations

import dataclasses
import math
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.embedders.base import Vectors
from memory_core.embedders.stub import StubEmbedder
from memory_core.embeddings import embed_missing, store_vectors, to_blob
from memory_core.errors import EmbedderError
from memory_core.retrieval.dense import score_all
from memory_core.retrieval.vector_index import VectorIndex, index_for
from memory_core.traces.decay import DAY
from tests.backends import SQLITE_ONLY, write_apart


class FlakyEmbedder(StubEmbedder):
    """The stub's vectors, until ``broken`` is set: then every call fails."""

    def __init__(self) -> None:
        super().__init__()
        self.broken = False

    def embed(self, texts: Sequence[str]) -> Vectors:
        if self.broken:
            self.calls += 1
            raise EmbedderError("embedding endpoint unreachable")
        return super().embed(texts)


@pytest.fixture
def stub() -> FlakyEmbedder:
    return FlakyEmbedder()


def embedded(brain: mc.Brain, stub: StubEmbedder, items: Sequence[mc.NewTrace]) -> list[str]:
    ids = mc.add_traces(brain, items, identity=SYSTEM)
    embed_missing(brain, stub)
    return ids


def test_vector_channel_finds_what_bm25_does_not(brain: mc.Brain, stub: FlakyEmbedder) -> None:
    ids = embedded(
        brain,
        stub,
        [
            mc.NewTrace("teal is the favourite colour"),
            mc.NewTrace("a teal colour chart"),
            mc.NewTrace("the deploy runs on friday"),
        ],
    )
    # FTS5 ANDs the words: only the first trace has all three.
    response = mc.search(brain, "favourite colour teal", embedder=stub, identity=SYSTEM)
    assert response.channels == ["bm25", "vector"]
    assert [h.trace.id for h in response.results] == ids[:2]
    top, second = response.results
    assert top.channels["bm25"]["rank"] == 1 and top.channels["vector"]["rank"] == 1
    # Only the vector channel finds the second; the unrelated third is not returned.
    assert "bm25" not in second.channels and second.channels["vector"]["rank"] == 2


def test_every_result_carries_its_score_breakdown(brain: mc.Brain, stub: FlakyEmbedder) -> None:
    embedded(brain, stub, [mc.NewTrace(f"note {i} about otters and rivers") for i in range(5)])
    for hit in mc.search(brain, "otters", embedder=stub, identity=SYSTEM).results:
        assert set(hit.channels) == {"bm25", "vector"}
        for channel in hit.channels.values():
            assert channel["rank"] >= 1 and isinstance(channel["score"], float)
        assert set(hit.adjustments) == {"strength", "recency", "importance"}
        assert math.isclose(hit.score, hit.fused * math.prod(hit.adjustments.values()))
        shown = hit.to_dict()
        assert {"channels", "fused", "adjustments", "score"} <= set(shown)


def test_failing_embedder_degrades_to_bm25_and_says_so(
    brain: mc.Brain, stub: FlakyEmbedder
) -> None:
    ids = embedded(brain, stub, [mc.NewTrace("kiwis are green"), mc.NewTrace("plums are purple")])
    stub.broken = True
    response = mc.search(brain, "kiwis", embedder=stub, identity=SYSTEM)
    assert response.degraded == ["vector"]
    assert response.channels == ["bm25"]
    assert [h.trace.id for h in response.results] == [ids[0]]
    assert set(response.results[0].channels) == {"bm25"}
    assert response.to_dict()["degraded"] == ["vector"]
    # The failed embedder is not asked again at once: the next search answers
    # without waiting for it.
    calls = stub.calls
    again = mc.search(brain, "plums", embedder=stub, identity=SYSTEM)
    assert again.degraded == ["vector"] and stub.calls == calls
    assert [h.trace.id for h in again.results] == [ids[1]]


def test_embedder_that_recovers_is_used_again_after_the_pause(
    settings: mc.Settings, stub: FlakyEmbedder
) -> None:
    brain = mc.open_brain(settings.model_copy(update={"search_embed_retry_s": 0.0}))
    embedded(brain, stub, [mc.NewTrace("kiwis are green")])
    stub.broken = True
    assert mc.search(brain, "kiwis", embedder=stub, identity=SYSTEM).degraded == ["vector"]
    stub.broken = False
    assert mc.search(brain, "kiwis", embedder=stub, identity=SYSTEM).degraded == []


def test_a_brain_without_vectors_has_no_vector_channel_and_no_degradation(
    brain: mc.Brain, stub: FlakyEmbedder
) -> None:
    mc.add_trace(brain, "kiwis are green", identity=SYSTEM)
    response = mc.search(brain, "kiwis", embedder=stub, identity=SYSTEM)
    assert response.channels == ["bm25"] and response.degraded == []
    assert stub.calls == 0  # nothing to compare the query with: it is not embedded


def test_filtered_out_traces_never_displace_a_match(settings: mc.Settings) -> None:
    # Each channel ranks only two candidates: if filters applied after
    # ranking, the many better matches of scope "bob" would fill both slots.
    brain = mc.open_brain(settings.model_copy(update={"search_candidates": 2}))
    stub = StubEmbedder()
    crowd = [
        mc.NewTrace("otters otters otters swim", scope_id="bob", type="semantic") for _ in range(20)
    ]
    mine = mc.NewTrace("an otter was seen once near the old mill", scope_id="alice")
    ids = embedded(brain, stub, [*crowd, mine])
    for kwargs in ({"scope_id": "alice"}, {"type": "episodic"}, {"tags": ["x"]}):
        if kwargs == {"tags": ["x"]}:
            mc.update_trace(brain, ids[-1], tags=["x"], identity=SYSTEM)
            embed_missing(brain, stub)
        hits = mc.search(
            brain, "otters swim", limit=1, embedder=stub, **kwargs, identity=SYSTEM
        ).results
        assert [h.trace.id for h in hits] == [ids[-1]], kwargs
    # Deleted traces are filtered first too, in both channels.
    for trace_id in ids[:-1]:
        mc.delete_trace(brain, trace_id, identity=SYSTEM)
    hits = mc.search(brain, "otters swim", limit=1, embedder=stub, identity=SYSTEM).results
    assert [h.trace.id for h in hits] == [ids[-1]]


def test_as_of_shows_what_was_valid_then(brain: mc.Brain) -> None:
    old = mc.add_trace(brain, "alice lives in porto", occurred_at=100.0, now=100.0, identity=SYSTEM)
    later = mc.add_trace(
        brain, "alice lives in lisbon", occurred_at=300.0, now=300.0, identity=SYSTEM
    )
    gone = mc.add_trace(brain, "alice lives in faro", occurred_at=50.0, now=50.0, identity=SYSTEM)
    mc.delete_trace(brain, old, now=400.0, identity=SYSTEM)  # superseded later
    mc.delete_trace(brain, gone, now=80.0, identity=SYSTEM)  # deleted before the time asked about

    def found(**kwargs: float) -> set[str]:
        return {
            h.trace.id
            for h in mc.search(
                brain, "alice lives", **kwargs, embedder=None, identity=SYSTEM
            ).results
        }

    assert found(as_of=200.0) == {old}  # deleted later: shown; happened later: not
    assert found(as_of=350.0) == {later, old}
    assert found(as_of=60.0) == {gone}
    assert found(as_of=500.0) == {later}
    assert found() == {later}  # without as_of: what is active now


def test_as_of_keeps_traces_merged_away_later(brain: mc.Brain) -> None:
    a = mc.add_trace(brain, "bob likes tea", occurred_at=10.0, now=10.0, identity=SYSTEM)
    b = mc.add_trace(brain, "bob likes green tea", occurred_at=20.0, now=20.0, identity=SYSTEM)
    result = mc.merge_traces(brain, [a, b], now=100.0, identity=SYSTEM)
    gone = result.deleted_ids[0]
    assert gone in {
        h.trace.id
        for h in mc.search(brain, "bob tea", as_of=50.0, embedder=None, identity=SYSTEM).results
    }
    assert gone not in {
        h.trace.id for h in mc.search(brain, "bob tea", embedder=None, identity=SYSTEM).results
    }


def test_as_of_applies_to_the_vector_channel(brain: mc.Brain) -> None:
    stub = StubEmbedder()
    early = mc.NewTrace("otters in the river", occurred_at=100.0)
    late = mc.NewTrace("otters in the lake", occurred_at=900.0)
    ids = embedded(brain, stub, [early, late])
    hits = mc.search(brain, "otters", as_of=500.0, embedder=stub, identity=SYSTEM).results
    assert [h.trace.id for h in hits] == [ids[0]]


@pytest.mark.parametrize("bad", [True, float("nan"), float("inf"), "2023-05-08"])
def test_bad_as_of_is_refused(brain: mc.Brain, bad: object) -> None:
    with pytest.raises(mc.InvalidArgument, match=r"^as_of must be a time"):
        mc.search(brain, "x", as_of=bad, embedder=None, identity=SYSTEM)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["yesterday-ish", "", "nan", True])
def test_unreadable_times_are_refused_naming_the_field(bad: object) -> None:
    with pytest.raises(mc.InvalidArgument, match=r"^as_of: not"):
        mc.parse_time(bad, "as_of")  # type: ignore[arg-type]


def test_times_read_as_iso_or_epoch() -> None:
    assert mc.parse_time("2023-05-08T00:00:00Z") == 1683504000.0
    assert mc.parse_time("2023-05-08") == 1683504000.0  # naive: UTC
    assert mc.parse_time("1683504000") == 1683504000.0
    assert mc.parse_time(12) == 12.0 and mc.parse_time(None) is None


def test_vectors_written_later_reach_the_next_search_without_a_reload(
    brain: mc.Brain, stub: FlakyEmbedder
) -> None:
    first = embedded(brain, stub, [mc.NewTrace("quiet note about lanterns")])
    assert mc.search(brain, "lanterns", embedder=stub, identity=SYSTEM).channels == [
        "bm25",
        "vector",
    ]
    # Another process writes a vector straight into the file: the triggers log
    # it, and the in-memory index picks it up.
    second = mc.add_trace(brain, "paper lanterns at the festival", identity=SYSTEM)
    vector = stub.embed(["paper lanterns at the festival"])[0]
    write_apart(
        brain.url,
        "INSERT INTO trace_embeddings (trace_id, model, dim, vector, created_at) "
        "VALUES (:id, 'stub', :dim, :v, 0)",
        {"id": second, "dim": len(vector), "v": to_blob(vector)},
    )
    hits = mc.search(brain, "lanterns festival", embedder=stub, identity=SYSTEM).results
    assert {h.trace.id for h in hits if "vector" in h.channels} == {first[0], second}
    # An edit drops the trace's vector: the channel stops ranking it until it
    # is embedded again.
    mc.update_trace(brain, second, content="paper lanterns, rained off", identity=SYSTEM)
    hits = mc.search(brain, "lanterns", embedder=stub, identity=SYSTEM).results
    assert {h.trace.id for h in hits if "vector" in h.channels} == {first[0]}
    embed_missing(brain, stub)
    hits = mc.search(brain, "lanterns", embedder=stub, identity=SYSTEM).results
    assert {h.trace.id for h in hits if "vector" in h.channels} == {first[0], second}


def test_a_turn_is_found_through_the_turn_before_it(settings: mc.Settings) -> None:
    turns = [
        mc.NewTrace("Ann: where did you go hiking last weekend?", stream="c1"),
        mc.NewTrace("Ben: up to the glacier with my brother", stream="c1"),
        mc.NewTrace("Ann: hiking boots are on sale", stream="c2"),
    ]
    brain = mc.open_brain(settings)
    ids = mc.add_traces(brain, turns, identity=SYSTEM)
    reply = mc.get_trace(brain, ids[1], identity=SYSTEM)
    assert reply.prev_seq == mc.get_trace(brain, ids[0], identity=SYSTEM).seq
    assert mc.get_trace(brain, ids[2], identity=SYSTEM).prev_seq is None  # another stream
    found = [
        h.trace.id
        for h in mc.search(brain, "where hiking weekend?", embedder=None, identity=SYSTEM).results
    ]
    assert ids[1] in found
    assert found.index(ids[0]) < found.index(ids[1])  # its own words rank first
    off = dataclasses.replace(
        brain, settings=settings.model_copy(update={"search_context_weight": 0.0})
    )
    assert ids[1] not in [
        h.trace.id
        for h in mc.search(off, "where hiking weekend?", embedder=None, identity=SYSTEM).results
    ]


def test_a_query_naming_one_speaker_lifts_that_speakers_turns(brain: mc.Brain) -> None:
    ids = mc.add_traces(
        brain,
        [
            mc.NewTrace("Ann: the pottery class was great", metadata={"speaker": "Ann"}),
            mc.NewTrace("Ben: I signed up for a pottery class", metadata={"speaker": "Ben"}),
        ],
        identity=SYSTEM,
    )
    hits = mc.search(
        brain, "When did Ben sign up for pottery?", embedder=None, identity=SYSTEM
    ).results
    assert hits[0].trace.id == ids[1] and hits[0].adjustments["speaker"] == 1.5
    both = mc.search(
        brain, "Did Ann and Ben take a pottery class?", embedder=None, identity=SYSTEM
    ).results
    assert all("speaker" not in h.adjustments for h in both)


def test_a_query_naming_a_time_lifts_what_happened_then(brain: mc.Brain) -> None:
    may = 1683504000.0  # 2023-05-08
    ids = mc.add_traces(
        brain,
        [
            mc.NewTrace("we went to the beach", occurred_at=may - 200 * DAY),
            mc.NewTrace("we went to the beach", occurred_at=may),
        ],
        identity=SYSTEM,
    )
    hits = mc.search(brain, "beach trip in May 2023", embedder=None, identity=SYSTEM).results
    assert hits[0].trace.id == ids[1] and hits[0].adjustments["time"] == 1.5


def test_strength_recency_and_importance_each_switch_off(settings: mc.Settings) -> None:
    off = settings.model_copy(
        update={
            "search_strength_weight": 0.0,
            "search_recency_weight": 0.0,
            "search_importance_weight": 0.0,
        }
    )
    brain = mc.open_brain(off)
    mc.add_trace(brain, "an old otter", importance=0.9, occurred_at=0.0, now=0.0, identity=SYSTEM)
    hit = mc.search(brain, "otter", embedder=None, identity=SYSTEM).results[0]
    assert hit.adjustments == {} and hit.score == hit.fused


def test_importance_and_recency_order_equal_matches(brain: mc.Brain) -> None:
    now = 1_000 * DAY
    low = mc.add_trace(
        brain, "meeting notes", importance=0.1, occurred_at=now, now=now, identity=SYSTEM
    )
    high = mc.add_trace(
        brain, "meeting notes", importance=0.9, occurred_at=now, now=now, identity=SYSTEM
    )
    old = mc.add_trace(
        brain, "meeting notes", importance=0.9, occurred_at=now - 90 * DAY, now=now, identity=SYSTEM
    )
    order = [
        h.trace.id
        for h in mc.search(brain, "meeting", now=now, embedder=None, identity=SYSTEM).results
    ]
    assert order == [high, low, old] or order == [high, old, low]
    assert order[0] == high


def test_rrf_fusion_orders_by_reciprocal_ranks(settings: mc.Settings) -> None:
    brain = mc.open_brain(settings.model_copy(update={"search_fusion": "rrf"}))
    stub = StubEmbedder()
    ids = embedded(brain, stub, [mc.NewTrace("otters swim"), mc.NewTrace("otters and beavers")])
    hits = mc.search(brain, "otters swim", embedder=stub, identity=SYSTEM).results
    assert hits[0].trace.id == ids[0]
    k = settings.search_rrf_k
    assert math.isclose(hits[0].fused, 0.5 / (k + 1) + 0.5 / (k + 1))


def _unit_vectors(brain: mc.Brain, ids: Sequence[str], rows: npt.NDArray[np.float32]) -> None:
    hashes = [mc.get_trace(brain, i, identity=SYSTEM).content_hash for i in ids]
    store_vectors(brain, "unit", list(ids), rows, content_hashes=hashes)


def test_neighbour_smoothing_lifts_the_answer_to_a_matching_question(
    settings: mc.Settings,
) -> None:
    brain = mc.open_brain(settings)
    ids = mc.add_traces(
        brain,
        [
            mc.NewTrace("Ann: did you like the museum?", stream="s"),
            mc.NewTrace("Ben: loved it", stream="s"),
            mc.NewTrace("an unrelated note"),
        ],
        identity=SYSTEM,
    )
    _unit_vectors(brain, ids, np.eye(3, dtype=np.float32))
    query = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    with brain.read() as conn:
        snap = index_for(brain, "unit").snapshot(conn)
    scores = score_all(snap, query, None)
    assert [scores.of(mc.get_trace(brain, i, identity=SYSTEM).seq) for i in ids] == pytest.approx(
        [1 / 1.5, 0.5 / 1.5, 0.0], rel=1e-3
    )  # the answer scores through its question; a trace outside any stream is unchanged


def test_index_kept_current_equals_one_loaded_afresh(settings: mc.Settings) -> None:
    brain = mc.open_brain(settings)
    rng = np.random.default_rng(1)
    ids = mc.add_traces(
        brain, [mc.NewTrace(f"turn {i}", stream="s") for i in range(8)], identity=SYSTEM
    )
    vectors = rng.standard_normal((8, 4)).astype(np.float32)
    index = index_for(brain, "unit")
    # Vectors arrive out of order, one is replaced and one removed, with
    # searches (catch-ups) in between.
    for batch in ([5, 1], [0, 7, 3], [2, 4, 6]):
        _unit_vectors(brain, [ids[i] for i in batch], vectors[batch])
        with brain.read() as conn:
            index.snapshot(conn)
    mc.update_trace(
        brain, ids[3], content="turn three, edited", identity=SYSTEM
    )  # drops its vector
    with brain.read() as conn:
        kept = index.snapshot(conn)
        fresh = VectorIndex("unit", settings.search_neighbour_smoothing).snapshot(conn)
    seqs = [mc.get_trace(brain, i, identity=SYSTEM).seq for i in ids]
    assert kept.row(seqs[3]) is None and fresh.row(seqs[3]) is None
    for seq in seqs:
        a, b = kept.row(seq), fresh.row(seq)
        if a is not None and b is not None:
            assert np.allclose(kept.matrix[a], fresh.matrix[b], atol=1e-6)


class FixedEmbedder:
    """Embeds every text as the one vector given (the traces' are stored by hand)."""

    name = "unit"
    dim = 3

    def __init__(self, vector: Sequence[float]) -> None:
        self.vector = np.asarray([vector], dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> Vectors:
        return np.repeat(self.vector, len(texts), axis=0)


def test_the_vector_channel_alone_returns_nothing_unrelated(brain: mc.Brain) -> None:
    ids = mc.add_traces(
        brain, [mc.NewTrace("tulips in spring"), mc.NewTrace("tax returns")], identity=SYSTEM
    )
    _unit_vectors(brain, ids, np.array([[1, 0, 0], [0.6, 0.8, 0]], dtype=np.float32))
    # Orthogonal to both: neither is related, so neither is returned.
    assert (
        mc.search(brain, "zebra", embedder=FixedEmbedder([0, 0, 1]), identity=SYSTEM).results == []
    )
    # Close to the first only (cosine 0.6; 0.0 to the second, below the 0.15 floor).
    near = FixedEmbedder([0.6, -0.45, 0.66])
    assert [
        h.trace.id for h in mc.search(brain, "zebra", embedder=near, identity=SYSTEM).results
    ] == [ids[0]]


def test_an_index_behind_a_pruned_log_reloads_instead_of_missing_changes(
    brain: mc.Brain,
) -> None:
    from memory_core.retrieval.vector_index import prune_events

    ids = mc.add_traces(brain, [mc.NewTrace(f"note {i}") for i in range(4)], identity=SYSTEM)
    index = index_for(brain, "unit")
    _unit_vectors(brain, ids[:2], np.eye(3, dtype=np.float32)[:2])
    with brain.read() as conn:
        assert len(index.snapshot(conn)) == 2
    _unit_vectors(brain, ids[2:], np.eye(3, dtype=np.float32)[1:])
    mc.update_trace(brain, ids[0], content="note zero, edited", identity=SYSTEM)  # its vector goes
    with brain.transaction() as conn:
        assert prune_events(conn, keep=1) > 0  # the events this index needs are gone
    with brain.read() as conn:
        snap = index.snapshot(conn)
    seqs = [mc.get_trace(brain, i, identity=SYSTEM).seq for i in ids]
    assert snap.row(seqs[0]) is None
    assert all(snap.row(q) is not None for q in seqs[1:])


def _fts_consistent(brain: mc.Brain) -> bool:
    from memory_core.brain.maintenance import _check_fts

    return _check_fts(brain) == []


def test_deleted_words_are_not_found_through_the_next_turn(brain: mc.Brain) -> None:
    secret, reply = mc.add_traces(
        brain,
        [
            mc.NewTrace("Ann: my passport number is XK123", stream="s"),
            mc.NewTrace("Ben: got it, noted", stream="s"),
        ],
        identity=SYSTEM,
    )
    assert {
        h.trace.id for h in mc.search(brain, "passport", embedder=None, identity=SYSTEM).results
    } == {
        secret,
        reply,
    }
    mc.delete_trace(brain, secret, identity=SYSTEM)
    assert mc.search(brain, "passport", embedder=None, identity=SYSTEM).results == []
    assert mc.get_trace(brain, reply, identity=SYSTEM).context == ""
    # A turn added after the deletion follows the last active turn, not the deleted one.
    later = mc.add_trace(brain, "Ann: what's the weather?", stream="s", identity=SYSTEM)
    assert (
        mc.get_trace(brain, later, identity=SYSTEM).prev_seq
        == mc.get_trace(brain, reply, identity=SYSTEM).seq
    )
    assert mc.search(brain, "passport", embedder=None, identity=SYSTEM).results == []
    assert _fts_consistent(brain)


def test_an_edited_turn_gives_the_next_turn_its_new_words(brain: mc.Brain) -> None:
    first, reply = mc.add_traces(
        brain,
        [
            mc.NewTrace("Ann: we meet in Porto", stream="s"),
            mc.NewTrace("Ben: see you there", stream="s"),
        ],
        identity=SYSTEM,
    )
    mc.update_trace(brain, first, content="Ann: we meet in Lisbon", identity=SYSTEM)
    assert reply not in {
        h.trace.id for h in mc.search(brain, "Porto", embedder=None, identity=SYSTEM).results
    }
    assert reply in {
        h.trace.id for h in mc.search(brain, "Lisbon", embedder=None, identity=SYSTEM).results
    }
    assert mc.get_trace(brain, reply, identity=SYSTEM).context == "Ann: we meet in Lisbon"
    assert _fts_consistent(brain)


def test_a_deleted_trace_leaves_the_vector_channel_and_its_neighbours(
    brain: mc.Brain,
) -> None:
    ids = mc.add_traces(
        brain,
        [mc.NewTrace("Ann: the secret", stream="s"), mc.NewTrace("Ben: ok", stream="s")],
        identity=SYSTEM,
    )
    _unit_vectors(brain, ids, np.eye(3, dtype=np.float32)[:2])
    query = FixedEmbedder([1, 0, 0])
    before = {
        h.trace.id: h for h in mc.search(brain, "zzz", embedder=query, identity=SYSTEM).results
    }
    assert set(before) == set(ids)  # the reply through its neighbour (1 / 1.5 cosine)
    mc.delete_trace(brain, ids[0], identity=SYSTEM)
    with brain.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM trace_embeddings").scalar() == 1
    assert mc.search(brain, "zzz", embedder=query, identity=SYSTEM).results == []


# -- the vector channel never fails a search ---------------------------------


class BuggyEmbedder(StubEmbedder):
    """Raises what a bug or a foreign client library would, not EmbedderError."""

    def __init__(self) -> None:
        super().__init__()
        self.fail = False

    def embed(self, texts: Sequence[str]) -> Vectors:
        if self.fail:
            self.calls += 1
            raise RuntimeError("connection reset by peer")
        return super().embed(texts)


def test_an_embedder_raising_anything_degrades_search_and_is_paused(brain: mc.Brain) -> None:
    buggy = BuggyEmbedder()
    ids = embedded(brain, buggy, [mc.NewTrace("kiwis are green")])
    buggy.fail = True
    response = mc.search(brain, "kiwis green", embedder=buggy, identity=SYSTEM)
    assert response.degraded == ["vector"] and [h.trace.id for h in response.results] == ids
    calls = buggy.calls
    assert mc.search(brain, "kiwis again", embedder=buggy, identity=SYSTEM).degraded == ["vector"]
    assert buggy.calls == calls  # paused, not asked again


class HungEmbedder(StubEmbedder):
    """Answers "fast" at once; anything else hangs until released (30 s at most)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.asked: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.asked.append(list(texts))
        if texts != ["fast"]:
            self.release.wait(30)
        return super().embed(texts)


def test_a_slow_embedder_is_given_up_on_and_a_cached_query_does_not_wait(
    settings: mc.Settings,
) -> None:
    brain = mc.open_brain(settings.model_copy(update={"search_embed_timeout_s": 0.2}))
    hung = HungEmbedder()
    hung.release.set()
    embed_missing(brain, hung)  # nothing yet
    hung.release.clear()
    mc.add_trace(brain, "kiwis are green", identity=SYSTEM)
    embed_missing(brain, StubEmbedder())  # the same vectors, without the wait
    try:
        assert mc.search(brain, "fast", embedder=hung, identity=SYSTEM).degraded == []
        started = time.monotonic()
        assert mc.search(brain, "kiwis", embedder=hung, identity=SYSTEM).degraded == ["vector"]
        assert time.monotonic() - started < 15  # given up on, not waited for (30 s)
        asked = len(hung.asked)
        assert mc.search(brain, "fast", embedder=hung, identity=SYSTEM).degraded == []
        assert len(hung.asked) == asked  # cached: not asked again, so no wait
    finally:
        hung.release.set()


def test_an_embedder_that_cannot_be_made_leaves_bm25_working(settings: mc.Settings) -> None:
    runtime = mc.Runtime.open(settings.model_copy(update={"embedder": "openai"}))  # no endpoints
    brain = runtime.brain
    trace_id = mc.add_trace(brain, "kiwis are green", identity=SYSTEM)
    response = mc.search(brain, "kiwis", embedder=runtime.query_embedder, identity=SYSTEM)
    assert [h.trace.id for h in response.results] == [trace_id]
    assert response.degraded == ["vector"]


def test_vectors_of_another_dimension_degrade_without_embedding_the_query(
    brain: mc.Brain,
) -> None:
    embedded(brain, StubEmbedder(dim=8), [mc.NewTrace("kiwis are green")])
    other = StubEmbedder(dim=16)  # same name, another dimension
    response = mc.search(brain, "kiwis", embedder=other, identity=SYSTEM)
    assert response.degraded == ["vector"] and len(response.results) == 1
    assert other.calls == 0


@dataclasses.dataclass(eq=True)
class HashlessEmbedder:
    """A dataclass with eq=True: unhashable, and fine as an embedder."""

    name: str = "stub"
    dim: int = 64

    def embed(self, texts: Sequence[str]) -> Vectors:
        return StubEmbedder().embed(texts)


def test_an_unhashable_embedder_is_usable(brain: mc.Brain) -> None:
    ids = embedded(brain, StubEmbedder(), [mc.NewTrace("kiwis are green")])
    response = mc.search(brain, "kiwis", embedder=HashlessEmbedder(), identity=SYSTEM)  # type: ignore[arg-type]
    assert response.channels == ["bm25", "vector"] and [h.trace.id for h in response.results] == ids


def test_a_search_while_the_index_loads_answers_from_bm25_at_once(brain: mc.Brain) -> None:
    stub = StubEmbedder()
    embedded(brain, stub, [mc.NewTrace("kiwis are green")])
    index = index_for(brain, stub.name)
    with index._lock:  # another search is loading the vectors
        response = mc.search(brain, "kiwis", embedder=stub, identity=SYSTEM)
    assert response.degraded == ["vector"] and len(response.results) == 1
    assert mc.search(brain, "kiwis", embedder=stub, identity=SYSTEM).degraded == []


def test_a_failed_catch_up_is_retried_in_full(
    brain: mc.Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    stub = StubEmbedder()
    ids = embedded(brain, stub, [mc.NewTrace("kiwis are green")])
    assert mc.search(brain, "kiwis", embedder=stub, identity=SYSTEM).channels == ["bm25", "vector"]
    mc.update_trace(brain, ids[0], content="kiwis are brown", identity=SYSTEM)
    embed_missing(brain, stub)
    index = index_for(brain, stub.name)
    broken = index._catch_up

    def fail(*args: object) -> None:
        raise MemoryError("no room")

    monkeypatch.setattr(index, "_catch_up", fail)
    assert mc.search(brain, "kiwis", embedder=stub, identity=SYSTEM).degraded == ["vector"]
    monkeypatch.setattr(index, "_catch_up", broken)
    with brain.read() as conn:
        snap = index.snapshot(conn)
    row = snap.row(mc.get_trace(brain, ids[0], identity=SYSTEM).seq)
    assert row is not None
    expected = stub.embed(["kiwis are brown"])[0]
    assert np.allclose(snap.matrix[row], expected, atol=1e-3)


@SQLITE_ONLY  # a copy of the file
def test_an_exported_copy_never_shares_the_original_vectors(
    brain: mc.Brain, tmp_path: Path
) -> None:
    stub = StubEmbedder()
    [trace_id] = embedded(brain, stub, [mc.NewTrace("cherries in spring")])
    assert mc.search(brain, "cherries", embedder=stub, identity=SYSTEM).channels == [
        "bm25",
        "vector",
    ]
    copy_path = tmp_path / "copy.sqlite"
    with sqlite3.connect(brain.path) as raw:
        raw.execute("VACUUM INTO ?", (str(copy_path),))
    copy = mc.open_brain(brain.settings, url=f"sqlite:///{copy_path}")
    assert copy.brain_id == brain.brain_id  # same id, another file
    zebra = to_blob(stub.embed(["zebra stripes"])[0])
    with copy.transaction() as conn:
        conn.execute(text("UPDATE trace_embeddings SET vector = :v"), {"v": zebra})
    embedded(brain, stub, [mc.NewTrace("plums in autumn")])  # both files now at one event more
    in_copy = mc.search(copy, "zebra stripes", embedder=stub, identity=SYSTEM).results
    assert [h.trace.id for h in in_copy] == [trace_id]
    assert in_copy[0].channels["vector"]["score"] == pytest.approx(1.0, abs=1e-3)
    [own, *_] = mc.search(brain, "cherries", embedder=stub, identity=SYSTEM).results
    assert own.trace.id == trace_id
    expected = float(stub.embed(["cherries"])[0] @ stub.embed(["cherries in spring"])[0])
    assert own.channels["vector"]["score"] == pytest.approx(expected, abs=1e-3)


def test_overlapping_searches_leave_blas_threads_as_they_found_them(brain: mc.Brain) -> None:
    from threadpoolctl import threadpool_info

    def blas_threads() -> list[int]:
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    stub = StubEmbedder()
    embedded(brain, stub, [mc.NewTrace(f"note {i} about kiwis") for i in range(50)])
    before = blas_threads()
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for i in range(100):
                mc.search(brain, f"kiwis {i % 5}", embedder=stub, identity=SYSTEM)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and blas_threads() == before


def test_near_with_a_bad_distance_falls_back_to_plain_words(brain: mc.Brain) -> None:
    trace_id = mc.add_trace(brain, "apples and pears", identity=SYSTEM)
    response = mc.search(brain, "NEAR(apples pears, x)", embedder=None, identity=SYSTEM)
    assert response.mode == "natural" and [h.trace.id for h in response.results] == [trace_id]


def test_an_as_of_search_ranks_as_it_would_have_then(brain: mc.Brain) -> None:
    then = 1_000 * DAY
    trace_id = mc.add_trace(brain, "meeting notes", occurred_at=then, now=then, identity=SYSTEM)
    hit = mc.search(brain, "meeting", as_of=then + DAY, embedder=None, identity=SYSTEM).results[0]
    assert hit.trace.id == trace_id
    assert hit.adjustments["recency"] > 1.09  # a day old then, not years


def test_a_search_inside_a_write_transaction_leaves_the_index_alone(brain: mc.Brain) -> None:
    stub = StubEmbedder()
    embedded(brain, stub, [mc.NewTrace("kiwis are green")])
    with brain.transaction():
        response = mc.search(brain, "kiwis", embedder=stub, identity=SYSTEM)
    assert response.degraded == ["vector"] and len(response.results) == 1
