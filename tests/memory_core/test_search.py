"""Search internals: natural-language query building and decayed strength."""

from __future__ import annotations

import math

import snowballstemmer

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.retrieval.search import natural_query
from memory_core.textutil import content_words, stem
from memory_core.traces.decay import DAY, effective_strength


def test_content_words_drop_stopwords_and_keep_order() -> None:
    assert content_words("What's the user's favourite colour?") == ["user", "favourite", "colour"]
    assert content_words("what is it") == ["what", "is", "it"]  # all stopwords: keep them


def test_stems_match_the_index_tokenizer(brain: mc.Brain) -> None:
    mc.add_trace(brain, "running deployments quickly", identity=SYSTEM)
    words = ("running", "deployments", "quickly")
    if brain.dialect == "postgresql":  # Snowball's English stemmer, every word kept
        english = snowballstemmer.stemmer("english")
        with brain.read() as conn:
            index = conn.exec_driver_sql(
                "SELECT DISTINCT unnest(tsvector_to_array(doc)) FROM memory_traces_fts"
            )
            assert {r[0] for r in index} == {english.stemWord(w) for w in words}
        return
    with brain.read() as conn:
        vocab = {r[0] for r in conn.exec_driver_sql("SELECT term FROM memory_traces_vocab")}
    assert {stem(w) for w in words} == vocab


def test_natural_query_drops_words_common_to_most_traces(tmp_path, brain_url) -> None:
    settings = mc.load_settings(
        brain_url=brain_url, search_term_share_min_docs=10, search_max_term_share=0.5
    )
    brain = mc.open_brain(settings)
    mc.add_traces(
        brain, [mc.NewTrace(f"caroline said thing {i}") for i in range(20)], identity=SYSTEM
    )
    mc.add_trace(brain, "caroline adopted a puppy", identity=SYSTEM)
    with brain.read() as conn:
        assert natural_query(conn, "Did Caroline adopt a puppy?", settings) == '"adopt" OR "puppy"'
        # When every word is that common, the rarest is kept rather than none.
        assert natural_query(conn, "caroline said?", settings) in ('"caroline"', '"said"')
    hits = mc.search(brain, "Did Caroline adopt a puppy?", embedder=None, identity=SYSTEM).results
    assert hits[0].trace.content == "caroline adopted a puppy"


def test_small_brains_keep_every_content_word(brain: mc.Brain, settings: mc.Settings) -> None:
    mc.add_traces(
        brain, [mc.NewTrace(f"caroline said thing {i}") for i in range(20)], identity=SYSTEM
    )
    with brain.read() as conn:
        assert natural_query(conn, "Did Caroline adopt?", settings) == '"caroline" OR "adopt"'


def test_quotes_in_words_cannot_break_the_query(brain: mc.Brain) -> None:
    mc.add_trace(brain, 'she said "hello" to bob', identity=SYSTEM)
    assert mc.search(brain, 'she said "hello to bob?', embedder=None, identity=SYSTEM).results


def test_strength_decays_from_last_access_and_slower_when_often_retrieved() -> None:
    kw = {"learnt_at": 0.0, "stability": 1.0, "base_days": 7.0, "growth": 1.0}
    fresh = effective_strength(1.0, last_accessed=None, retrieval_count=0, now=0.0, **kw)
    week = effective_strength(1.0, last_accessed=None, retrieval_count=0, now=7 * DAY, **kw)
    assert fresh == 1.0
    assert math.isclose(week, math.exp(-1))
    often = effective_strength(1.0, last_accessed=None, retrieval_count=15, now=7 * DAY, **kw)
    assert week < often < 1.0
    # Retrieved often, but long ago: still decays towards zero.
    long_ago = effective_strength(1.0, last_accessed=0.0, retrieval_count=15, now=365 * DAY, **kw)
    assert long_ago < 0.01
    refreshed = effective_strength(
        1.0, last_accessed=364 * DAY, retrieval_count=15, now=365 * DAY, **kw
    )
    assert refreshed > 0.9


def test_a_history_learnt_today_is_as_strong_as_what_was_said_today(brain: mc.Brain) -> None:
    """Strength decays from when the brain learnt a trace, not from when it happened: a
    conversation of years ago imported today does not start weak, so the first trace of
    it a search returns (and so refreshes) does not leap ahead of the rest."""
    now = 3_000 * DAY
    mc.add_trace(brain, "otters at the lake years ago", now=now, occurred_at=0.0, identity=SYSTEM)
    mc.add_trace(brain, "otters at the lake today", now=now, occurred_at=now, identity=SYSTEM)
    hits = mc.search(brain, "otters lake", now=now + DAY, embedder=None, identity=SYSTEM).results
    assert len(hits) == 2
    assert {h.adjustments["strength"] for h in hits} == {hits[0].adjustments["strength"]}
    assert hits[0].strength > 0.8


def test_search_reports_decayed_strength_and_bm25_channel(brain: mc.Brain) -> None:
    mc.add_trace(brain, "an old memory about otters", now=0.0, occurred_at=0.0, identity=SYSTEM)
    hit = mc.search(brain, "otters", now=14 * DAY, embedder=None, identity=SYSTEM).results[0]
    assert math.isclose(hit.strength, math.exp(-2))
    assert hit.channels["bm25"]["rank"] == 1
    assert math.isclose(hit.score, hit.fused * math.prod(hit.adjustments.values()))
    assert math.isclose(hit.adjustments["strength"], 0.8 + 0.2 * math.exp(-2))
