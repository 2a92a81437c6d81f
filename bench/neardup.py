"""Near-duplicate search at scale: time, recall and precision on synthetic vectors.

Per size, a deterministic synthetic corpus of unit vectors (384-d by default)
that mimics sentence embeddings: ``--centres`` topic centres sharing a common
direction (mean cosine between centres ``--anisotropy``), topic sizes skewed by
a Zipf law, each member spread around its centre so that two members of one
topic have cosine between 0.5 and 0.85.  Rows fall into ``--groups`` scope
keys of unequal size.  A share ``--dup-share`` of the rows are planted near
duplicates: a noisy copy of another row with a target cosine uniform in
[threshold, 0.995], in the same scope key (a few in another key, which must
never be returned).

Measured with :func:`memory_core.consolidation.neardup.near_duplicate_pairs`:

* **full**: every pair of the corpus.  Recall of the planted pairs whose
  cosine is at or above the threshold (overall and within 0.01 of it),
  precision against the planted pairs, and the returned pairs that were not
  planted (true positives too: every returned pair is verified exactly).
  Up to ``--exact-max`` rows the exact answer is computed as well and recall
  is reported against it.
* **incr**: only pairs touching a random ``--new-share`` of "new" rows.

The last line is the full-pass duration ratio of the largest size to the
smallest.  Run from the repository root::

    python -m bench.neardup --sizes 10000,100000 [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import platform
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_core.consolidation.neardup import LshPlan, near_duplicate_pairs

log = logging.getLogger(__name__)

Matrix = npt.NDArray[np.float32]
PairSet = set[tuple[int, int]]


@dataclass
class Corpus:
    vectors: Matrix
    groups: npt.NDArray[np.int64]
    planted: dict[tuple[int, int], float]  # same-key planted pairs at or above threshold
    cross: PairSet  # planted across keys: must never be returned


@dataclass
class Run:
    size: int
    mode: str
    seconds: float
    cpu_seconds: float
    method: str
    returned: int
    planted: int
    recall_planted: float
    recall_near_threshold: float | None
    precision_planted: float
    unplanted_returned: int
    cross_returned: int
    exact_pairs: int | None = None
    exact_seconds: float | None = None
    recall_exact: float | None = None
    notes: list[str] = field(default_factory=list)


def _unit(x: npt.NDArray[np.float32]) -> Matrix:
    rows: Matrix = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    return rows


def make_corpus(n: int, args: argparse.Namespace) -> Corpus:
    """The synthetic corpus of ``n`` rows for these arguments, deterministic."""
    rng = np.random.default_rng([args.seed, n])
    dim, threshold = args.dim, args.threshold
    n_dup = round(n * args.dup_share)
    n_base = n - n_dup
    if args.centres:
        common = _unit(rng.standard_normal((1, dim), dtype=np.float32))
        lift = math.sqrt(args.anisotropy / (1.0 - args.anisotropy))
        centres = _unit(rng.standard_normal((args.centres, dim), dtype=np.float32) + lift * common)
        weights = 1.0 / np.arange(1, args.centres + 1) ** args.zipf
        topic = rng.choice(args.centres, n_base, p=weights / weights.sum())
        # two members at per-coordinate spread s have cosine ~ 1 / (1 + dim * s**2)
        within = rng.uniform(0.5, 0.85, args.centres)
        spread = np.sqrt((1.0 / within - 1.0) / dim).astype(np.float32)
        noise = rng.standard_normal((n_base, dim), dtype=np.float32)
        base = _unit(centres[topic] + spread[topic, None] * noise)
    else:
        base = _unit(rng.standard_normal((n_base, dim), dtype=np.float32))
    key_weights = 1.0 / np.arange(1, args.groups + 1)
    base_groups = rng.choice(args.groups, n_base, p=key_weights / key_weights.sum())
    # noisy copies: x + s * g has cosine ~ 1 / sqrt(1 + dim * s**2) with x
    sources = rng.choice(n_base, n_dup, replace=False)
    target = rng.uniform(threshold, 0.995, n_dup)
    sigma = np.sqrt((1.0 / target**2 - 1.0) / dim).astype(np.float32)[:, None]
    copies = _unit(base[sources] + sigma * rng.standard_normal((n_dup, dim), dtype=np.float32))
    copy_groups = base_groups[sources].copy()
    moved = rng.random(n_dup) < 0.05  # 5% of copies land in another scope key
    copy_groups[moved] = (copy_groups[moved] + 1) % args.groups
    vectors = np.concatenate([base, copies])
    groups = np.concatenate([base_groups, copy_groups]).astype(np.int64)
    perm = rng.permutation(n)
    where = np.empty(n, dtype=np.int64)
    where[perm] = np.arange(n)  # new position of old row
    cos = np.einsum("ij,ij->i", base[sources], copies)
    planted: dict[tuple[int, int], float] = {}
    cross: PairSet = set()
    for k, (src, sim) in enumerate(zip(sources.tolist(), cos.tolist(), strict=True)):
        a, b = sorted((int(where[src]), int(where[n_base + k])))
        if moved[k] and args.groups > 1:
            cross.add((a, b))
        elif sim >= threshold:
            planted[(a, b)] = sim
    return Corpus(vectors[perm], groups[perm], planted, cross)


class _MethodLog(logging.Handler):
    """Remembers which method the last call chose (from neardup's debug log)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.last = "exact"

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("near duplicates of"):
            plan = record.args[1] if isinstance(record.args, tuple) else None
            self.last = f"lsh k={plan.bits} L={plan.tables}" if isinstance(plan, LshPlan) else "lsh"


def _timed(fn: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def _best_of(repeat: int, fn: Any, min_seconds: float = 3.0) -> tuple[Any, float, float]:
    """The result and the smallest wall and CPU seconds of at least ``repeat``
    calls, more (up to 20) until ``min_seconds`` have passed: quick calls are
    the most exposed to a busy machine."""
    wall, cpu, result, calls, began = math.inf, math.inf, None, 0, time.perf_counter()
    while calls < repeat or (calls < 20 and time.perf_counter() - began < min_seconds):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
        calls += 1
    return result, wall, cpu


def measure(corpus: Corpus, mode: str, args: argparse.Namespace, methods: _MethodLog) -> Run:
    """One full or incremental search on the corpus, scored."""
    n = len(corpus.vectors)
    new = None
    planted = corpus.planted
    if mode == "incr":
        rng = np.random.default_rng([args.seed, n, 1])
        new = rng.random(n) < args.new_share
        planted = {p: s for p, s in planted.items() if new[p[0]] or new[p[1]]}
    methods.last = "exact"
    pairs, seconds, cpu = _best_of(
        args.repeat,
        lambda: near_duplicate_pairs(
            corpus.vectors, corpus.groups, args.threshold, new=new, seed=args.seed
        ),
    )
    found = {(i, j) for i, j, _ in pairs}
    hits = sum(1 for p in planted if p in found)
    close = [p for p, s in planted.items() if s < args.threshold + 0.01]
    run = Run(
        size=n,
        mode=mode,
        seconds=seconds,
        cpu_seconds=cpu,
        method=methods.last,
        returned=len(found),
        planted=len(planted),
        recall_planted=hits / max(1, len(planted)),
        recall_near_threshold=sum(1 for p in close if p in found) / len(close) if close else None,
        precision_planted=hits / max(1, len(found)),
        unplanted_returned=len(found) - hits,
        cross_returned=len(found & corpus.cross),
    )
    if n <= args.exact_max:
        truth, run.exact_seconds = _timed(
            lambda: near_duplicate_pairs(
                corpus.vectors, corpus.groups, args.threshold, new=new, method="exact"
            )
        )
        exact = {(i, j) for i, j, _ in truth}
        run.exact_pairs = len(exact)
        run.recall_exact = len(exact & found) / max(1, len(exact))
        if found - exact:
            run.notes.append(f"{len(found - exact)} returned pairs not in the exact answer")
    return run


ROW = "{:>8} {:>5} {:>16} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>6} {:>9}"


def report(runs: Sequence[Run]) -> None:
    print(
        ROW.format(
            "rows", "mode", "method", "wall s", "cpu s", "returned", "planted", "recall",
            "rec<.01", "precision", "unplanted", "cross", "rec_exact",
        )
    )  # fmt: skip
    for r in runs:
        exact = "-" if r.recall_exact is None else f"{r.recall_exact:.4f}"
        near = "-" if r.recall_near_threshold is None else f"{r.recall_near_threshold:.4f}"
        print(
            ROW.format(
                r.size, r.mode, r.method, f"{r.seconds:.2f}", f"{r.cpu_seconds:.2f}",
                r.returned, r.planted, f"{r.recall_planted:.4f}", near,
                f"{r.precision_planted:.4f}", r.unplanted_returned, r.cross_returned, exact,
            )
        )  # fmt: skip
        if r.exact_seconds is not None:
            print(f"{'':>14} exact: {r.exact_pairs} pairs in {r.exact_seconds:.2f} s")
        for note in r.notes:
            print(f"{'':>14} note: {note}")
    full = [r for r in runs if r.mode == "full"]
    if len(full) > 1:
        small, large = min(full, key=lambda r: r.size), max(full, key=lambda r: r.size)
        print(
            f"full-pass duration ratio {large.size}/{small.size} rows: "
            f"{large.seconds / small.seconds:.1f}x wall, "
            f"{large.cpu_seconds / small.cpu_seconds:.1f}x cpu"
        )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m bench.neardup", description=__doc__)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated row counts")
    parser.add_argument("--dim", type=int, default=384, help="vector dimension")
    parser.add_argument("--threshold", type=float, default=0.95, help="cosine threshold")
    parser.add_argument("--dup-share", type=float, default=0.02, help="share of planted rows")
    parser.add_argument("--centres", type=int, default=2000, help="topics; 0: uniform vectors")
    parser.add_argument("--zipf", type=float, default=0.5, help="topic size skew exponent")
    parser.add_argument("--anisotropy", type=float, default=0.1, help="mean centre cosine")
    parser.add_argument("--groups", type=int, default=4, help="scope keys")
    parser.add_argument("--new-share", type=float, default=0.01, help="new rows (incr mode)")
    parser.add_argument("--exact-max", type=int, default=20000, help="exact answer up to")
    parser.add_argument("--repeat", type=int, default=3, help="timings: best of this many")
    parser.add_argument("--seed", type=int, default=0, help="data and hashing seed")
    parser.add_argument("--json", help="also write the results to this file")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    """Build each corpus, measure, print the table (and the JSON if asked)."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    methods = _MethodLog()
    neardup_log = logging.getLogger("memory_core.consolidation.neardup")
    neardup_log.addHandler(methods)
    neardup_log.setLevel(logging.DEBUG)
    neardup_log.propagate = False
    sizes = [int(s) for s in args.sizes.split(",")]
    runs: list[Run] = []
    for n in sizes:
        corpus, seconds = _timed(lambda n=n: make_corpus(n, args))
        log.warning("corpus of %d rows built in %.1f s", n, seconds)
        for mode in ("full", "incr"):
            runs.append(measure(corpus, mode, args, methods))
    print(f"{platform.processor() or platform.machine()}, {args}")
    report(runs)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "runs": [asdict(r) for r in runs]}, f, indent=2)


if __name__ == "__main__":
    main()
