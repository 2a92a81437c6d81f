"""What a tag expression costs a search, against the plain ``tags=`` filter it extends:
the same queries on one brain, interleaved query by query, BM25 alone (the vector
channel off, so the filter's own cost is what differs).

Three forms: ``tags=work`` against ``tags_expr=work`` (the same filter, written as an
expression), and a compound expression (``work & !travel | family & (music | /^fo/)``)
against its nearest plain form (``tags=work``).  Run from the repository root::

    python -m bench.tag_expressions --size 100000 --queries 300

Target: the compound expression's p50 at most 1.2x that of ``tags=``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import memory_core as mc
from bench.search_latency import fill_brain, make_queries, make_traces, make_vocab
from bench.stats import percentile
from memory_core.auth import SYSTEM

COMPOUND = "work & !travel | family & (music | /^fo/)"
TARGET = 1.2


def run(size: int, queries: int, seed: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = mc.load_settings(
            brain_url=f"sqlite:///{Path(tmp) / 'brain.sqlite'}",
            data_dir=Path(tmp),
            embedder="none",
        )
        brain = mc.open_brain(settings)
        vocab = make_vocab(seed)
        fill_brain(brain, make_traces(seed, vocab, size))
        asked = make_queries(seed + 1, vocab, queries)
        forms: dict[str, dict[str, Any]] = {
            "tags=work": {"tags": ["work"]},
            "tags_expr=work": {"tags_expr": "work"},
            "compound": {"tags_expr": COMPOUND},
        }
        times: dict[str, list[float]] = {name: [] for name in forms}
        for q in asked[:20]:  # warm every path
            for kwargs in forms.values():
                mc.search(brain, q, identity=SYSTEM, embedder=None, **kwargs)
        for q in asked:
            for name, kwargs in forms.items():
                start = time.perf_counter()
                mc.search(brain, q, identity=SYSTEM, embedder=None, **kwargs)
                times[name].append((time.perf_counter() - start) * 1000)
        brain.close()
    base = percentile(times["tags=work"], 50)
    out: dict[str, Any] = {"traces": size, "queries": queries}
    for name, values in times.items():
        out[f"{name} p50_ms"] = round(percentile(values, 50), 2)
        out[f"{name} ratio"] = round(percentile(values, 50) / base, 3)
    out["pass"] = out["compound ratio"] <= TARGET
    return out


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    print(json.dumps(run(args.size, args.queries, args.seed), indent=2))


if __name__ == "__main__":
    main()
