"""Search latency and add throughput of memory_core against bare SQLite.

Builds synthetic brains (sentences drawn from a Zipf-distributed vocabulary,
deterministic from the seed) and measures, per brain size:

* ``memory_core.search`` (``limit=10``, no vector channel) against the bare
  FTS5 query it ends up running -- the same MATCH string and ``bm25``
  weights, ranked as deep as memory_core ranks before fusing and adjusting
  (``search_candidates`` plus its over-fetch for deleted traces) -- on a
  plain ``sqlite3`` connection to the same file, interleaved query by query;
* hybrid ``memory_core.search`` (the vector channel on, the query embedded by
  the real model) against the same search without its vector channel;
* single-trace ``memory_core.add_trace`` calls against a bare
  ``BEGIN IMMEDIATE; INSERT; INSERT INTO fts; COMMIT`` of the same columns,
  alternating in blocks.

Run from the repository root::

    python -m bench.search_latency --sizes 10000,100000 --json /tmp/latency.json

The acceptance bar: at 100k traces, the search p50 ratio (memory_core / bare)
is at most 1.5 and the add throughput ratio (memory_core / bare) at least 0.5.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import text

import memory_core
from bench import brains
from memory_core import Brain, NewTrace, Settings
from memory_core.auth import SYSTEM
from memory_core.brain.db import MMAP_BYTES
from memory_core.brain.schema import FTS_TABLE, SCOPES, TRACE_TYPES
from memory_core.embedders import make_embedder
from memory_core.embeddings import store_vectors
from memory_core.errors import ChannelUnavailable
from memory_core.language.scripts import segmented
from memory_core.retrieval.lexical import OVERFETCH
from memory_core.retrieval.query_embedding import QueryEmbedder, SearchEmbedder, query_embedder_for
from memory_core.textutil import STOPWORDS

log = logging.getLogger(__name__)

VOCAB_SIZE = 20_000
ZIPF_EXPONENT = 1.0
BATCH_SIZE = 5_000
ADD_BLOCKS = 10
SEARCH_LIMIT = 10
BAR_SIZE = 100_000
BAR_SEARCH_P50_RATIO = 1.5
BAR_ADD_RATIO = 0.5

# The most frequent words, in rank order: real words (some of them stopwords,
# some the words of the question templates below) so that natural-language
# questions hit many rows.  Made-up words fill the rest of the vocabulary.
COMMON_WORDS = (
    "the user and to said a of project in likes meeting is prefers with team for "
    "mentioned on today week work asked about time plan call friday email coffee "
    "code review last talk discussion opinion family trip budget report deadline "
    "morning dinner music book doctor garden weekend launch client design remind"
).split()
TAG_POOL = (
    "work family health travel food music finance code meeting hobby home "
    "shopping fitness reading learning friends pets garden car weather"
).split()
KEYWORD_FORMS = ("{a} {b}", "{a} OR {b}", "{a} AND {b} NOT {c}", "{a} {p}*", '"{a} {b}"')
QUESTION_FORMS = (
    "what did the user say about {a} and {b}?",
    "does the user prefer {a} or {b}?",
    "when did we last talk about {a}?",
    "what's the user's opinion on {a}, {b} and {c}?",
    "remind me: {a} {b}?",
    "who mentioned {a} during the {b} discussion?",
)
_ONSETS = "b br c ch d dr f fl g gr h j k kl l m n p pl qu r s sh sk st t th tr v w z".split()
_VOWELS = "a e i o u ai ea io ou".split()
_CODAS = ["", "", "n", "r", "l", "s", "t", "m", "nd", "rk", "st"]

_BM25 = f"bm25({FTS_TABLE}, 1.0, 1.0, ?)"
BARE_SEARCH_SQL = (
    f"SELECT rowid, {_BM25} FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ? ORDER BY {_BM25} LIMIT ?"
)
BARE_COUNT_SQL = f"SELECT count(*) FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ?"
BARE_INSERT_SQL = (
    "INSERT INTO memory_traces (id, brain_id, type, scope, scope_id, content, content_hash, "
    "tags, importance, strength, stability, created_at, updated_at, occurred_at, "
    "retrieval_count, metadata, sources, deleted, version) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1.0, 1.0, ?, ?, ?, 0, ?, ?, 0, 1)"
)
BARE_FTS_INSERT_SQL = (
    f"INSERT INTO {FTS_TABLE}(rowid, content, tags, context) "
    "VALUES (?, reverie_segmented(?), reverie_segmented(?), '')"
)


# -- synthetic data ------------------------------------------------------------


def make_vocab(seed: int, size: int = VOCAB_SIZE) -> list[str]:
    """COMMON_WORDS then distinct made-up words, in Zipf rank order."""
    rng = np.random.default_rng([seed, 0])
    words = list(COMMON_WORDS)
    seen = set(words) | STOPWORDS
    while len(words) < size:
        n = 4 * (size - len(words))
        syllables = rng.integers(2, 4, size=n)
        onsets = rng.integers(len(_ONSETS), size=(n, 3))
        vowels = rng.integers(len(_VOWELS), size=(n, 3))
        codas = rng.integers(len(_CODAS), size=(n, 3))
        for i in range(n):
            word = "".join(
                _ONSETS[onsets[i, j]] + _VOWELS[vowels[i, j]] + _CODAS[codas[i, j]]
                for j in range(syllables[i])
            )
            if word not in seen:
                seen.add(word)
                words.append(word)
                if len(words) == size:
                    break
    return words


def zipf_probabilities(size: int, exponent: float = ZIPF_EXPONENT) -> np.ndarray:
    """P(rank k) proportional to 1 / k**exponent, for k = 1..size."""
    weights: np.ndarray = 1.0 / np.arange(1, size + 1, dtype=np.float64) ** exponent
    return weights / weights.sum()


def make_sentences(rng: np.random.Generator, vocab: Sequence[str], n: int) -> list[str]:
    """``n`` sentences of 8-25 Zipf-drawn words, capitalised, ending in a full stop."""
    lengths = rng.integers(8, 26, size=n)
    tokens = rng.choice(len(vocab), size=int(lengths.sum()), p=zipf_probabilities(len(vocab)))
    words = np.asarray(vocab, dtype=object)[tokens]
    ends = np.cumsum(lengths)
    sentences = []
    for end, length in zip(ends, lengths, strict=True):
        text = " ".join(words[end - length : end])
        sentences.append(text[0].upper() + text[1:] + ".")
    return sentences


def make_traces(seed: int, vocab: Sequence[str], n: int) -> list[NewTrace]:
    """``n`` traces with varied type, scope, scope id and 1-3 tags."""
    rng = np.random.default_rng([seed, 1, n])
    contents = make_sentences(rng, vocab, n)
    types = rng.integers(len(TRACE_TYPES), size=n)
    scopes = rng.integers(len(SCOPES), size=n)
    scope_ids = rng.integers(50, size=n)
    tag_counts = rng.integers(1, 4, size=n)
    traces = []
    for i, content in enumerate(contents):
        tags = rng.choice(len(TAG_POOL), size=tag_counts[i], replace=False)
        traces.append(
            NewTrace(
                content=content,
                type=TRACE_TYPES[types[i]],
                scope=SCOPES[scopes[i]],
                scope_id=f"{SCOPES[scopes[i]]}-{scope_ids[i]}",
                tags=[TAG_POOL[t] for t in tags],
            )
        )
    return traces


def _pick(rng: np.random.Generator, words: Sequence[str], max_rank: int) -> str:
    """A word whose rank is log-uniform in [1, max_rank]: common words often, rare ones too."""
    rank = int(np.exp(rng.uniform(0.0, np.log(min(max_rank, len(words))))))
    return words[rank - 1]


def make_queries(seed: int, vocab: Sequence[str], n: int) -> list[str]:
    """Alternately an FTS5 keyword query and a natural-language question."""
    rng = np.random.default_rng([seed, 2, n])
    content = [w for w in vocab if w not in STOPWORDS]
    queries = []
    for i in range(n):
        if i % 2 == 0:
            form = KEYWORD_FORMS[int(rng.integers(len(KEYWORD_FORMS)))]
            a, b, c = (_pick(rng, content, 2_000) for _ in range(3))
            queries.append(form.format(a=a, b=b, c=c, p=b[:3]))
        else:
            form = QUESTION_FORMS[int(rng.integers(len(QUESTION_FORMS)))]
            a, b, c = (_pick(rng, content, 8_000) for _ in range(3))
            queries.append(form.format(a=a, b=b, c=c))
    return queries


# -- brains and bare connections -----------------------------------------------


def fill_brain(brain: Brain, traces: Sequence[NewTrace]) -> float:
    """Store the traces through memory_core in batches; returns the seconds taken."""
    start = time.perf_counter()
    for i in range(0, len(traces), BATCH_SIZE):
        memory_core.add_traces(brain, traces[i : i + BATCH_SIZE], identity=SYSTEM)
        log.info("  stored %d/%d traces", min(i + BATCH_SIZE, len(traces)), len(traces))
    return time.perf_counter() - start


def bare_connect(path: Path, settings: Settings) -> sqlite3.Connection:
    """A plain sqlite3 connection with the pragmas memory_core's engine sets."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(settings.sqlite_busy_timeout_ms)}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA synchronous = {settings.sqlite_synchronous}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
    # The index reads texts as the brain's own connections cut them.
    conn.create_function("reverie_segmented", 1, segmented, deterministic=True)
    return conn


