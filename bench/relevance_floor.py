"""The relevance floor: what ``min_score`` costs in recall and gains on absent topics.

Everything goes through the real write and read paths: turns are posted to
``POST /v1/turns`` on the embedded default (in-process workers ingest and
embed them with the configured embedder, MiniLM by default), and every query
is ``GET /v1/search?min_score=F`` for each floor F.

* The scripted life (``bench/data/life.jsonl``) with its labelled queries
  (``bench/data/recall_life.jsonl``): "present" queries, with the turns that
  answer them, give Recall@10 and MRR; "absent" ones, about things never said,
  give how often the search answers nothing -- what a floor is for.
* The shared LoCoMo conversations: their questions give Recall@10 and MRR;
  each conversation's questions asked of the next conversation's brain (other
  people, other lives) give the share answered with nothing.

Each query is asked once, with ``min_score=0`` and a limit of ``4 * 10``: a
search with a floor reads that many of its best and keeps the first 10 at or
above the floor, so applying each floor to the one answer's ``relevance``
gives exactly what ``min_score=F&limit=10`` answers -- without the retrieval
feedback of one floor's searches moving the next floor's ranking.

Run: ``PYTHONPATH=. .venv/bin/python -m bench.relevance_floor [--floors 0,0.3,...]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import text

import memory_core as mc
from bench.consolidation_retention import _dia_ids, _post
from bench.locomo import DEFAULT_DATA, load_conversations
from bench.locomo_scoring import score_question
from memory_core.retrieval.search import FLOOR_READS
from reverie import compose

log = logging.getLogger(__name__)
DATA = Path(__file__).resolve().parent / "data"
LIMIT = 10
FLOORS = (0.0, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55)

# (query, scope id) -> each hit's relevance and the turn ids it stands for, best first
Ranked = Callable[[str, str], list[tuple[float, list[str]]]]
READ = FLOOR_READS  # how deep a floored search looks


def _brain_served(folder: Path) -> tuple[mc.Settings, Any, TestClient]:
    settings = mc.load_settings(
        brain_url=f"sqlite:///{folder / 'brain.sqlite'}", data_dir=folder / "data"
    )
    workers = compose.embedded(settings)
    return settings, workers, TestClient(compose.app(workers), base_url=LOCAL)


LOCAL = "http://127.0.0.1:8420"


def _ranked(client: TestClient, brain: mc.Brain, key: str) -> Ranked:
    """Search through the API; each hit as the labelled turns it stands for."""
    by_trace: dict[str, list[str]] = {}

    def ids_of(trace_id: str) -> list[str]:
        if trace_id not in by_trace:
            by_trace.update(_turn_ids(brain, key))
        return by_trace.get(trace_id, [])

    def ranked(query: str, scope_id: str) -> list[tuple[float, list[str]]]:
        answer = client.get(
            "/v1/search",
            params={"q": query, "scope_id": scope_id, "limit": LIMIT * READ, "min_score": 0},
        )
        answer.raise_for_status()
        return [(hit["relevance"], ids_of(hit["id"])) for hit in answer.json()["results"]]

    return ranked


def _turn_ids(brain: mc.Brain, key: str) -> dict[str, list[str]]:
    if key == "dia_id":
        return _dia_ids(brain)
    with brain.read() as conn:
        rows = conn.execute(text("SELECT id, metadata FROM memory_traces")).all()
    meta = {r.id: json.loads(r.metadata) for r in rows}
    by_turn = {m.get("turn_id"): m.get(key) for m in meta.values() if m.get(key)}
    out: dict[str, list[str]] = {}
    for trace_id, m in meta.items():
        own = m.get(key) or by_turn.get(m.get("turn_id"))
        out[trace_id] = [own] if own else []
    return out


def _score(
    ranked: Ranked,
    present: Sequence[tuple[str, Sequence[str]]],
    absent: Sequence[str],
    scope_id: str,
    absent_scope: str,
    floors: Sequence[float],
) -> dict[str, dict[str, float]]:
    asked = [(ranked(q, scope_id), answers) for q, answers in present]
    away = [ranked(q, absent_scope) for q in absent]

    def kept(hits: list[tuple[float, list[str]]], floor: float) -> list[list[str]]:
        return [ids for fit, ids in hits if fit >= floor][:LIMIT]

    out = {}
    for floor in floors:
        recall, rr, emptied, shown = [], [], 0, 0
        for all_hits, answers in asked:
            hits = kept(all_hits, floor)
            turns: list[str] = []
            for ids in hits:
                turns += [d for d in ids if d not in turns] or ["-"]
            scored = score_question(turns, answers)
            recall.append(scored["recall"][10])
            rr.append(scored["reciprocal_rank"])
            emptied += not hits
            shown += len(hits)
        absent_hits = [len(kept(hits, floor)) for hits in away]
        out[f"{floor:g}"] = {
            "R@10": round(100 * sum(recall) / len(recall), 1),
            "MRR": round(100 * sum(rr) / len(rr), 1),
            "present: none %": round(100 * emptied / len(present), 1),
            "present: hits": round(shown / len(present), 1),
            "absent: none %": round(100 * absent_hits.count(0) / len(absent), 1),
            "absent: hits": round(sum(absent_hits) / len(absent), 1),
        }
    return out


def run_life(floors: Sequence[float]) -> dict[str, Any]:
    turns = [json.loads(line) for line in (DATA / "life.jsonl").open()]
    queries = [json.loads(line) for line in (DATA / "recall_life.jsonl").open()]
    with tempfile.TemporaryDirectory(prefix="reverie-floor-") as tmp:
        settings, workers, client = _brain_served(Path(tmp))
        with client:
            for turn in turns:
                client.post(
                    "/v1/turns",
                    json={
                        "user": turn["user"],
                        "assistant": turn["assistant"],
                        "scope": "user",
                        "scope_id": "clara",
                        "conversation_id": "life",
                        "timestamp": turn["ts"],
                        "metadata": {"life_id": turn["id"]},
                        "idempotency_key": turn["id"],
                    },
                ).raise_for_status()
            workers.join(timeout_ms=600_000)
            ranked = _ranked(client, mc.open_brain(settings), "life_id")
            present = [(q["query"], q["answers"]) for q in queries if q["kind"] == "present"]
            absent = [q["query"] for q in queries if q["kind"] == "absent"]
            figures = _score(ranked, present, absent, "clara", "clara", floors)
        workers.stop()
    return {"present": len(present), "absent": len(absent), "by_floor": figures}


def run_locomo(floors: Sequence[float]) -> dict[str, Any]:
    conversations = load_conversations(DEFAULT_DATA)
    with tempfile.TemporaryDirectory(prefix="reverie-floor-") as tmp:
        settings, workers, client = _brain_served(Path(tmp))
        with client:
            for conv in conversations:
                data = json.loads((DEFAULT_DATA / f"{conv.name}.json").read_text())
                _post(client, conv.name, data)
            workers.join(timeout_ms=1_800_000)
            ranked = _ranked(client, mc.open_brain(settings), "dia_id")
            by_conv = {}
            for k, conv in enumerate(conversations):
                other = conversations[(k + 1) % len(conversations)].name
                present = [(q.text, q.evidence) for q in conv.questions]
                absent = [q.text for q in conv.questions]
                log.info("conversation %s: %d questions", conv.name, len(present))
                by_conv[conv.name] = _score(ranked, present, absent, conv.name, other, floors)
        workers.stop()
    mean = {
        f: {
            m: round(sum(c[f][m] for c in by_conv.values()) / len(by_conv), 1)
            for m in next(iter(by_conv.values()))[f]
        }
        for f in next(iter(by_conv.values()))
    }
    return {"by_conversation": by_conv, "mean": mean}


def _table(title: str, by_floor: dict[str, dict[str, float]]) -> str:
    metrics = list(next(iter(by_floor.values())))
    lines = [title, "floor  " + "  ".join(f"{m:>15}" for m in metrics)]
    for floor, row in by_floor.items():
        lines.append(f"{floor:>5}  " + "  ".join(f"{row[m]:>15}" for m in metrics))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--floors", default=",".join(f"{f:g}" for f in FLOORS))
    parser.add_argument("--only", choices=["life", "locomo"])
    parser.add_argument("--json", type=Path, metavar="OUT")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    floors = [float(f) for f in args.floors.split(",")]
    report: dict[str, Any] = {}
    if args.only in (None, "life"):
        report["life"] = run_life(floors)
        print(_table("scripted life (present / absent queries)", report["life"]["by_floor"]))
    if args.only in (None, "locomo"):
        report["locomo"] = run_locomo(floors)
        print(
            _table(
                "LoCoMo, mean of conversations (absent: asked of another's brain)",
                report["locomo"]["mean"],
            )
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
