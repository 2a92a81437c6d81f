"""Dream pass at scale: duration at 10k and 100k traces, near-duplicate recall.

Synthetic brains (deterministic seed): traces with 384-d unit vectors drawn
around a few thousand centres, so that related traces are similar but
unrelated ones are not, plus a known share of planted near duplicates (a
trace and a slightly perturbed copy of its vector, cosine ~0.96-0.99, whose
text restates the original's; every other text names words of its own, so the
verifier has real work: candidates that are not planted differ in a word).
Each brain runs one full pass (and, once a hundredth more traces are added,
the next, which should cost far less: passes are incremental); the merge
step's proposals are compared with the planted pairs: recall (planted pairs
proposed) and precision (proposals that are planted).  The duration ratio
100k/10k shows whether any step is quadratic (10x the data should cost about
10x, not 100x).

The proposal cap and the pending bound are lifted for the run so that every
detected pair is proposed (the defaults keep a person's review queue short).

    python -m bench.dream [--sizes 10000,100000] [--dup-share 0.02] [--json OUT]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import text

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.consolidation.dream import dream
from memory_core.embeddings import to_blob

log = logging.getLogger(__name__)
DIM = 384
MODEL = "bench-synthetic-384"


@dataclass
class FakeEmbedder:
    """Names the synthetic vectors' model; embeds only the pass's own insights."""

    name: str = MODEL
    dim: int = DIM

    def embed(self, texts: Any) -> npt.NDArray[np.float32]:
        rng = np.random.default_rng(len(texts))
        vecs = rng.standard_normal((len(texts), DIM)).astype(np.float32)
        return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def synthetic(
    n: int, dup_share: float, seed: int
) -> tuple[npt.NDArray[np.float32], set[tuple[int, int]]]:
    """n unit vectors around n/30 centres; planted (i, j) near-duplicate pairs."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(n // 30, 1), DIM)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    which = rng.integers(0, len(centres), n)
    vecs = centres[which] + 0.9 * rng.standard_normal((n, DIM)).astype(np.float32) / np.sqrt(DIM)
    planted: set[tuple[int, int]] = set()
    originals = rng.choice(n // 2, int(n * dup_share), replace=False)
    copies = rng.choice(np.arange(n // 2, n), len(originals), replace=False)
    for a, b in zip(originals, copies, strict=True):
        noise = rng.standard_normal(DIM).astype(np.float32)
        vecs[b] = vecs[a] / np.linalg.norm(vecs[a]) + rng.uniform(0.1, 0.25) * noise / np.sqrt(DIM)
        planted.add((int(min(a, b)), int(max(a, b))))
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs.astype(np.float32), planted


def word(k: int) -> str:
    """A made-up word for k, letters only (a number would read as a changed fact), three
    syllables drawn by a hash so that no two words look like one mistyped."""
    digest = hashlib.sha256(str(k).encode()).digest()
    consonants, vowels = "bcdfghjklmnprstvwz", "aeiou"
    return "".join(consonants[digest[j] % 18] + vowels[digest[j + 3] % 5] for j in range(3))


def texts(n: int, planted: set[tuple[int, int]]) -> list[str]:
    """Distinct texts; a planted copy restates its original (the same words, retyped)."""
    out = [f"A note about {word(i)} and the {word(i % 997)} plan." for i in range(n)]
    for a, b in planted:
        out[b] = out[a].lower().rstrip(".") + "!"
    return out


def build(
    folder: Path, n: int, dup_share: float, seed: int
) -> tuple[mc.Brain, mc.Settings, list[str], set[tuple[int, int]]]:
    settings = mc.load_settings(
        brain_url=f"sqlite:///{folder / 'brain.sqlite'}",
        data_dir=folder / "data",
        embedder="none",
        dream_max_proposals=10 * n,
        dream_max_pending=10 * n,
    )
    brain = mc.open_brain(settings)
    vecs, planted = synthetic(n, dup_share, seed)
    contents = texts(n, planted)
    ids = [f"mt_bench_{i:07d}" for i in range(n)]
    created = time.time() - 3600
    for start in range(0, n, 5000):
        chunk = range(start, min(start + 5000, n))
        mc.add_traces(
            brain,
            [
                mc.NewTrace(
                    contents[i],
                    type="semantic",
                    scope="user",
                    scope_id="u1",
                    id=ids[i],
                )
                for i in chunk
            ],
            now=created,
            identity=SYSTEM,
        )
        store(brain, [ids[i] for i in chunk], vecs[chunk.start : chunk.stop], created)
    return brain, settings, ids, planted


def store(brain: mc.Brain, ids: list[str], vecs: npt.NDArray[np.float32], created: float) -> None:
    """The synthetic vectors of ``ids``, written as the embed step writes them."""
    with brain.transaction() as conn:
        conn.execute(
            text(
                "INSERT INTO trace_embeddings (trace_id, model, dim, vector, created_at) "
                "VALUES (:t, :m, :d, :v, :c)"
            ),
            [
                {"t": t, "m": MODEL, "d": DIM, "v": to_blob(v), "c": created}
                for t, v in zip(ids, vecs, strict=True)
            ],
        )


# Traces added after the first pass, as a share of the brain, before the next one.
NEXT_SHARE = 0.01


def add_more(brain: mc.Brain, n: int, seed: int) -> None:
    """``n`` more traces with vectors, written after the first pass (a day's new talk)."""
    vecs, _ = synthetic(n, 0.0, seed + 1)
    ids = [f"mt_bench_next_{i:07d}" for i in range(n)]
    mc.add_traces(
        brain,
        [
            mc.NewTrace(
                f"A later note about {word(10_000_000 + i)}.",
                type="semantic",
                scope="user",
                scope_id="u1",
                id=ids[i],
            )
            for i in range(n)
        ],
        identity=SYSTEM,
    )
    store(brain, ids, vecs, time.time())


def run_size(n: int, dup_share: float, seed: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="reverie-dream-bench-") as tmp:
        t0 = time.perf_counter()
        brain, settings, ids, planted = build(Path(tmp), n, dup_share, seed)
        build_s = time.perf_counter() - t0
        log.info("size %d: built in %.1fs; running a pass", n, build_s)
        t1 = time.perf_counter()
        report = dream(brain, settings, embedder=FakeEmbedder(), reason="bench")
        duration = time.perf_counter() - t1
        index = {t: i for i, t in enumerate(ids)}
        proposed = {
            tuple(sorted((index[item["proposed"][0]], index[item["proposed"][1]])))
            for step in report.steps
            if step.name == "merge"
            for item in step.items
            if "proposed" in item
        }
        hits = len(proposed & planted)
        more = max(1, int(n * NEXT_SHARE))
        add_more(brain, more, seed)
        log.info("size %d: %d traces added; running the next pass", n, more)
        t2 = time.perf_counter()
        later = dream(brain, settings, embedder=FakeEmbedder(), reason="bench")
        next_s = time.perf_counter() - t2
        brain.close()
    return {
        "traces": n,
        "planted_pairs": len(planted),
        "proposed_pairs": len(proposed),
        "recall": hits / len(planted) if planted else 1.0,
        "precision": hits / len(proposed) if proposed else 1.0,
        "pass_s": round(duration, 2),
        "next_pass_s": round(next_s, 2),
        "next_pass_new_traces": more,
        "next_steps_s": {s.name: round(s.duration_s, 2) for s in later.steps},
        "build_s": round(build_s, 1),
        "steps_s": {s.name: round(s.duration_s, 2) for s in report.steps},
        "status": report.status,
    }


def report(rows: list[dict[str, Any]]) -> None:
    print(
        f"{'traces':>8} {'pass s':>8} {'planted':>8} {'proposed':>9} {'recall':>7} "
        f"{'precision':>9}  steps (s)"
    )
    for r in rows:
        print(
            f"{r['traces']:>8} {r['pass_s']:>8} {r['planted_pairs']:>8} {r['proposed_pairs']:>9} "
            f"{r['recall']:>7.3f} {r['precision']:>9.3f}  {r['steps_s']}"
        )
    for r in rows:
        print(
            f"{r['traces']:>8}: the next pass, after {r['next_pass_new_traces']} new traces, "
            f"{r['next_pass_s']} s  {r['next_steps_s']}"
        )
    if len(rows) >= 2:
        ratio = rows[-1]["pass_s"] / max(rows[0]["pass_s"], 1e-9)
        size = rows[-1]["traces"] / rows[0]["traces"]
        print(
            f"duration ratio {rows[-1]['traces']}/{rows[0]['traces']}: {ratio:.1f}x "
            f"for {size:.0f}x the traces"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--dup-share", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    rows = [run_size(int(n), args.dup_share, args.seed) for n in args.sizes.split(",")]
    report(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