# -- search latency --------------------------------------------------------------


def _percentiles(values_ms: Sequence[float]) -> dict[str, float]:
    """p50 and p95 of a list of milliseconds."""
    p50, p95 = np.percentile(np.asarray(values_ms), [50, 95])
    return {"p50_ms": round(float(p50), 4), "p95_ms": round(float(p95), 4)}


def _search_pair(brain: Brain, bare: sqlite3.Connection, query: str) -> dict[str, Any]:
    """memory_core.search, then the bare FTS5 query on its final MATCH string."""
    t0 = time.perf_counter_ns()
    response = memory_core.search(brain, query, limit=SEARCH_LIMIT, embedder=None, identity=SYSTEM)
    t1 = time.perf_counter_ns()
    rows: list[Any] = []
    s = brain.settings
    if response.fts_query:
        weight = s.search_context_weight
        args = (weight, response.fts_query, weight, s.search_candidates + OVERFETCH)
        rows = bare.execute(BARE_SEARCH_SQL, args).fetchall()
    t2 = time.perf_counter_ns()
    return {
        "mode": response.mode,
        "fts_query": response.fts_query,
        "memory_ms": (t1 - t0) / 1e6,
        "bare_ms": (t2 - t1) / 1e6,
        "hits": len(response.results),
        "same_top": {h.trace.seq for h in response.results} == {r[0] for r in rows[:SEARCH_LIMIT]},
    }


