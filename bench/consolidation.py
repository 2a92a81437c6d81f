"""Consolidation benchmarks: what survives dream passes whose every proposal is accepted.

Three parts, each through the real write path (turns accepted into the inbox
and ingested with the configured extractor, vectors from the configured
embedder, MiniLM by default) and real passes on a clock that moves:

* ``pairs``: the labelled pairs of ``bench/data/merge_pairs.jsonl`` and of
  ``merge_pairs_heldout.jsonl`` (written apart and never used to shape the
  verifier), nine kinds: five of paraphrases, four that differ in one fact;
  each pair in a scope of its own, one pass; which pairs does the merge step
  propose?  Precision and recall overall and per kind, beside cosine alone at
  0.95 (the rule passes used before the verifier).
* ``repeats``: the same for ``bench/data/repeat_pairs_dev.jsonl`` (and, with
  ``--heldout``, its held-out half): a fact said again (``repeat``) against a change
  told in mostly the same words (``change``: "the key is under the pot" / "the key
  moved: it is with the neighbour"), two facts of one person (``same_person``) and
  a fact with another added (``elaboration``); no change may be proposed as a merge.
* ``life``: the scripted year of ``bench/data/life.jsonl`` posted as turns on
  their own dates, then weekly passes through the year and two years more with
  nobody searching, every proposal accepted: which lines had a trace proposed
  for pruning, by kind; none of a durable kind or of importance >= 0.7 may be.
* ``retention``: see :mod:`bench.consolidation_retention`.

    python -m bench.consolidation [--parts pairs,repeats,life,retention] [--days 60]
                                  [--conversations 26,30] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import memory_core as mc
from memory_core import inbox, ingest, proposals
from memory_core.auth import SYSTEM
from memory_core.consolidation.dream import dream
from memory_core.embedders import make_embedder
from memory_core.embeddings import embed_missing, load_vectors
from memory_core.extraction import make_extract

log = logging.getLogger(__name__)
DATA = Path(__file__).resolve().parent / "data"
DAY = 86_400.0
DUPLICATE_KINDS = ("reword", "short", "typo", "synonym_order", "casual", "repeat")
DURABLE_KINDS = ("identity", "health", "relationship", "date", "commitment", "remember")
OLD_COSINE = 0.95


def fresh_brain(folder: Path, **overrides: Any) -> tuple[mc.Brain, mc.Settings]:
    settings = mc.load_settings(
        brain_url=f"sqlite:///{folder / 'brain.sqlite'}", data_dir=folder / "data", **overrides
    )
    return mc.open_brain(settings), settings


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


# -- pairs ---------------------------------------------------------------------


def run_pairs(path: Path = DATA / "merge_pairs.jsonl") -> dict[str, Any]:
    """One pass over every labelled pair; what the merge step proposes, per kind."""
    pairs = read_jsonl(path)
    with tempfile.TemporaryDirectory(prefix="reverie-pairs-") as tmp:
        brain, settings = fresh_brain(Path(tmp), dream_max_proposals=10_000)
        now = datetime(2026, 6, 1).timestamp()
        ids: list[tuple[str, str]] = []
        for k, pair in enumerate(pairs):
            scope_id = f"pair-{k}"
            a = mc.add_trace(
                brain,
                pair["a"],
                type="semantic",
                scope_id=scope_id,
                now=now - 2 * DAY,
                identity=SYSTEM,
            )
            b = mc.add_trace(
                brain, pair["b"], type="semantic", scope_id=scope_id, now=now - DAY, identity=SYSTEM
            )
            ids.append((a, b))
        embedder = make_embedder(settings)
        assert embedder is not None, "the pairs bench needs an embedder"
        embed_missing(brain, embedder)
        names, matrix = load_vectors(brain, embedder.name)
        row = {t: i for i, t in enumerate(names)}
        cosine = [float(matrix[row[a]] @ matrix[row[b]]) for a, b in ids]
        report = dream(brain, settings, embedder=embedder, now=now)
        merge = next(s for s in report.steps if s.name == "merge")
        proposed = {frozenset(i["proposed"]) for i in merge.items if "proposed" in i}
        brain.close()
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    for pair, (a, b), cos in zip(pairs, ids, cosine, strict=True):
        c = by_kind[pair["kind"]]
        c["n"] += 1
        c["proposed"] += frozenset((a, b)) in proposed
        c["cosine_0.95"] += cos >= OLD_COSINE
    return {"kinds": {k: dict(v) for k, v in by_kind.items()}, **_precision_recall(by_kind)}


def _precision_recall(by_kind: dict[str, Counter[str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for rule in ("proposed", "cosine_0.95"):
        tp = sum(by_kind[k][rule] for k in DUPLICATE_KINDS)
        fp = sum(v[rule] for k, v in by_kind.items() if k not in DUPLICATE_KINDS)
        positives = sum(by_kind[k]["n"] for k in DUPLICATE_KINDS)
        out[rule] = {
            "precision": round(tp / (tp + fp), 3) if tp + fp else 1.0,
            "recall": round(tp / positives, 3) if positives else 1.0,
        }
    return out


# -- a scripted life ---------------------------------------------------------------


def run_life(path: Path = DATA / "life.jsonl", years_after: float = 2.0) -> dict[str, Any]:
    """A year of turns, then weekly passes for ``years_after`` years, all accepted."""
    lines = read_jsonl(path)
    by_turn: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="reverie-life-") as tmp:
        brain, settings = fresh_brain(Path(tmp))
        embedder = make_embedder(settings)
        extract = make_extract(settings)
        stamps = [datetime.fromisoformat(x["ts"]).timestamp() for x in lines]
        for line, at in zip(lines, stamps, strict=True):
            turn = inbox.Turn(
                user=line["user"],
                assistant=line["assistant"],
                scope="user",
                scope_id="life",
                conversation_id=line["ts"][:10],
                timestamp=at,
                metadata={"life_id": line["id"]},
            )
            accepted = inbox.accept_turn(brain, turn, now=at, identity=SYSTEM)
            ingest.ingest_turns(brain, [accepted.turn_id], extract, now=at)
            by_turn[accepted.turn_id] = line
        proposed: dict[str, set[str]] = defaultdict(set)  # life id -> kinds of proposals
        now, end = stamps[0] + 7 * DAY, stamps[-1] + years_after * 365 * DAY
        passes = 0
        while now <= end:
            dream(brain, settings, embedder=embedder, now=now)
            for item in proposals.review(brain, settings, now=now, identity=SYSTEM):
                for t in item["traces"]:
                    line = by_turn.get(_turn_of(brain, t["id"]) or "")
                    if line is not None:
                        proposed[line["id"]].add(item["kind"])
            proposals.accept_all(brain, settings, now=now)
            now += 7 * DAY
            passes += 1
        brain.close()
    return _life_summary(lines, proposed, passes)


def _turn_of(brain: mc.Brain, trace_id: str) -> str | None:
    trace = mc.get_trace(brain, trace_id, include_deleted=True, identity=SYSTEM)
    return trace.metadata.get("turn_id")


def _life_summary(
    lines: list[dict[str, Any]], proposed: dict[str, set[str]], passes: int
) -> dict[str, Any]:
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    violations = []
    for line in lines:
        c = kinds[line["kind"]]
        c["lines"] += 1
        pruned = "prune" in proposed.get(line["id"], set())
        c["prune_proposed"] += pruned
        c["merge_proposed"] += "merge" in proposed.get(line["id"], set())
        must_keep = line["kind"] in DURABLE_KINDS or line["importance"] >= 0.7
        if pruned and must_keep:
            violations.append({"id": line["id"], "kind": line["kind"], "user": line["user"]})
    small = kinds["smalltalk"]
    return {
        "passes": passes,
        "kinds": {k: dict(v) for k, v in sorted(kinds.items())},
        "durable_or_important_proposed": violations,
        "smalltalk_proposed_share": round(small["prune_proposed"] / max(small["lines"], 1), 3),
    }


# -- the command ---------------------------------------------------------------------


def report(results: dict[str, Any]) -> str:
    out: list[str] = []
    for part in ("pairs", "pairs_heldout", "repeats", "repeats_heldout"):
        if part not in results:
            continue
        r = results[part]
        out.append(f"{part}: what the merge step proposes (verified) against cosine >= 0.95 alone")
        out.append(f"  {'kind':<18}{'n':>5}{'proposed':>10}{'cos>=.95':>10}")
        for kind, c in r["kinds"].items():
            out.append(f"  {kind:<18}{c['n']:>5}{c['proposed']:>10}{c['cosine_0.95']:>10}")
        for rule in ("proposed", "cosine_0.95"):
            out.append(f"  {rule}: precision {r[rule]['precision']}, recall {r[rule]['recall']}")
    if "life" in results:
        r = results["life"]
        out.append(f"life: {r['passes']} weekly passes, every proposal accepted")
        for kind, c in r["kinds"].items():
            pruned, merged = c.get("prune_proposed", 0), c.get("merge_proposed", 0)
            out.append(
                f"  {kind:<14} lines {c['lines']:>4}  prune proposed {pruned:>4}"
                f"  merge proposed {merged:>4}"
            )
        out.append(
            f"  durable or importance >= 0.7 proposed: {len(r['durable_or_important_proposed'])}"
        )
        out.append(f"  small talk proposed: {r['smalltalk_proposed_share']:.0%}")
    if "retention" in results:
        from bench.consolidation_retention import format_retention

        out.append(format_retention(results["retention"]))
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="pairs,life,retention")
    parser.add_argument("--days", type=int, default=60, help="retention: days of daily passes")
    parser.add_argument("--conversations", default=None, help="retention: e.g. 26,30")
    parser.add_argument("--repeats", type=int, default=1, help="retention: builds of each")
    parser.add_argument(
        "--heldout", action="store_true", help="repeats: also the held-out half of its pairs"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    results: dict[str, Any] = {}
    if "pairs" in parts:
        results["pairs"] = run_pairs(DATA / "merge_pairs.jsonl")
        results["pairs_heldout"] = run_pairs(DATA / "merge_pairs_heldout.jsonl")
    if "repeats" in parts:
        results["repeats"] = run_pairs(DATA / "repeat_pairs_dev.jsonl")
        if args.heldout:
            results["repeats_heldout"] = run_pairs(DATA / "repeat_pairs_heldout.jsonl")
    if "life" in parts:
        results["life"] = run_life()
    if "retention" in parts:
        from bench.consolidation_retention import run_retention

        stems = args.conversations.split(",") if args.conversations else None
        results["retention"] = run_retention(days=args.days, stems=stems, repeats=args.repeats)
    print(report(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=float) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
