"""The vector channel past a size: an approximate nearest-neighbour graph.

Below ``search_approximate_from`` vectors of one model, a search multiplies
every vector (:mod:`memory_core.retrieval.vector_index`), and that exact
search stays the reference.  Past it, the whole matrix would cost each
searching process gigabytes (float32 smoothed plus float16 raw is about
2.3 GB at a million 384-d vectors) and the product grows with the brain.
There, each vector -- smoothed with its stream neighbours, as the exact
index holds it -- is a node of an HNSW graph (usearch) quantized to 8 bits
(:class:`Quantizer`): about 0.96 GB resident at a million, nothing else of the
vectors kept in memory.

A search asks the graph for candidates and rescores each with its exact
vector read from the brain (its own and its neighbours', smoothed as the
exact index smooths), so the scores are exact and only the choice of
candidates is approximate (``bench.search_latency`` measures its recall
against the exact product).  A filter that allows few traces (a scope id)
scores them all: their quantized vectors pick the best, the brain's exact
ones rescore those.

The graph is built once, in the background (a search meanwhile goes on
without its vector channel, or on the exact index while one is loaded), saved
in the data folder (``vector-cache/``) and restored by the next process,
which catches up from the change log as the exact index does.  Changes are applied in the
background too; a search scores exactly, from the brain, every trace whose
vector changed since the graph last caught up, so nothing written is missed
while the graph lags.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, Text, bindparam, text

from memory_core.brain.db import Brain, raw_cursor
from memory_core.errors import ChannelUnavailable
from memory_core.retrieval.events import changed_traces, events_floor, last_event

log = logging.getLogger(__name__)

_DTYPE = np.dtype("<f4")
_CHUNK = 20_000  # vectors read and added at a time while building
_ID_CHUNK = 500
_SEQ_CHUNK = 900
# The graph's shape: links per node, and how wide it looks while adding and
# searching (usearch's connectivity, expansion_add, expansion_search).
GRAPH_DTYPE = "i8"  # 8-bit: a fourth of the float32 matrix
CONNECTIVITY = 16
EXPANSION_ADD = 128
# A search looks this wide.  Recall@10 against the exact product, topic-clustered
# vectors and real queries: at 200k, 0.971 at 256, 0.994 at 512, 0.999 at 1024; at a
# million, 0.964 at 1024, 0.981 at 1536, 0.988 at 2048, 0.998 at 3072 (10.5 ms p50,
# searched while BM25 ranks).
EXPANSION_SEARCH = 3072
# Nodes added one at a time before threads add them side by side.
SERIAL_NODES = 20_000
# Candidates taken from the graph and rescored, at least, and per result wanted.
MIN_CANDIDATES = 40
CANDIDATES_PER_RESULT = 2
# Room above the longest scaled vector of the sample, for vectors stored later.
RADIUS_MARGIN = 1.05
# The graph's first candidates among which the best similarity is taken.
HIGH_AMONG = 10
# Stored vectors whose similarities estimate the lowest similarity of a search.
SAMPLE = 2_048
# Changes applied while the search waits; a larger backlog is applied in the
# background while searches score the changed traces from the brain.
SYNC_EVENTS = 50
# Changes the background catching up applies at a time (searches wait for a step).
STEP_EVENTS = 200
# Changes after which the saved graph is saved again.
SAVE_EVERY = 50_000
_FORMAT = 1

_LINKS = text(
    "SELECT t.seq, t.prev_seq FROM trace_embeddings e JOIN memory_traces t ON t.id = e.trace_id "
    "WHERE e.model = :model ORDER BY t.seq"
)
_CHUNK_VECTORS = text(
    "SELECT t.seq, e.vector FROM trace_embeddings e JOIN memory_traces t ON t.id = e.trace_id "
    "WHERE e.model = :model AND t.seq > :after ORDER BY t.seq LIMIT :n"
)
_CHANGED = text(
    "SELECT t.id, t.seq, t.prev_seq, e.vector FROM memory_traces t "
    "LEFT JOIN trace_embeddings e ON e.trace_id = t.id AND e.model = :model WHERE t.id IN :ids"
).bindparams(bindparam("ids", expanding=True, type_=Text))


def count_vectors(conn: Connection, model: str) -> int:
    """How many vectors of ``model`` the brain holds."""
    return int(
        conn.execute(
            text("SELECT count(*) FROM trace_embeddings WHERE model = :m"), {"m": model}
        ).scalar_one()
    )


def raw_vectors(
    conn: Connection, model: str, seqs: Iterable[int], dim: int
) -> dict[int, npt.NDArray[np.float32]]:
    """The stored (unsmoothed) vector of each of ``seqs`` that has one of ``dim``."""
    wanted = sorted({int(s) for s in seqs if s >= 0})
    out: dict[int, npt.NDArray[np.float32]] = {}
    with raw_cursor(conn) as cursor:
        for lo in range(0, len(wanted), _SEQ_CHUNK):
            marks = ", ".join(str(s) for s in wanted[lo : lo + _SEQ_CHUNK])
            cursor.execute(
                "SELECT t.seq, e.vector FROM memory_traces t JOIN trace_embeddings e "
                f"ON e.trace_id = t.id AND e.model = :model WHERE t.seq IN ({marks})",
                {"model": model},
            )
            for seq, blob in cursor.fetchall():
                if len(blob) == dim * _DTYPE.itemsize:
                    out[int(seq)] = np.frombuffer(blob, dtype=_DTYPE)
    return out


@dataclass
class _Links:
    """Each trace's stream neighbours, by seq (-1: none), and which seqs have a vector."""

    prev: npt.NDArray[np.int64] = field(default_factory=lambda: np.full(0, -1, np.int64))
    next: npt.NDArray[np.int64] = field(default_factory=lambda: np.full(0, -1, np.int64))
    has: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, np.bool_))

    def fit(self, top: int) -> None:
        """Room for seqs up to ``top``."""
        if top < len(self.has):
            return
        size = max(1_024, 2 * top)

        def grown(old: npt.NDArray[Any], fill: Any) -> npt.NDArray[Any]:
            new = np.full(size, fill, dtype=old.dtype)
            new[: len(old)] = old
            return new

        self.prev, self.next, self.has = (
            grown(self.prev, -1),
            grown(self.next, -1),
            grown(self.has, False),
        )

    def link(self, seq: int, prev_seq: int | None) -> None:
        self.fit(max(seq, prev_seq or 0))
        self.prev[seq] = -1 if prev_seq is None else prev_seq
        if prev_seq is not None:
            self.next[prev_seq] = seq

    def around(self, seqs: npt.ArrayLike) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The previous and the next trace of each of ``seqs`` (-1: none)."""
        wanted = np.asarray(seqs, dtype=np.int64)
        prev = np.full(len(wanted), -1, dtype=np.int64)
        following = np.full(len(wanted), -1, dtype=np.int64)
        inside = (wanted >= 0) & (wanted < len(self.has))
        prev[inside] = self.prev[wanted[inside]]
        following[inside] = self.next[wanted[inside]]
        return prev, following

    def neighbours(self, seqs: Iterable[int]) -> set[int]:
        prev, following = self.around(np.fromiter(seqs, dtype=np.int64))
        both = np.concatenate([prev, following])
        return set(np.unique(both[both >= 0]).tolist())

    def with_vector(self, seqs: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        inside = seqs[(seqs >= 0) & (seqs < len(self.has))]
        return inside[self.has[inside]]


@dataclass
class _Overlay:
    """The graph's links with those of traces it has yet to take in laid over them."""

    links: _Links
    prev: dict[int, int] = field(default_factory=dict)
    next: dict[int, int] = field(default_factory=dict)

    def add(self, seq: int, prev_seq: int | None) -> None:
        self.prev[seq] = -1 if prev_seq is None else prev_seq
        if prev_seq is not None:
            self.next[prev_seq] = seq

    def around(self, seqs: npt.ArrayLike) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        wanted = np.asarray(seqs, dtype=np.int64)
        prev, following = self.links.around(wanted)
        if self.prev or self.next:
            for i, seq in enumerate(wanted.tolist()):
                prev[i] = self.prev.get(seq, prev[i])
                following[i] = self.next.get(seq, following[i])
        return prev, following

    def neighbours(self, seqs: Iterable[int]) -> set[int]:
        prev, following = self.around(np.fromiter(seqs, dtype=np.int64))
        both = np.concatenate([prev, following])
        return set(np.unique(both[both >= 0]).tolist())


