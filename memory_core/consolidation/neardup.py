"""Near-duplicate vectors: pairs at or above a cosine threshold within a scope.

All pairs is quadratic: 100k x 384 vectors take 216 s in blocked numpy on the
2-core reference machine.  Here random-hyperplane LSH (SimHash) finds them in
~1.2 s (CPU) at recall 0.9995 on the synthetic corpus of ``bench.neardup``,
and 10x the rows costs ~11x the time; inputs where comparing exactly is
estimated cheaper (a few thousand rows, a handful of new rows) are compared
exactly.

**Collision arithmetic.**  A random hyperplane separates two unit vectors at
angle ``theta`` with probability ``theta / pi``, so one sign bit agrees with
probability ``p(t) = 1 - arccos(t) / pi``; at ``t = 0.95``, ``p = 0.8989``.
A *band* of ``k`` bits puts a pair in the same bucket with probability
``p**k``, and ``L`` independent bands with ``1 - (1 - p**k)**L``.  Of the miss
budget ``1 - recall`` (0.01), 0.009 goes to the bands:
``L = ceil(ln(0.009) / ln(1 - p**k))``.  At 0.95: k=11 -> L=13, k=14 -> L=19,
k=16 -> L=24 (143, 266, 384 hyperplanes), each catching a pair exactly at the
threshold with probability >= 0.991, a pair above it more often.

**Choosing k.**  A random pair shares a band with probability
``E[p_bg**k]`` (``p_bg`` from a sample of 4096 random pairs of the input;
``2**-k`` for unrelated vectors).  :func:`plan` minimises
``L * (n * (k + sort) + pairs * E[p_bg**k] * candidate)`` in units of one
sign bit of one row, or picks exact comparison (``pairs * exact``) when that
is cheaper.  The best ``k`` grows like ``log2 n``, so the work grows like
``n**(1 + rho)``, ``rho = ln(1/p) / ln 2 = 0.15`` at 0.95.

**Sketch filter.**  Checking a candidate gathers two 1.5 KB rows (~1.7 us a
pair here); the ``k * L`` sign bits already computed are a 20-110 byte sketch
per row whose Hamming distance estimates the angle (~0.1 us a pair).  A pair
at the threshold differs in ``Binomial(k * L, 1 - p)`` bits; candidates above
its 0.999 quantile are dropped, which spends the other 0.001 of the budget;
with k=14, L=19 it keeps 29% of candidates at cosine 0.85, 4.5% at 0.8 and
0.02% at 0.7, and most candidates are far below.  Survivors are
deduplicated and checked exactly (float32 dot products), so every returned
pair is at or above the threshold.

**Big buckets.**  A bucket with more pairs to enumerate than one of
``max_bucket`` rows (near copies of one text, a tight topic) is compared
exactly with blocked matrix products (~30 ns a pair against ~100 ns for
enumeration).  Dense regions fill big buckets in every band, so where it is
less work a scope's big buckets are compared once as their union.  Measured
in 100k rows: 3,000 identical rows take ~5.5 s, mostly building the 4.5M
output pairs; a 10k-row topic at mutual cosine 0.9 takes ~4 s (comparing
that topic alone exactly: 1.4 s), where LSH can barely tell 0.9 from 0.95.

Memory is ``O(n * (d + L))`` plus bounded blocks (32 MB); never ``n x n``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from memory_core.errors import InvalidArgument

log = logging.getLogger(__name__)

Pair = tuple[int, int, float]
Method = Literal["auto", "lsh", "exact"]
Int64s = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float32]
Bools = npt.NDArray[np.bool_]

_SKETCH_MISS = 0.001  # share of the miss budget spent by the sketch filter
_BITS_RANGE = range(6, 25)  # band widths the planner considers (keys exact in float32)
# Planner costs in units of one sign bit of one row (d multiply-adds), measured
# on the 2-core reference machine: sorting and scanning a band, per row;
# enumerating and sketch-filtering a candidate; comparing a pair exactly.
_SORT_COST = 6.0
_CANDIDATE_COST = 5.0
_EXACT_COST = 2.0
_BG_SAMPLE = 4096  # random pairs sampled to estimate background collisions
_ROW_CHUNK = 4096  # rows hashed per matrix product
_PAIR_CHUNK = 1 << 16  # candidate pairs sketch-filtered at once
_GATHER_ROWS = 2048  # pairs of rows gathered at once: 6 MB, cache friendly, ~1.7 us a pair
_BLOCK_CELLS = 1 << 23  # similarity cells per exact block (32 MB of float32)
_NORM_TOLERANCE = 1e-3


@dataclass(frozen=True)
class LshPlan:
    """Band width, band count and sketch cutoff chosen for one call."""

    bits: int
    tables: int
    sketch_cutoff: int
    recall_at_threshold: float


def tables_for(threshold: float, bits: int, recall: float = 0.99) -> int:
    """Bands of ``bits`` bits needed so a pair at ``threshold`` collides with
    probability ``recall + 0.001`` (the 0.001 is the sketch filter's share)."""
    p = _bit_agreement(threshold)
    band = p**bits
    if band >= 1.0:
        return 1
    return max(1, math.ceil(math.log(1.0 - recall - _SKETCH_MISS) / math.log1p(-band)))


def plan(
    threshold: float,
    n: int,
    pairs: float,
    background: npt.NDArray[np.float64] | None = None,
    *,
    recall: float = 0.99,
    bits: int | None = None,
    exact_ok: bool = True,
) -> LshPlan | None:
    """The cheapest LSH parameters for ``n`` rows and ``pairs`` comparable pairs,
    or None if ``exact_ok`` and comparing the pairs exactly is estimated cheaper.

    ``background`` holds the bit-agreement probabilities of a sample of random
    pairs (default: 0.5, uncorrelated rows); ``bits`` fixes the band width."""
    agreement = np.full(1, 0.5) if background is None else background

    def cost(k: int) -> float:
        candidates = pairs * float(np.mean(agreement**k))
        return tables_for(threshold, k, recall) * (
            n * (k + _SORT_COST) + candidates * _CANDIDATE_COST
        )

    k = bits if bits is not None else min(_BITS_RANGE, key=cost)
    if exact_ok and pairs * _EXACT_COST <= cost(k):
        return None
    tables = tables_for(threshold, k, recall)
    p = _bit_agreement(threshold)
    cutoff = _binomial_quantile(k * tables, 1.0 - p, 1.0 - _SKETCH_MISS)
    return LshPlan(k, tables, cutoff, 1.0 - (1.0 - p**k) ** tables - _SKETCH_MISS)


def near_duplicate_pairs(
    vectors: npt.ArrayLike,
    groups: Sequence[Hashable] | npt.NDArray[Any],
    threshold: float = 0.95,
    *,
    new: npt.ArrayLike | None = None,
    seed: int = 0,
    method: Method = "auto",
    recall: float = 0.99,
    bits: int | None = None,
    max_bucket: int = 64,
) -> list[Pair]:
    """Pairs ``(i, j, cosine)``, ``i < j``, of rows in the same group with cosine
    at or above ``threshold``, each once, by descending cosine (then i, j).

    ``groups`` holds one scope key per row; rows of different keys never pair.
    ``new`` (a boolean mask or row indices) restricts the answer to pairs with
    at least one new row, for passes after the first.  ``method="auto"``
    compares exactly when that is estimated cheaper than LSH, which finds a
    pair at the threshold with probability >= ``recall`` (see the module
    docstring); ``bits`` fixes its band width and ``max_bucket`` sets which
    buckets are compared exactly.  Deterministic for a ``seed``.  Rows need not
    be normalised; zero rows pair with nothing.  Cosines are float32 dot
    products, so a pair within ~1e-6 of the threshold may fall either way.
    """
    if not 0.0 < threshold <= 1.0:
        raise InvalidArgument(f"threshold must be in (0, 1], got {threshold}")
    if not 0.0 < recall < 1.0 - _SKETCH_MISS:
        raise InvalidArgument(f"recall must be in (0, {1.0 - _SKETCH_MISS}), got {recall}")
    if method not in ("auto", "lsh", "exact"):
        raise InvalidArgument(f"method must be auto, lsh or exact, got {method!r}")
    if bits is not None and bits not in _BITS_RANGE:
        raise InvalidArgument(f"bits must be in [{_BITS_RANGE[0]}, {_BITS_RANGE[-1]}], got {bits}")
    v = _unit_rows(vectors)
    n = len(v)
    codes = _group_codes(groups, n)
    is_new = _new_mask(new, n)
    live = np.einsum("ij,ij->i", v, v) > 0.0
    if n < 2 or (is_new is not None and not is_new.any()):
        return []
    rng = np.random.default_rng(seed)
    lsh = None
    if method != "exact":
        lsh = plan(
            threshold,
            n,
            _comparable_pairs(codes, live, is_new),
            _background_agreement(v, live, rng),
            recall=recall,
            bits=bits,
            exact_ok=method == "auto",
        )
    if lsh is None:
        found = _exact_by_group(v, codes, live, is_new, threshold)
    else:
        log.debug("near duplicates of %d rows: %s", n, lsh)
        found = _lsh(v, codes, live, is_new, threshold, lsh, rng, max_bucket)
    return _finish(*found, n)


def _bit_agreement(threshold: float) -> float:
    return 1.0 - math.acos(min(1.0, max(-1.0, threshold))) / math.pi


def _binomial_quantile(trials: int, q: float, level: float) -> int:
    """Smallest c with P(Binomial(trials, q) <= c) >= level."""
    if q <= 0.0:
        return 0
    log_q, log_p = math.log(q), math.log1p(-q)
    total = 0.0
    for c in range(trials + 1):
        log_pmf = (
            math.lgamma(trials + 1)
            - math.lgamma(c + 1)
            - math.lgamma(trials - c + 1)
            + c * log_q
            + (trials - c) * log_p
        )
        total += math.exp(log_pmf)
        if total >= level:
            return c
    return trials


def _unit_rows(vectors: npt.ArrayLike) -> Floats:
    v = np.ascontiguousarray(vectors, dtype=np.float32)
    if v.ndim != 2:
        raise InvalidArgument(f"vectors must be a 2-d matrix, got shape {v.shape}")
    if not np.isfinite(v).all():
        raise InvalidArgument("vectors must be finite")
    norms = np.sqrt(np.einsum("ij,ij->i", v, v))
    if np.all((np.abs(norms - 1.0) <= _NORM_TOLERANCE) | (norms == 0.0)):
        return v
    return (v / np.where(norms > 0.0, norms, 1.0)[:, None]).astype(np.float32)


def _group_codes(groups: Sequence[Hashable] | npt.NDArray[Any], n: int) -> Int64s:
    if len(groups) != n:
        raise InvalidArgument(f"need one group per vector: {len(groups)} groups, {n} vectors")
    if isinstance(groups, np.ndarray) and groups.dtype != object:
        return np.unique(groups, return_inverse=True)[1].astype(np.int64).reshape(n)
    index: dict[Hashable, int] = {}
    return np.fromiter((index.setdefault(g, len(index)) for g in groups), np.int64, n)


def _new_mask(new: npt.ArrayLike | None, n: int) -> Bools | None:
    if new is None:
        return None
    arr = np.asarray(new)
    if arr.dtype == np.bool_:
        if arr.shape != (n,):
            raise InvalidArgument(f"new mask must have shape ({n},), got {arr.shape}")
        return arr
    if arr.size and (not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0 or arr.max() >= n):
        raise InvalidArgument(f"new must be a boolean mask or row indices in [0, {n})")
    mask = np.zeros(n, dtype=np.bool_)
    mask[arr.astype(np.int64)] = True
    return mask


def _comparable_pairs(codes: Int64s, live: Bools, is_new: Bools | None) -> float:
    """Pairs of live rows in the same group (with at least one new row)."""
    sizes = np.bincount(codes[live]).astype(np.float64)
    if is_new is None:
        return float(np.sum(sizes * (sizes - 1.0) / 2.0))
    fresh = np.bincount(codes[live & is_new], minlength=len(sizes)).astype(np.float64)
    return float(np.sum(fresh * sizes - fresh * (fresh + 1.0) / 2.0))


def _background_agreement(
    v: Floats, live: Bools, rng: np.random.Generator
) -> npt.NDArray[np.float64]:
    rows = np.flatnonzero(live)
    if len(rows) < 2:
        return np.full(1, 0.5)
    a, b = rng.choice(rows, _BG_SAMPLE), rng.choice(rows, _BG_SAMPLE)
    a, b = a[a != b], b[a != b]
    cos = np.clip(np.einsum("ij,ij->i", v[a], v[b]).astype(np.float64), -1.0, 1.0)
    return np.asarray(1.0 - np.arccos(cos) / np.pi, dtype=np.float64)


def _lsh(
    v: Floats,
    codes: Int64s,
    live: Bools,
    is_new: Bools | None,
    threshold: float,
    lsh: LshPlan,
    rng: np.random.Generator,
    max_bucket: int,
) -> tuple[Int64s, Int64s, Floats]:
    """Band by band: enumerate small buckets' pairs, sketch-filter them and set
    big buckets aside; then check the survivors and the big buckets exactly."""
    n, dim = v.shape
    planes = rng.standard_normal((dim, lsh.bits * lsh.tables), dtype=np.float32)
    bands, sketch = _signatures(v, planes, lsh.bits, lsh.tables)
    dead = np.flatnonzero(~live)
    base = codes << lsh.bits
    candidates: list[Int64s] = []
    big_buckets: dict[bytes, Int64s] = {}
    for table in range(lsh.tables):
        keys = base | bands[table]
        keys[dead] = -1 - dead  # a bucket of its own: zero rows pair with nothing
        a, b, big = _band_candidates(keys, is_new, max_bucket)
        near = _hamming(sketch, a, b) <= lsh.sketch_cutoff
        candidates.append(np.minimum(a[near], b[near]) * n + np.maximum(a[near], b[near]))
        big_buckets.update((members.tobytes(), members) for members in big)
    exact = _dense_pairs(v, codes, is_new, list(big_buckets.values()), threshold)
    unique = _distinct(np.concatenate(candidates))
    a, b = unique // n, unique % n
    sims = _dots(v, a, b)
    keep = sims >= threshold
    exact.append((a[keep], b[keep], sims[keep]))
    log.debug(
        "LSH: %d candidates after the sketch filter, %d big buckets, %d pairs",
        len(unique),
        len(big_buckets),
        int(keep.sum()),
    )
    return _concat(exact)


def _dense_pairs(
    v: Floats, codes: Int64s, is_new: Bools | None, buckets: list[Int64s], threshold: float
) -> list[tuple[Int64s, Int64s, Floats]]:
    """Exact pairs within the big buckets: bucket by bucket or, when that is less
    work, once over the union of a scope's big buckets (a dense region such as
    thousands of near copies lands in big buckets of every band)."""
    by_group: dict[int, list[Int64s]] = {}
    for members in buckets:
        by_group.setdefault(int(codes[members[0]]), []).append(members)
    found: list[tuple[Int64s, Int64s, Floats]] = []
    for group_buckets in by_group.values():
        union = _distinct(np.concatenate(group_buckets))
        cheaper = _block_work(union, is_new) <= sum(_block_work(m, is_new) for m in group_buckets)
        for members in [union] if cheaper else group_buckets:
            query = None if is_new is None else is_new[members]
            found.append(_exact_block(v, members, query, threshold))
    return found


def _block_work(members: Int64s, is_new: Bools | None) -> float:
    size = float(len(members))
    return size * size / 2.0 if is_new is None else size * float(is_new[members].sum())


def _signatures(
    v: Floats, planes: Floats, bits: int, tables: int
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.uint64]]:
    """Band keys ``(tables, n)`` and sign bits packed in 64-bit words ``(words, n)``."""
    n = len(v)
    words = -(-bits * tables // 64)
    bands = np.empty((tables, n), dtype=np.int32)
    packed = np.zeros((n, words * 8), dtype=np.uint8)
    # sums of distinct powers of two below 2**24 are exact in float32
    weights = np.exp2(np.arange(bits)).astype(np.float32)
    for lo in range(0, n, _ROW_CHUNK):
        signs = (v[lo : lo + _ROW_CHUNK] @ planes) > 0.0
        rows = len(signs)
        bands[:, lo : lo + rows] = (
            signs.reshape(rows, tables, bits).astype(np.float32) @ weights
        ).T
        bits_row = np.packbits(signs, axis=1, bitorder="little")
        packed[lo : lo + rows, : bits_row.shape[1]] = bits_row
    return bands, np.ascontiguousarray(packed.view(np.uint64).T)


def _band_candidates(
    keys: Int64s, is_new: Bools | None, max_bucket: int
) -> tuple[Int64s, Int64s, list[Int64s]]:
    """Pairs sharing a key (with a new row, if any are given), and the members
    of buckets with more such pairs than a bucket of ``max_bucket`` rows."""
    n = len(keys)
    order = np.argsort(keys)
    sorted_keys = keys[order]
    same = sorted_keys[1:] == sorted_keys[:-1]
    starts = np.flatnonzero(np.concatenate(([True], ~same)))
    lengths = np.diff(np.append(starts, n))
    eligible = lengths > 1
    work = lengths * (lengths - 1) / 2  # pairs to enumerate in each run
    if is_new is not None:
        fresh = np.add.reduceat(is_new[order].astype(np.int64), starts)
        eligible &= fresh > 0
        work = fresh * lengths
    big = eligible & (work > max_bucket * (max_bucket - 1) / 2)
    members = [np.sort(order[s : s + m]) for s, m in zip(starts[big], lengths[big], strict=True)]
    if is_new is None:
        a, b = _pairs_in_runs(order, sorted_keys, same & np.repeat(eligible & ~big, lengths)[:-1])
    else:
        a, b = _pairs_with_new(order, is_new, starts, lengths, eligible & ~big)
    return a, b, members


def _pairs_in_runs(order: Int64s, sorted_keys: Int64s, follows: Bools) -> tuple[Int64s, Int64s]:
    """Every pair of sorted positions with equal keys; ``follows[i]``: i and i+1 pair."""
    n = len(order)
    pos = np.flatnonzero(follows)
    firsts: list[Int64s] = [np.empty(0, dtype=np.int64)]
    seconds: list[Int64s] = [np.empty(0, dtype=np.int64)]
    gap = 1
    while pos.size:  # positions whose key equals the key `gap` positions further on
        firsts.append(order[pos])
        seconds.append(order[pos + gap])
        gap += 1
        pos = pos[pos + gap < n]
        pos = pos[sorted_keys[pos + gap] == sorted_keys[pos]]
    return np.concatenate(firsts), np.concatenate(seconds)


def _pairs_with_new(
    order: Int64s, is_new: Bools, starts: Int64s, lengths: Int64s, runs: Bools
) -> tuple[Int64s, Int64s]:
    """Each new row against the other rows of its run (a new-new pair once)."""
    run_of = np.repeat(np.arange(len(starts)), lengths)
    mine = np.flatnonzero(is_new[order] & np.repeat(runs, lengths))
    counts = lengths[run_of[mine]]
    ends = np.cumsum(counts)
    mate = np.arange(ends[-1] if len(ends) else 0) - np.repeat(ends - counts, counts)
    mate += np.repeat(starts[run_of[mine]], counts)
    me = np.repeat(mine, counts)
    keep = (mate != me) & (~is_new[order[mate]] | (mate > me))
    return order[me[keep]], order[mate[keep]]


def _hamming(sketch: npt.NDArray[np.uint64], a: Int64s, b: Int64s) -> Int64s:
    """Differing sign bits of rows a and b; ``sketch`` holds one row of words per word."""
    out = np.zeros(len(a), dtype=np.int64)
    for lo in range(0, len(a), _PAIR_CHUNK):
        aa, bb = a[lo : lo + _PAIR_CHUNK], b[lo : lo + _PAIR_CHUNK]
        for word in sketch:  # one word at a time: 1-d takes are cache friendly
            out[lo : lo + len(aa)] += np.bitwise_count(np.take(word, aa) ^ np.take(word, bb))
    return out


def _dots(v: Floats, a: Int64s, b: Int64s) -> Floats:
    out = np.empty(len(a), dtype=np.float32)
    for lo in range(0, len(a), _GATHER_ROWS):
        hi = lo + _GATHER_ROWS
        out[lo : lo + len(a[lo:hi])] = np.einsum("ij,ij->i", v[a[lo:hi]], v[b[lo:hi]])
    return out


def _exact_by_group(
    v: Floats, codes: Int64s, live: Bools, is_new: Bools | None, threshold: float
) -> tuple[Int64s, Int64s, Floats]:
    rows = np.flatnonzero(live)
    rows = rows[np.argsort(codes[rows], kind="stable")]  # by group, then by row
    group_of = codes[rows]
    starts = np.flatnonzero(np.concatenate(([True], group_of[1:] != group_of[:-1])))
    found: list[tuple[Int64s, Int64s, Floats]] = []
    for lo, hi in zip(starts, np.append(starts[1:], len(rows)), strict=True):
        members = rows[lo:hi]
        query = None if is_new is None else is_new[members]
        if len(members) > 1 and (query is None or query.any()):
            found.append(_exact_block(v, members, query, threshold))
    return _concat(found)


def _exact_block(
    v: Floats, members: Int64s, query: Bools | None, threshold: float
) -> tuple[Int64s, Int64s, Floats]:
    """Pairs among the sorted rows ``members`` at or above the threshold, exactly,
    with at least one end in ``query`` (a mask over members; None: all)."""
    sub = v if len(members) == len(v) else v[members]
    m = len(members)
    step = max(1, _BLOCK_CELLS // m)
    found: list[tuple[Int64s, Int64s, Floats]] = []
    if query is None:  # upper triangle, block of rows against the columns from there on
        for lo in range(0, m, step):
            sims = sub[lo : lo + step] @ sub[lo:].T
            i, j = np.nonzero(sims >= threshold)
            keep = j > i
            found.append((i[keep] + lo, j[keep] + lo, sims[i[keep], j[keep]]))
    else:
        rows = np.flatnonzero(query)
        for lo in range(0, len(rows), step):
            block = rows[lo : lo + step]
            sims = sub[block] @ sub.T
            i, j = np.nonzero(sims >= threshold)
            keep = (j != block[i]) & (~query[j] | (j > block[i]))  # a new-new pair once
            found.append((block[i[keep]], j[keep], sims[i[keep], j[keep]]))
    a, b, s = _concat(found)
    return members[a], members[b], s


def _concat(parts: list[tuple[Int64s, Int64s, Floats]]) -> tuple[Int64s, Int64s, Floats]:
    if not parts:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float32)
    return (
        np.concatenate([p[0] for p in parts]).astype(np.int64, copy=False),
        np.concatenate([p[1] for p in parts]).astype(np.int64, copy=False),
        np.concatenate([p[2] for p in parts]).astype(np.float32, copy=False),
    )


def _distinct(x: Int64s) -> Int64s:
    """Sorted distinct values (``np.unique``'s hash path is slow on wide int64 ranges)."""
    x = np.sort(x)
    return x[_run_starts(x)]


def _run_starts(sorted_values: Int64s) -> Bools:
    starts = np.ones(len(sorted_values), dtype=np.bool_)
    starts[1:] = sorted_values[1:] != sorted_values[:-1]
    return starts


def _finish(a: Int64s, b: Int64s, sims: Floats, n: int) -> list[Pair]:
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    code = lo * n + hi
    order = np.argsort(code, kind="stable")
    first = order[_run_starts(code[order])]
    lo, hi, sims = lo[first], hi[first], np.minimum(sims[first], 1.0)
    order = np.lexsort((hi, lo, -sims))
    return list(zip(lo[order].tolist(), hi[order].tolist(), sims[order].tolist(), strict=True))