def _summary(samples: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Percentiles of both sides and their ratios for a list of paired samples."""
    memory = _percentiles([s["memory_ms"] for s in samples])
    bare = _percentiles([s["bare_ms"] for s in samples])
    return {
        "queries": len(samples),
        "memory": memory,
        "bare": bare,
        "ratio_p50": round(memory["p50_ms"] / bare["p50_ms"], 3),
        "ratio_p95": round(memory["p95_ms"] / bare["p95_ms"], 3),
    }


def time_searches(brain: Brain, bare: sqlite3.Connection, queries: Sequence[str]) -> dict[str, Any]:
    """Paired search timings after one untimed warm-up pass over every query."""
    for query in queries:
        _search_pair(brain, bare, query)
    samples = [_search_pair(brain, bare, q) for q in queries]
    result = _summary(samples)
    result["by_mode"] = {
        mode: _summary([s for s in samples if s["mode"] == mode])
        for mode in sorted({s["mode"] for s in samples})
    }
    result["modes"] = dict(Counter(s["mode"] for s in samples))
    result["mean_hits"] = round(float(np.mean([s["hits"] for s in samples])), 2)
    result["same_top_results"] = sum(s["same_top"] for s in samples)
    matched = [
        bare.execute(BARE_COUNT_SQL, (s["fts_query"],)).fetchone()[0]
        for s in samples
        if s["fts_query"]
    ]
    result["matched_rows_p50"] = int(np.percentile(matched, 50)) if matched else 0
    result["matched_rows_p95"] = int(np.percentile(matched, 95)) if matched else 0
    return result


# -- hybrid search latency ----------------------------------------------------------


def store_random_vectors(brain: Brain, model: str, dim: int, seed: int) -> float:
    """A unit vector per trace under ``model``; returns the seconds taken.

    The vector channel's cost does not depend on what the vectors hold, only
    on their number and dimension, so random ones stand in for embedding
    every synthetic sentence with the model; the query is still embedded by
    the real model at search time.
    """
    start = time.perf_counter()
    with brain.read() as conn:
        rows = conn.execute(text("SELECT id, content_hash FROM memory_traces ORDER BY seq")).all()
    rng = np.random.default_rng([seed, 4, len(rows)])
    for lo in range(0, len(rows), BATCH_SIZE):
        chunk = rows[lo : lo + BATCH_SIZE]
        vectors = rng.standard_normal((len(chunk), dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        store_vectors(
            brain, model, [r[0] for r in chunk], vectors, content_hashes=[r[1] for r in chunk]
        )
    return time.perf_counter() - start


# Topics of the structured vectors: each trace's vector lies near one of this
# many real embeddings, as real traces cluster by what they are about.
TOPICS = 2_000
# Length of the noise added to a topic's unit vector (cosine to it about 0.8).
TOPIC_NOISE = 0.75


def store_topic_vectors(
    brain: Brain, embedder: Any, traces: Sequence[NewTrace], seed: int
) -> float:
    """A vector per trace near the model's embedding of one of :data:`TOPICS` of the
    brain's own sentences; returns the seconds taken.

    An approximate graph's recall depends on how the vectors lie, and vectors drawn
    uniformly on the sphere (no neighbourhoods at all) are a case no model gives;
    these have a real embedding's layout around each topic.
    """
    start = time.perf_counter()
    step = max(1, len(traces) // TOPICS)
    texts = sorted({t.content for t in traces[::step]}, key=len)[:TOPICS]
    centres = np.asarray(embedder.embed(texts), dtype=np.float32)
    with brain.read() as conn:
        rows = conn.execute(text("SELECT id, content_hash FROM memory_traces ORDER BY seq")).all()
    rng = np.random.default_rng([seed, 5, len(rows)])
    dim = centres.shape[1]
    for lo in range(0, len(rows), BATCH_SIZE):
        chunk = rows[lo : lo + BATCH_SIZE]
        noise = rng.standard_normal((len(chunk), dim)).astype(np.float32)
        noise *= TOPIC_NOISE / np.sqrt(dim)
        vectors = centres[rng.integers(len(centres), size=len(chunk))] + noise
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        store_vectors(
            brain,
            embedder.name,
            [r[0] for r in chunk],
            vectors,
            content_hashes=[r[1] for r in chunk],
        )
    return time.perf_counter() - start


def _rss_mb() -> float:
    """This process's resident memory (Linux), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _graph_loaded(brain: Brain, model: str) -> dict[str, Any]:
    """Have the vector channel's graph built or restored as the first search would: the
    seconds it took and this process's resident memory before and after."""
    from memory_core.retrieval.approximate import ApproximateIndex
    from memory_core.retrieval.vector_index import VectorIndexes

    gc_collect()
    before = _rss_mb()
    start = time.perf_counter()
    with brain.read() as conn:
        index = brain.state(VectorIndexes).channel(conn, brain, model)
        assert isinstance(index, ApproximateIndex)
        with contextlib.suppress(ChannelUnavailable):
            index.snapshot(conn)  # starts the build or the restore
    index.wait()
    seconds = time.perf_counter() - start
    gc_collect()
    after = _rss_mb()
    return {
        "seconds": round(seconds, 1),
        "nodes": len(index),
        "graph_bytes_mb": round(index.memory_bytes() / 1e6, 1),
        "rss_before_mb": round(before, 1),
        "rss_after_mb": round(after, 1),
        "rss_added_mb": round(after - before, 1),
    }


def build_graph(brain: Brain, model: str) -> dict[str, Any]:
    """Build the graph, timed, and the resident memory it added to this process."""
    loaded = _graph_loaded(brain, model)
    return {
        "graph_build_s": loaded.pop("seconds"),
        "graph_nodes": loaded.pop("nodes"),
        **loaded,
    }


def restored_graph_rss(url: str, data_dir: str, model: str) -> dict[str, Any]:
    """In a fresh process: the resident memory a searching process adds when it restores
    the saved graph and catches up (what an API process started on this brain holds)."""
    code = (
        "import json, sys; from bench.search_latency import _restore_here; "
        "print(json.dumps(_restore_here(*sys.argv[1:])))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, url, data_dir, model],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _restore_here(url: str, data_dir: str, model: str) -> dict[str, Any]:
    settings = memory_core.load_settings(brain_url=url, data_dir=Path(data_dir))
    brain = memory_core.open_brain(settings)
    import usearch.index  # noqa: F401  (the library's own pages are not the graph's)

    try:
        loaded = _graph_loaded(brain, model)
    finally:
        brain.close()
    loaded.pop("graph_bytes_mb")
    return {"restore_s": loaded.pop("seconds"), **loaded}


def gc_collect() -> None:
    import gc

    gc.collect()


def approximate_recall(
    brain: Brain, embedder: QueryEmbedder, queries: Sequence[str], k: int = SEARCH_LIMIT
) -> dict[str, Any]:
    """Recall@k of the vector channel's graph against the exact product of every vector,
    on the same queries and the same smoothed vectors; and the time of each."""
    from memory_core.retrieval import approximate
    from memory_core.retrieval.dense import score_all
    from memory_core.retrieval.vector_index import VectorIndex, VectorIndexes

    graph_ms, exact_ms, recalls = [], [], []
    exact_index = VectorIndex(embedder.name, brain.settings.search_neighbour_smoothing)
    with brain.read() as conn:
        index = brain.state(VectorIndexes).channel(conn, brain, embedder.name)
        assert isinstance(index, approximate.ApproximateIndex)
        exact_index.snapshot(conn)  # loaded once, outside the timings
        for query in queries:
            vector = embedder.wait(embedder.start(query))
            t0 = time.perf_counter()
            snap = index.snapshot(conn)
            got = approximate.ApproximateScores(conn, snap, vector).best(k)
            t1 = time.perf_counter()
            exact = score_all(exact_index.snapshot(conn), vector, None).best(k)
            t2 = time.perf_counter()
            graph_ms.append((t1 - t0) * 1e3)
            exact_ms.append((t2 - t1) * 1e3)
            # A trace outside the exact top k but tied with its last counts as found.
            edge = exact[-1][1] - 1e-3
            hits = sum(1 for seq, v in got if seq in {q for q, _ in exact} or v >= edge)
            recalls.append(hits / max(1, len(exact)))
    return {
        "queries": len(queries),
        "recall_at_10": round(float(np.mean(recalls)), 4),
        "recall_min": round(float(np.min(recalls)), 2),
        "graph_channel": _percentiles(graph_ms),
        "exact_channel": _percentiles(exact_ms),
    }


def _timed_search(
    brain: Brain, query: str, embedder: SearchEmbedder, **filters: Any
) -> tuple[float, Any]:
    t0 = time.perf_counter_ns()
    response = memory_core.search(
        brain, query, limit=SEARCH_LIMIT, **filters, embedder=embedder, identity=SYSTEM
    )
    return (time.perf_counter_ns() - t0) / 1e6, response


def time_hybrid(
    brain: Brain,
    embedder: QueryEmbedder,
    warm: Sequence[str],
    timed: dict[str, Sequence[str]],
    scope_id: str,
) -> dict[str, Any]:
    """Hybrid search against BM25-only memory_core search, query by query.

    Every query set is distinct (warm-up, unfiltered, filtered by a scope id as
    an agent's search for one user is, filtered by a type that a fifth of
    the traces have), so no timed query finds its embedding in the cache.
    """
    for query in warm:
        _timed_search(brain, query, embedder)
        _timed_search(brain, query, None)
    out: dict[str, Any] = {}
    cases = (("all", {}), ("scope_id", {"scope_id": scope_id}), ("type", {"type": "semantic"}))
    for label, filters in cases:
        queries = timed[label]
        hybrid_ms, lexical_ms, degraded, with_vector = [], [], 0, 0
        for query in queries:
            ms, response = _timed_search(brain, query, embedder, **filters)
            hybrid_ms.append(ms)
            degraded += bool(response.degraded)
            with_vector += "vector" in response.channels
            lexical_ms.append(_timed_search(brain, query, None, **filters)[0])
        hybrid, bm25 = _percentiles(hybrid_ms), _percentiles(lexical_ms)
        out[label] = {
            "queries": len(queries),
            "hybrid": hybrid,
            "bm25_only": bm25,
            "ratio_p50": round(hybrid["p50_ms"] / bm25["p50_ms"], 3),
            "ratio_p95": round(hybrid["p95_ms"] / bm25["p95_ms"], 3),
            "searches_with_vector_channel": with_vector,
            "degraded": degraded,
        }
    return out


# -- add throughput ---------------------------------------------------------------


def bare_add(conn: sqlite3.Connection, brain_id: str, content: str) -> None:
    """One trace and its index entry in one IMMEDIATE transaction, as add_trace writes it."""
    now = time.time()
    tags_json = json.dumps(["a", "b"], ensure_ascii=False, separators=(",", ":"))
    values = (
        f"mt_{uuid.uuid4()}",
        brain_id,
        "episodic",
        "user",
        "u1",
        content,
        hashlib.sha256(content.encode("utf-8")).hexdigest(),
        tags_json,
        0.5,
        now,
        now,
        now,
        "{}",
        "[]",
    )
    conn.execute("BEGIN IMMEDIATE")
    try:
        seq = conn.execute(BARE_INSERT_SQL, values).lastrowid
        conn.execute(BARE_FTS_INSERT_SQL, (seq, content, tags_json))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def memory_add(brain: Brain, content: str) -> None:
    """One agent-style memory_add: a single trace in its own transaction."""
    memory_core.add_trace(
        brain,
        content,
        type="episodic",
        scope="user",
        scope_id="u1",
        tags=["a", "b"],
        identity=SYSTEM,
    )


def _timed_block(add: Callable[[str], None], contents: Sequence[str]) -> float:
    """Seconds taken to add each content with ``add``."""
    start = time.perf_counter()
    for content in contents:
        add(content)
    return time.perf_counter() - start


def time_adds(
    brain: Brain, bare: sqlite3.Connection, contents: Sequence[str], blocks: int = ADD_BLOCKS
) -> dict[str, Any]:
    """Adds per second of each side, alternating blocks (and which side goes first)."""
    sides: dict[str, Callable[[str], None]] = {
        "memory": lambda c: memory_add(brain, c),
        "bare": lambda c: bare_add(bare, brain.brain_id, c),
    }
    for name, add in sides.items():  # warm-up: statement caches, pool, pages
        _timed_block(add, [f"warm-up add {name} {i}" for i in range(10)])
    half = len(contents) // 2
    per_block = max(half // blocks, 1)
    seconds = {"memory": 0.0, "bare": 0.0}
    counts = {"memory": 0, "bare": 0}
    for b in range(blocks):
        order = ("memory", "bare") if b % 2 == 0 else ("bare", "memory")
        for k, name in enumerate(order):
            lo = (2 * b + k) * per_block
            chunk = contents[lo : lo + per_block]
            seconds[name] += _timed_block(sides[name], chunk)
            counts[name] += len(chunk)
    memory_rate = counts["memory"] / seconds["memory"]
    bare_rate = counts["bare"] / seconds["bare"]
    return {
        "adds_per_side": counts["memory"],
        "blocks": blocks,
        "memory_adds_per_s": round(memory_rate, 1),
        "bare_adds_per_s": round(bare_rate, 1),
        "ratio": round(memory_rate / bare_rate, 3),
    }


# -- driver and report -----------------------------------------------------------


def bench_size(
    settings: Settings, vocab: Sequence[str], n: int, args: argparse.Namespace
) -> dict[str, Any]:
    """Build one brain of ``n`` traces in a temporary folder and measure it."""
    traces = make_traces(args.seed, vocab, n)
    queries = make_queries(args.seed, vocab, args.queries)
    add_rng = np.random.default_rng([args.seed, 3, n])
    add_contents = make_sentences(add_rng, vocab, 2 * args.adds)
    with tempfile.TemporaryDirectory(prefix="reverie-bench-") as tmp:
        settings = settings.model_copy(update={"data_dir": Path(tmp)})  # the graph's file
        brain = memory_core.open_brain(settings, url=f"sqlite:///{tmp}/brain.sqlite")
        log.info("size %d: filling %s", n, brain.path)
        build_s = fill_brain(brain, traces)
        bare = bare_connect(brain.path, settings)
        try:
            bare.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            size_mb = sum(brain.file_sizes().values()) / 1e6
            log.info("size %d: timing %d searches", n, len(queries))
            search = time_searches(brain, bare, queries)
            hybrid: dict[str, Any] = {}
            embedder = make_embedder(settings) if args.hybrid else None
            approximate = bool(settings.search_approximate_from) and (
                n >= settings.search_approximate_from
            )
            graph: dict[str, Any] = {}
            if embedder is not None:
                log.info("size %d: storing %d vectors", n, n)
                if approximate:
                    vectors_s = store_topic_vectors(brain, embedder, traces, args.seed)
                    log.info("size %d: building the approximate graph", n)
                    graph = build_graph(brain, embedder.name)
                    graph["fresh_process"] = restored_graph_rss(
                        brain.url, str(settings.data_dir), embedder.name
                    )
                else:
                    vectors_s = store_random_vectors(brain, embedder.name, embedder.dim, args.seed)
                log.info("size %d: timing %d hybrid searches", n, len(queries))
                hybrid = hybrid_timings(brain, settings, embedder, vocab, queries, traces, args)
                hybrid["vectors_s"] = round(vectors_s, 1)
                if approximate:
                    log.info("size %d: recall of the graph against the exact product", n)
                    query_embedder = query_embedder_for(settings, embedder)
                    assert query_embedder is not None
                    try:
                        graph |= approximate_recall(brain, query_embedder, queries)
                    finally:
                        query_embedder.close()
                    hybrid["approximate"] = graph
            log.info("size %d: timing %d adds per side", n, args.adds)
            adds = time_adds(brain, bare, add_contents)
        finally:
            bare.close()
            brain.close()
    return {
        "traces": n,
        "build_s": round(build_s, 2),
        "brain_mb": round(size_mb, 1),
        "search": search,
        "hybrid": hybrid,
        "adds": adds,
    }


def hybrid_timings(
    brain: Brain,
    settings: Settings,
    embedder: Any,
    vocab: Sequence[str],
    queries: Sequence[str],
    traces: Sequence[NewTrace],
    args: argparse.Namespace,
) -> dict[str, Any]:
    """:func:`time_hybrid` on the bench's query sets, the query embedded by the model."""
    warm = make_queries(args.seed + 1, vocab, min(len(queries), 50))
    timed = {
        "all": queries,
        "scope_id": make_queries(args.seed + 2, vocab, len(queries)),
        "type": make_queries(args.seed + 3, vocab, len(queries)),
    }
    query_embedder = query_embedder_for(settings, embedder)
    assert query_embedder is not None
    try:
        return time_hybrid(brain, query_embedder, warm, timed, traces[0].scope_id or "")
    finally:
        query_embedder.close()


def bench_postgresql(
    settings: Settings, vocab: Sequence[str], n: int, args: argparse.Namespace
) -> dict[str, Any]:
    """The same brain of ``n`` traces on the PostgreSQL server ``--brain`` names: its
    hybrid search timed as the SQLite brain's is, with the same queries."""
    traces = make_traces(args.seed, vocab, n)
    queries = make_queries(args.seed, vocab, args.queries)
    with (
        tempfile.TemporaryDirectory(prefix="reverie-bench-") as tmp,
        brains.brain_url(Path(tmp), f"latency_{n}", args.brain) as url,
    ):
        brain = memory_core.open_brain(settings, url=url)
        try:
            log.info("size %d on PostgreSQL: filling %s", n, brain.where)
            build_s = fill_brain(brain, traces)
            # What autovacuum does to a brain at rest: statistics, and the visibility
            # map its index-only scans need.
            with brain.engine.connect() as conn:
                conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql(
                    "VACUUM ANALYZE"
                )
            embedder = make_embedder(settings)
            assert embedder is not None
            vectors_s = store_random_vectors(brain, embedder.name, embedder.dim, args.seed)
            log.info("size %d on PostgreSQL: timing %d hybrid searches", n, len(queries))
            hybrid = hybrid_timings(brain, settings, embedder, vocab, queries, traces, args)
            size_mb = sum(brain.file_sizes().values()) / 1e6
        finally:
            brain.close()
    return {
        "traces": n,
        "build_s": round(build_s, 2),
        "vectors_s": round(vectors_s, 1),
        "brain_mb": round(size_mb, 1),
        "hybrid": hybrid,
    }


def check_bars(sizes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The acceptance bar, judged on the BAR_SIZE brain (None when it was not run)."""
    at_bar = next((s for s in sizes if s["traces"] == BAR_SIZE), None)
    if at_bar is None:
        return {"size": BAR_SIZE, "search_p50": None, "adds": None}
    return {
        "size": BAR_SIZE,
        "search_p50": at_bar["search"]["ratio_p50"] <= BAR_SEARCH_P50_RATIO,
        "adds": at_bar["adds"]["ratio"] >= BAR_ADD_RATIO,
    }


def _verdict(ok: bool | None) -> str:
    return "not run" if ok is None else ("PASS" if ok else "FAIL")


SEARCH_ROW = "{:>8} {:>7} {:>7} {:>9} {:>9} {:>6} {:>9} {:>9} {:>6}  {}"
ADDS_ROW = "{:>8} {:>12} {:>12} {:>7} {:>9}"
HYBRID_ROW = "{:>8} {:>9} {:>8} {:>9} {:>6} {:>8} {:>9} {:>6}"


def _search_rows(size: dict[str, Any]) -> list[str]:
    """Table rows of one size: all queries, then each mode."""
    search = size["search"]
    parts = [("all", search), *search["by_mode"].items()]
    modes = ", ".join(f"{m} {n}" for m, n in sorted(search["modes"].items()))
    lines = []
    for label, part in parts:
        if label == "all":
            note = (
                f"{modes}; {search['same_top_results']}/{search['queries']} "
                f"same top-10 sets, matched rows p50 {search['matched_rows_p50']} "
                f"p95 {search['matched_rows_p95']}"
            )
        else:
            note = f"{part['queries']} queries"
        lines.append(
            SEARCH_ROW.format(
                size["traces"],
                size["brain_mb"],
                label,
                f"{part['memory']['p50_ms']:.3f}",
                f"{part['bare']['p50_ms']:.3f}",
                f"{part['ratio_p50']:.2f}",
                f"{part['memory']['p95_ms']:.3f}",
                f"{part['bare']['p95_ms']:.3f}",
                f"{part['ratio_p95']:.2f}",
                note,
            )
        )
    return lines


def report(result: dict[str, Any]) -> None:
    """Print the results as readable tables and the verdict on the bar."""
    meta = result["meta"]
    print(
        f"Reverie search latency / add throughput -- seed {meta['seed']}, "
        f"{meta['queries']} queries, {meta['adds']} adds per side, SQLite {meta['sqlite']}, "
        f"Python {meta['python']}, synchronous={meta['synchronous']}\n"
    )
    print(
        SEARCH_ROW.format(
            "traces", "MB", "queries", "mem p50", "bare p50", "x", "mem p95", "bare p95", "x", ""
        )
    )
    for size in result["sizes"]:
        print("\n".join(_search_rows(size)))
    print("(search latency in ms; x = memory_core / bare)\n")
    print(ADDS_ROW.format("traces", "mem adds/s", "bare adds/s", "x", "build s"))
    for size in result["sizes"]:
        a = size["adds"]
        print(
            ADDS_ROW.format(
                size["traces"],
                f"{a['memory_adds_per_s']:.1f}",
                f"{a['bare_adds_per_s']:.1f}",
                f"{a['ratio']:.3f}",
                f"{size['build_s']:.1f}",
            )
        )
    if any(size["hybrid"] for size in result["sizes"]):
        print(
            HYBRID_ROW.format(
                "traces", "filter", "hyb p50", "bm25 p50", "x", "hyb p95", "bm25 p95", "x"
            )
        )
        for size in result["sizes"]:
            for label, part in size["hybrid"].items():
                if not isinstance(part, dict) or label == "approximate":
                    continue
                print(
                    HYBRID_ROW.format(
                        size["traces"],
                        label,
                        f"{part['hybrid']['p50_ms']:.2f}",
                        f"{part['bm25_only']['p50_ms']:.2f}",
                        f"{part['ratio_p50']:.2f}",
                        f"{part['hybrid']['p95_ms']:.2f}",
                        f"{part['bm25_only']['p95_ms']:.2f}",
                        f"{part['ratio_p95']:.2f}",
                    )
                )
        print(
            "(hybrid: memory_core.search with the vector channel, query embedded by the model; "
            "bm25: the same search without it; ms)\n"
        )
    for size in result["sizes"]:
        if graph := size["hybrid"].get("approximate"):
            print(
                f"Approximate vector channel at {size['traces']} traces: recall@10 against the "
                f"exact product {graph['recall_at_10']:.4f} (lowest {graph['recall_min']:.2f}, "
                f"{graph['queries']} queries); channel p50 {graph['graph_channel']['p50_ms']:.2f} "
                f"ms against exact {graph['exact_channel']['p50_ms']:.2f} ms; graph built in "
                f"{graph['graph_build_s']:.0f} s, {graph['graph_nodes']} nodes, "
                f"{graph['graph_bytes_mb']:.0f} MB; resident memory the build added "
                f"{graph['rss_added_mb']:.0f} MB (process {graph['rss_after_mb']:.0f} MB); a "
                f"fresh process restoring it added {graph['fresh_process']['rss_added_mb']:.0f} MB "
                f"in {graph['fresh_process']['restore_s']:.1f} s"
            )
    bars = result["bars"]
    print(
        f"\nBar at {bars['size']} traces: search p50 ratio <= {BAR_SEARCH_P50_RATIO}: "
        f"{_verdict(bars['search_p50'])}; add ratio >= {BAR_ADD_RATIO}: {_verdict(bars['adds'])}"
    )
    print(f"Total wall time: {meta['wall_s']:.1f} s")


PG_BAR_P50_MS, PG_BAR_P95_MS = 25.0, 60.0


def report_postgresql(sizes: Sequence[dict[str, Any]], on_pg: Sequence[dict[str, Any]]) -> None:
    """Hybrid search on PostgreSQL beside SQLite's, by size and filter."""
    if not on_pg:
        return
    print("\nHybrid search, PostgreSQL brain beside the SQLite brain (same queries, ms)")
    print(PG_ROW.format("traces", "filter", "pg p50", "pg p95", "sq p50", "sq p95", "p50 x"))
    for pg in on_pg:
        sqlite = next((s for s in sizes if s["traces"] == pg["traces"]), {})
        for label, part in pg["hybrid"].items():
            if not isinstance(part, dict) or "hybrid" not in part:
                continue
            theirs = sqlite.get("hybrid", {}).get(label, {}).get("hybrid", {})
            ratio = part["hybrid"]["p50_ms"] / theirs["p50_ms"] if theirs else float("nan")
            print(
                PG_ROW.format(
                    pg["traces"],
                    label,
                    f"{part['hybrid']['p50_ms']:.2f}",
                    f"{part['hybrid']['p95_ms']:.2f}",
                    f"{theirs.get('p50_ms', float('nan')):.2f}",
                    f"{theirs.get('p95_ms', float('nan')):.2f}",
                    f"{ratio:.2f}",
                )
            )
        whole = pg["hybrid"].get("all", {}).get("hybrid", {})
        if whole:
            ok = whole["p50_ms"] <= PG_BAR_P50_MS and whole["p95_ms"] <= PG_BAR_P95_MS
            print(
                f"Bar at {pg['traces']} traces on PostgreSQL: hybrid p50 <= {PG_BAR_P50_MS} ms "
                f"and p95 <= {PG_BAR_P95_MS} ms: {_verdict(ok)} (built in {pg['build_s']} s)"
            )


PG_ROW = "{:>8} {:>9} {:>8} {:>8} {:>8} {:>8} {:>6}"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line; ``--sizes`` becomes a list of ints."""
    parser = argparse.ArgumentParser(prog="python -m bench.search_latency", description=__doc__)
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated trace counts")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per size")
    parser.add_argument("--adds", type=int, default=2000, help="single-trace adds per side")
    parser.add_argument("--seed", type=int, default=7, help="seed of every random draw")
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    parser.add_argument(
        "--brain",
        type=brains.server,
        metavar="URL",
        help="also time hybrid search on brains of this PostgreSQL server "
        "(postgresql+psycopg://USER@HOST/NAME; NAME prefixes the databases made and dropped)",
    )
    parser.add_argument(
        "--no-hybrid",
        dest="hybrid",
        action="store_false",
        help="skip the hybrid (vector channel) timings",
    )
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    return args


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: run every size, print the report, optionally write JSON."""
    # Progress of this bench at INFO; other libraries (alembic) stay at WARNING.
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    log.setLevel(logging.INFO)
    args = parse_args(argv)
    start = time.perf_counter()
    settings = memory_core.load_settings()
    vocab = make_vocab(args.seed)
    sizes = [bench_size(settings, vocab, n, args) for n in args.sizes]
    on_postgresql = [bench_postgresql(settings, vocab, n, args) for n in args.sizes if args.brain]
    result = {
        "meta": {
            "seed": args.seed,
            "queries": args.queries,
            "adds": args.adds,
            "vocab_size": len(vocab),
            "zipf_exponent": ZIPF_EXPONENT,
            "sqlite": sqlite3.sqlite_version,
            "python": platform.python_version(),
            "synchronous": settings.sqlite_synchronous,
            "wall_s": round(time.perf_counter() - start, 1),
        },
        "sizes": sizes,
        "bars": check_bars(sizes),
        "postgresql": on_postgresql,
    }
    report(result)
    report_postgresql(sizes, on_postgresql)
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        log.info("wrote %s", args.json)


if __name__ == "__main__":
    main()