def smooth(
    seqs: Sequence[int],
    raw: dict[int, npt.NDArray[np.float32]],
    links: _Links | _Overlay,
    smoothing: float,
) -> tuple[list[int], npt.NDArray[np.float32]]:
    """The smoothed vectors of those ``seqs`` that have one (``raw`` holds theirs and
    their neighbours'), as the exact index computes them."""
    kept = [s for s in seqs if s in raw]
    if not kept:
        return [], np.empty((0, 0), dtype=np.float32)
    out = np.stack([raw[s] for s in kept]).astype(np.float32)
    if smoothing > 0:
        known = np.fromiter(raw, dtype=np.int64, count=len(raw))
        order = np.argsort(known)
        known = known[order]
        matrix = np.stack(list(raw.values()))[order]
        weight = np.ones(len(kept), dtype=np.float32)
        for side in links.around(kept):
            at = np.minimum(np.searchsorted(known, side), len(known) - 1)
            has = (side >= 0) & (known[at] == side)
            out[has] += smoothing * matrix[at[has]]
            weight[has] += smoothing
        out /= weight[:, None]
    return kept, out


@dataclass(frozen=True)
class Quantizer:
    """How vectors are laid into the graph's 8-bit coordinates, ranking kept.

    The graph stores each coordinate as ``round(127 x)``, clipped to [-1, 1],
    and compares vectors by angle; a search ranks by dot product.  Two
    changes of coordinates keep the dot product's order and use the 8 bits:

    * each dimension is scaled to fill [-1, 1] (by the largest magnitude it
      takes in a sample, bar the top thousandth), and the query by the inverse,
      so ``(s v) . (q / s) = v . q`` -- unscaled, a 384-d unit vector's
      coordinates (about 0.03) would use a dozen of the 255 levels;
    * every scaled vector is lifted to the same length ``radius`` by
      ``extra`` more coordinates holding ``sqrt(radius^2 - |s v|^2)`` between
      them (each at most 1), where the query has zeros: the angle then ranks
      as the dot product does (the usual reduction of maximum inner product
      search to nearest neighbours).
    """

    scale: npt.NDArray[np.float32]
    radius: float
    extra: int

    @classmethod
    def fit(cls, sample: npt.NDArray[np.float32]) -> Quantizer:
        """Laid out for vectors like those of ``sample`` (at least one)."""
        reach = np.percentile(np.abs(sample), 99.9, axis=0)
        scale = (1.0 / np.maximum(reach, 1e-6)).astype(np.float32)
        norms = np.linalg.norm(np.clip(sample * scale, -1.0, 1.0), axis=1)
        radius = float(norms.max()) * RADIUS_MARGIN
        return cls(scale, radius, max(1, math.ceil(radius * radius)))

    @property
    def ndim(self) -> int:
        return len(self.scale) + self.extra

    def stored(self, vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """``vectors`` as the graph holds them."""
        scaled = np.clip(vectors * self.scale, -1.0, 1.0)
        rest = self.radius**2 - np.einsum("ij,ij->i", scaled, scaled)
        fill = np.sqrt(np.clip(rest, 0.0, None) / self.extra).astype(np.float32)
        return np.hstack([scaled, np.repeat(fill[:, None], self.extra, axis=1)])

    def query(self, vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """A query as the graph compares it (largest coordinate 1)."""
        scaled = vector / self.scale
        top = float(np.abs(scaled).max()) or 1.0
        return np.concatenate([scaled / top, np.zeros(self.extra, dtype=np.float32)]).astype(
            np.float32
        )

    def original(self, stored: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Stored vectors back in the vectors' own coordinates (as 8 bits allow)."""
        return (stored[:, : len(self.scale)] / self.scale).astype(np.float32)

    def to_json(self) -> dict[str, Any]:
        return {"scale": self.scale.tolist(), "radius": self.radius, "extra": self.extra}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Quantizer:
        scale = np.asarray(data["scale"], dtype=np.float32)
        return cls(scale, float(data["radius"]), int(data["extra"]))


class ApproximateIndex:
    """Every vector of ``model`` in one brain, smoothed, as nodes of an HNSW graph."""

    def __init__(self, brain: Brain, model: str, smoothing: float) -> None:
        self.brain = brain
        self.model = model
        self.smoothing = smoothing
        self.cache = _cache_path(brain, model, smoothing)
        self._lock = threading.Lock()  # the fields below
        self._graph_lock = threading.Lock()  # the graph, while it changes or is searched
        self._graph: Any = None
        self._quantizer: Quantizer | None = None
        self._links = _Links()
        self._dim = 0
        self._applied = 0  # the last event the graph holds
        self._saved = 0  # the last event of the saved graph
        self._sample = np.empty((0, 0), dtype=np.float32)
        self._worker: threading.Thread | None = None
        self._failed: str | None = None

    # -- what a search sees --------------------------------------------------

    def snapshot(self, conn: Connection) -> ApproximateSnapshot:
        """The graph, caught up with ``conn``'s snapshot or scoring what it lags by.

        Until the graph is built or restored (in the background), a search gets
        :class:`ChannelUnavailable` at once.
        """
        last, floor = last_event(conn), events_floor(conn)
        with self._lock:
            if self._graph is not None and floor > self._applied:
                self._graph = None  # changes it lacks were pruned from the log: rebuild
            if self._graph is None:
                self._start(self._load)
                raise ChannelUnavailable(
                    f"the {self.model} vector graph is being built"
                    + (f" (last attempt: {self._failed})" if self._failed else "")
                )
            # A graph ahead of this snapshot (caught up by a newer one) may hold
            # vectors it does not: rescoring from this snapshot drops them.
            behind = max(0, last - self._applied)
            if behind and self._worker is None and behind <= SYNC_EVENTS:
                self._catch_up(conn, last)
            elif behind:
                self._start(self._follow)
            pending: list[tuple[int, int | None, bool]] = []
            if last > self._applied:
                ids = changed_traces(conn, self._applied, last, self.model)
                for lo in range(0, len(ids), _ID_CHUNK):
                    params = {"model": self.model, "ids": ids[lo : lo + _ID_CHUNK]}
                    pending.extend(
                        (int(seq), prev_seq, blob is not None)
                        for _, seq, prev_seq, blob in conn.execute(_CHANGED, params)
                    )
            return ApproximateSnapshot(self, self._links, self._dim, self._sample, pending)

    def search(self, query: npt.NDArray[np.float32], count: int) -> npt.NDArray[np.int64]:
        """The seqs of (about) the ``count`` nodes closest to ``query``."""
        with self._graph_lock:
            if self._graph is None or not len(self._graph):
                return np.empty(0, dtype=np.int64)
            self._graph.expansion_search = max(EXPANSION_SEARCH, 2 * count)
            assert self._quantizer is not None
            found = self._graph.search(
                self._quantizer.query(query), min(count, len(self._graph)), threads=1
            )
        return np.asarray(found.keys, dtype=np.int64)

    def quantized(self, seqs: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """The graph's (8-bit) vectors of ``seqs``, all of which it holds."""
        if not len(seqs):
            return np.empty((0, self._dim), dtype=np.float32)
        with self._graph_lock:
            got = self._graph.get(seqs.astype(np.uint64), dtype=np.float32)
            quantizer = self._quantizer
        assert quantizer is not None
        blank = np.zeros(quantizer.ndim, np.float32)
        return quantizer.original(np.vstack([blank if g is None else g for g in got]))

    def __len__(self) -> int:
        return 0 if self._graph is None else len(self._graph)

    @property
    def ready(self) -> bool:
        """The graph is built or restored (searches may use it)."""
        return self._graph is not None

    def prepare(self) -> None:
        """Start building or restoring the graph in the background, unless it is."""
        with self._lock:
            if self._graph is None:
                self._start(self._load)

    def memory_bytes(self) -> int:
        """What the graph and the links take in memory."""
        links = self._links
        held = links.prev.nbytes + links.next.nbytes + links.has.nbytes + self._sample.nbytes
        return held + (0 if self._graph is None else int(self._graph.memory_usage))

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the background work (build, restore or catching up); True when idle."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
            return not worker.is_alive()
        return True

    # -- background work -------------------------------------------------------

    def _start(self, work: Any) -> None:
        """Run ``work`` in a background thread unless one runs already (lock held)."""
        if self._worker is not None:
            return
        self._worker = threading.Thread(
            target=self._run, args=(work,), name=f"vector-graph-{self.model}", daemon=True
        )
        self._worker.start()

    def _run(self, work: Any) -> None:
        try:
            with self.brain.read() as conn:
                work(conn)
            self._failed = None
        except Exception as exc:
            log.exception("vector graph %s: background work failed", self.model)
            self._failed = f"{type(exc).__name__}: {exc}"
        finally:
            with self._lock:
                self._worker = None

    def _follow(self, conn: Connection) -> None:
        """Catch up with the brain in steps, while searches go on."""
        while True:
            last, floor = last_event(conn), events_floor(conn)
            with self._lock:
                if last < self._applied or floor > self._applied:
                    # The brain was replaced, or changes the graph lacks were pruned
                    # from the log (or it restarted, a scope id being forgotten): the
                    # next search builds it afresh, and the saved one is of no use.
                    self._graph = None
                    self._discard_saved()
                    break
                if last == self._applied:
                    break
                self._catch_up(conn, min(last, self._applied + STEP_EVENTS))
            conn.rollback()  # a fresh snapshot for the next step
        self._save_if_due()

    def _load(self, conn: Connection) -> None:
        if not self._restore(conn):
            self._build(conn)
            self._save()
        self._follow(conn)

    # -- building, saving, restoring --------------------------------------------

    def _new_graph(self, quantizer: Quantizer) -> Any:
        """An empty graph of vectors laid out by ``quantizer``."""
        from usearch.index import Index

        return Index(
            ndim=quantizer.ndim,
            metric="ip",
            dtype=GRAPH_DTYPE,
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH,
        )

    def _build(self, conn: Connection) -> None:
        """Every vector, smoothed, read and added a chunk at a time."""
        last = last_event(conn)
        links = _read_links(conn, self.model)
        graph: Any = None
        quantizer: Quantizer | None = None
        dim = 0
        after = -1
        threads = max(1, min(os.cpu_count() or 1, 4))
        while True:
            chunk = conn.execute(
                _CHUNK_VECTORS, {"model": self.model, "after": after, "n": _CHUNK}
            ).all()
            if not chunk:
                break
            after = int(chunk[-1][0])
            links.fit(after)
            if not dim:
                dim = len(chunk[0][1]) // _DTYPE.itemsize
            raw = {
                int(s): np.frombuffer(b, dtype=_DTYPE)
                for s, b in chunk
                if len(b) == dim * _DTYPE.itemsize
            }
            outside = links.neighbours(raw) - raw.keys()
            raw.update(raw_vectors(conn, self.model, outside, dim))
            added, vectors = smooth([int(s) for s, _ in chunk], raw, links, self.smoothing)
            if added:
                if quantizer is None:  # laid out by the first chunk (the oldest vectors)
                    quantizer = Quantizer.fit(vectors)
                    graph = self._new_graph(quantizer)
                links.has[np.asarray(added)] = True
                # Nodes added side by side to a small graph may end up unreachable.
                at_once = threads if len(graph) >= SERIAL_NODES else 1
                stored = quantizer.stored(vectors)
                graph.add(np.asarray(added, dtype=np.uint64), stored, threads=at_once)
        with self._lock:
            self._dim, self._links, self._applied = dim, links, last
            if graph is None:  # no vector yet: the first ones lay the graph out
                quantizer = Quantizer(np.ones(0, dtype=np.float32), 1.0, 1)
                graph = self._new_graph(quantizer)
            with self._graph_lock:
                self._graph, self._quantizer = graph, quantizer
            self._sample = self._draw_sample()
        log.info("vector graph %s: built from %d vectors", self.model, len(self))

    def _draw_sample(self) -> npt.NDArray[np.float32]:
        keys = np.flatnonzero(self._links.has)
        if not len(keys):
            return np.empty((0, self._dim), dtype=np.float32)
        picked = keys[:: max(1, len(keys) // SAMPLE)][:SAMPLE]
        return self.quantized(picked.astype(np.int64))

    def _save(self) -> None:
        """The graph, then what it holds (atomically, each): a reader of the description
        always finds the graph it names, whoever saved last."""
        if self.cache is None or self._graph is None:
            return
        with self._lock, self._graph_lock:
            applied = self._applied
            self.cache.parent.mkdir(parents=True, exist_ok=True)
            graph_file = self.cache.with_name(f"{self.cache.stem}.{applied}.usearch")
            part = graph_file.with_name(f"{graph_file.name}.{os.getpid()}.part")
            self._graph.save(str(part))
            os.replace(part, graph_file)
            meta = {
                "format": _FORMAT,
                "brain_id": self.brain.brain_id,
                "model": self.model,
                "smoothing": self.smoothing,
                "dim": self._dim,
                "applied": applied,
                "graph": graph_file.name,
                "quantizer": self._quantizer.to_json() if self._quantizer else None,
            }
            meta_part = self.cache.with_name(f"{self.cache.name}.{os.getpid()}.part")
            meta_part.write_text(json.dumps(meta))
            os.replace(meta_part, self.cache)
            self._saved = applied
        for old in self.cache.parent.glob(f"{self.cache.stem}.*.usearch"):
            if old.name != graph_file.name:
                old.unlink(missing_ok=True)
        log.info("vector graph %s: saved at event %d", self.model, applied)

    def _discard_saved(self) -> None:
        """Remove the saved graph (its description first): a graph the change log no
        longer reaches is never restored, and may hold vectors since forgotten."""
        if self.cache is None:
            return
        self.cache.unlink(missing_ok=True)
        for old in self.cache.parent.glob(f"{self.cache.stem}.*.usearch"):
            old.unlink(missing_ok=True)

    def _save_if_due(self) -> None:
        if self._applied - self._saved >= SAVE_EVERY:
            self._save()

    def _restore(self, conn: Connection) -> bool:
        """The saved graph, if it is this brain's and the change log still reaches it."""
        if self.cache is None:
            return False
        try:
            meta = json.loads(self.cache.read_text())
        except (OSError, ValueError):
            return False
        last = last_event(conn)
        floor = events_floor(conn)
        expected = {
            "format": _FORMAT,
            "brain_id": self.brain.brain_id,
            "model": self.model,
            "smoothing": self.smoothing,
        }
        if any(meta.get(k) != v for k, v in expected.items()):
            return False
        applied = int(meta.get("applied", -1))
        if not floor <= applied <= last:
            self._discard_saved()  # the change log no longer reaches it
            return False
        from usearch.index import Index

        try:
            graph = Index.restore(str(self.cache.with_name(str(meta["graph"]))))
        except Exception:
            log.warning("vector graph %s: the saved graph is unreadable", self.model)
            return False
        try:
            quantizer = Quantizer.from_json(meta["quantizer"])
        except (KeyError, TypeError, ValueError):
            return False
        if graph is None or graph.ndim != quantizer.ndim or len(quantizer.scale) != meta["dim"]:
            return False
        links = _read_links(conn, self.model)
        keys = np.asarray(graph.keys, dtype=np.int64)
        if len(keys):
            links.fit(int(keys.max()))
            links.has[keys] = True
        with self._lock:
            self._dim, self._links, self._applied, self._saved = (
                int(meta["dim"]),
                links,
                applied,
                applied,
            )
            with self._graph_lock:
                self._graph, self._quantizer = graph, quantizer
            self._sample = self._draw_sample()
        log.info("vector graph %s: restored %d vectors at %d", self.model, len(graph), applied)
        return True

    # -- catching up -------------------------------------------------------------

    def _catch_up(self, conn: Connection, last: int) -> None:
        """Apply the changes up to event ``last`` (lock held)."""
        changed = changed_traces(conn, self._applied, last, self.model)
        touched: set[int] = set()
        links = self._links
        for lo in range(0, len(changed), _ID_CHUNK):
            rows = conn.execute(
                _CHANGED, {"model": self.model, "ids": changed[lo : lo + _ID_CHUNK]}
            ).all()
            for _, found, prev_seq, blob in rows:
                seq = int(found)
                ok = blob is not None and (not self._dim or len(blob) == self._dim * 4)
                if ok and not self._dim:
                    self._dim = len(blob) // _DTYPE.itemsize
                links.fit(max(seq, prev_seq or 0))
                if ok:
                    links.link(seq, prev_seq)
                links.has[seq] = ok
                touched.add(seq)
        # A trace gone from the brain altogether keeps its node until the next
        # build; searches drop it, as the brain holds no vector for it.
        around = touched | links.neighbours(touched)
        raw = raw_vectors(conn, self.model, around | links.neighbours(around), self._dim)
        seqs, vectors = smooth(sorted(around), raw, links, self.smoothing)
        with self._graph_lock:
            quantizer = self._quantizer
            if seqs and (quantizer is None or len(quantizer.scale) != self._dim):
                # The graph was built of no vector: these lay it out.
                quantizer = Quantizer.fit(vectors)
                self._graph, self._quantizer = self._new_graph(quantizer), quantizer
            gone = np.asarray(sorted(around), dtype=np.uint64)
            if len(gone):
                self._graph.remove(gone)
            if seqs:
                assert quantizer is not None
                stored = quantizer.stored(vectors)
                self._graph.add(np.asarray(seqs, dtype=np.uint64), stored, threads=1)
        for seq in around - set(seqs):
            if seq < len(links.has):
                links.has[seq] = False
        self._applied = last


@dataclass(frozen=True)
class ApproximateSnapshot:
    """What one search sees of the graph: its links, and the traces it has yet to take in."""

    index: ApproximateIndex
    links: _Links
    dim: int
    sample: npt.NDArray[np.float32]
    # Traces whose vectors changed since the graph caught up: (seq, prev_seq, has one).
    pending: list[tuple[int, int | None, bool]]
    # Graph searches started ahead (while BM25 ranks), by how many candidates they ask.
    ahead: dict[int, Future[npt.NDArray[np.int64]]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not len(self.index) and not self.pending

    def look_ahead(
        self, pool: ThreadPoolExecutor, query: Callable[[], npt.NDArray[np.float32]], count: int
    ) -> None:
        """Search the graph for ``count`` candidates in ``pool`` as soon as ``query()``
        gives the query's vector (the graph lets go of the interpreter while it searches)."""
        self.ahead[count] = pool.submit(lambda: self.index.search(query(), count))

    def search(self, query: npt.NDArray[np.float32], count: int) -> npt.NDArray[np.int64]:
        """The graph's ``count`` candidates for ``query``, searched ahead if they were."""
        started = self.ahead.pop(count, None)
        # One still queued (the pool busy with other searches) is dropped, not waited for.
        if started is not None and not started.cancel():
            try:
                return started.result()
            except Exception:
                log.debug("the search ahead failed; searching again", exc_info=True)
        return self.index.search(query, count)

    def rows(self, seqs: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """Of ``seqs``, those holding a vector (a row is a seq here); -1 for the others."""
        wanted = np.asarray(seqs, dtype=np.int64)
        out = np.full(len(wanted), -1, dtype=np.int64)
        inside = (wanted >= 0) & (wanted < len(self.links.has))
        ok = np.zeros(len(wanted), dtype=np.bool_)
        ok[inside] = self.links.has[wanted[inside]]
        if self.pending:  # what changed since the graph caught up, as the brain has it
            changed = dict((seq, has) for seq, _, has in self.pending)
            ok = np.array(
                [changed.get(int(q), bool(o)) for q, o in zip(wanted, ok, strict=True)],
                dtype=np.bool_,
            )
        out[ok] = wanted[ok]
        return out

    def row(self, seq: int) -> int | None:
        found = int(self.rows([seq])[0])
        return None if found < 0 else found


# Which of the given seqs pass a search's filters.
Passing = Callable[[Sequence[int]], Collection[int]]


class ApproximateScores:
    """The vector channel's scores from the graph: exact for every trace it names.

    ``allowed``: the seqs a selective filter lets through (None: every trace).
    """

    def __init__(
        self,
        conn: Connection,
        snapshot: ApproximateSnapshot,
        query: npt.NDArray[np.float32],
        allowed: npt.NDArray[np.int64] | None = None,
    ) -> None:
        self.conn = conn
        self.snapshot = snapshot
        self.query = query
        self.allowed = allowed
        self._exact: dict[int, float] = {}
        self._vectors: dict[int, npt.NDArray[np.float32]] = {}
        self._links = _Overlay(snapshot.links)
        self._pending = self._pending_seqs()
        if allowed is None:
            sample = snapshot.sample @ query if len(snapshot.sample) else np.zeros(1)
            self.low = float(sample.min())
            self._quick: npt.NDArray[np.float32] | None = None
        else:
            in_graph = snapshot.links.with_vector(allowed)
            self._quick = snapshot.index.quantized(in_graph) @ query
            self.low = float(self._quick.min()) if len(self._quick) else 0.0
        self._high: float | None = None

    @property
    def rows(self) -> npt.NDArray[np.int64]:
        if self.allowed is not None:
            return self.snapshot.links.with_vector(self.allowed)
        return np.flatnonzero(self.snapshot.links.has)

    def _pending_seqs(self) -> list[int]:
        seqs: list[int] = []
        for seq, prev_seq, has in self.snapshot.pending:
            self._links.add(seq, prev_seq)
            if has:
                seqs.append(seq)
        if self.allowed is not None:
            allowed = set(self.allowed.tolist())
            seqs = [s for s in seqs if s in allowed]
        return seqs

    def _score(self, seqs: Iterable[int]) -> None:
        """Exact similarities of ``seqs`` (those not scored yet), from the brain."""
        new = [s for s in dict.fromkeys(int(s) for s in seqs) if s not in self._exact]
        if not new:
            return
        links = self._links
        index = self.snapshot.index
        needed = set(new) | links.neighbours(new)
        raw = raw_vectors(self.conn, index.model, needed, self.snapshot.dim)
        kept, vectors = smooth(new, raw, links, index.smoothing)
        for seq in new:
            self._exact[seq] = float("-inf")  # no vector in this snapshot
        if kept:
            sims = vectors @ self.query
            for seq, vector, sim in zip(kept, vectors, sims, strict=True):
                self._exact[seq] = float(sim)
                self._vectors[seq] = vector

    def best(self, k: int, floor: float = -1.0) -> list[tuple[int, float]]:
        """The ``k`` best allowed traces scoring at least ``floor``, as (seq, score)."""
        return self.best_passing(k, floor, None)[0]

    def best_passing(
        self, k: int, floor: float, passing: Passing | None
    ) -> tuple[list[tuple[int, float]], bool]:
        """Of the ``k`` best, those ``passing`` keeps (all for None), and whether no
        other trace is left to look at.  The graph's candidates are checked first, so
        only those kept are read and rescored."""
        want = max(MIN_CANDIDATES, CANDIDATES_PER_RESULT * k)
        if self._quick is None:
            found = self.snapshot.search(self.query, want)
            exhausted = len(found) < want
        else:
            allowed = self.snapshot.links.with_vector(self.allowed)  # type: ignore[arg-type]
            pick = np.argsort(-self._quick, kind="stable")[:want]
            found = allowed[pick]
            exhausted = len(allowed) <= want
        if self._high is None:  # the best allowed trace is among the graph's first
            first = [*found[:HIGH_AMONG].tolist(), *self._pending]
            self._score(first)
            found_high = [self._exact[q] for q in first if self._exact[q] > float("-inf")]
            self._high = max([*found_high, self.low])
        candidates = list(dict.fromkeys([*found.tolist(), *self._pending]))
        if passing is not None:
            kept = passing(candidates)
            candidates = [seq for seq in candidates if seq in kept]
        self._score(candidates)
        scored = [
            (seq, self._exact[seq])
            for seq in candidates
            if self._exact[seq] >= floor and self._exact[seq] > float("-inf")
        ]
        scored.sort(key=lambda p: (-p[1], p[0]))
        return scored[:k], exhausted

    def prepare(self, seqs: Sequence[int]) -> None:
        """Score ``seqs`` together: one read of the brain rather than one each."""
        self._score(seqs)

    def of(self, seq: int) -> float | None:
        """The exact similarity of ``seq``'s trace, if it has a vector."""
        self._score([seq])
        value = self._exact[seq]
        return None if value == float("-inf") else value

    def vector(self, seq: int) -> npt.NDArray[np.float32] | None:
        """``seq``'s smoothed vector, if it has one."""
        self._score([seq])
        return self._vectors.get(seq)

    @property
    def high(self) -> float:
        """The best similarity among the allowed traces (found when first asked)."""
        if self._high is None:
            top = self.best(1)
            self._high = max(top[0][1], self.low) if top else self.low
        return self._high

    def normalised(self, value: float) -> float:
        spread = self.high - self.low
        if spread <= 0:
            return 1.0
        return min(max((value - self.low) / spread, 0.0), 1.0)

    def restricted(self, rows: npt.NDArray[np.int64]) -> ApproximateScores:
        """The same search over ``rows`` (seqs) only."""
        return ApproximateScores(self.conn, self.snapshot, self.query, rows)


def _read_links(conn: Connection, model: str) -> _Links:
    """Every vector's stream neighbours, read a page at a time (no row list of the brain)."""
    links = _Links()
    result = conn.execute(_LINKS, {"model": model}).yield_per(_CHUNK)
    for page in result.partitions():
        seqs = np.fromiter((r[0] for r in page), np.int64, len(page))
        prevs = np.fromiter((-1 if r[1] is None else r[1] for r in page), np.int64, len(page))
        links.fit(int(max(seqs.max(), prevs.max())))
        links.prev[seqs] = prevs
        linked = prevs >= 0
        links.next[prevs[linked]] = seqs[linked]
    return links


def _cache_path(brain: Brain, model: str, smoothing: float) -> Path | None:
    """Where the graph of ``model`` is described: under the data folder, one per brain and
    place (an exported copy keeps the brain's id but never shares its vectors)."""
    home = brain.settings.data_dir
    if not str(home):
        return None
    place = hashlib.sha256(brain.where.encode()).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{brain.brain_id}-{place}-{model}-{smoothing:g}")
    return Path(home) / "vector-cache" / f"{name}.json"
