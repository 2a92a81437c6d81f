"""Retention: LoCoMo conversations through the turn path, daily passes, every proposal accepted.

Each shared LoCoMo conversation is posted turn by turn (one speaker's line a
turn, its session's date as the turn's time, ingested with the configured
extractor the way a worker does, vectors from the configured embedder), never
searched, then given a pass every simulated day for ``days`` days with every
proposal accepted after each -- the worst case of a person who trusts the
passes.  The questions are asked before (on a copy of the brain made before
the first pass) and after, and compared:

* Recall@10 and MRR, each conversation; a hit counts for its own turn, the
  turn a fact was extracted from, and every turn merged into it;
* evidence turns kept: still active, or merged into an active survivor;
* forgetting's work: how many of the labelled content-free turns
  (``bench/data/locomo_content_free.json``) were proposed for pruning;
* the brain's active traces and search latency p50, before and after.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import text

import memory_core as mc
from bench.locomo import DEFAULT_DATA, load_conversations, parse_session_date, turn_content
from bench.locomo_scoring import score_question
from bench.stats import percentile
from memory_core import ingest, proposals
from memory_core.consolidation.dream import dream
from memory_core.embedders import make_embedder
from memory_core.embeddings import embed_missing
from memory_core.extraction import make_extract

log = logging.getLogger(__name__)
DATA = Path(__file__).resolve().parent / "data"
DAY = 86_400.0
LIMIT = 10


def _post(
    brain: mc.Brain, settings: mc.Settings, name: str, data: dict[str, Any], now: float
) -> None:
    """Every turn of the conversation as a turn, in order, ingested as a worker would."""
    extract = make_extract(settings)
    sessions = sorted(
        (int(k.split("_")[1]), k)
        for k in data
        if k.startswith("session_") and k.count("_") == 1 and data[k]
    )
    for number, key in sessions:
        when = parse_session_date(data[f"{key}_date_time"]).timestamp()
        for turn in data[key]:
            accepted = ingest.accept_turn(
                brain,
                ingest.Turn(
                    user=turn_content(turn),
                    assistant="",
                    scope="user",
                    scope_id=name,
                    conversation_id=f"{name}-s{number}",
                    timestamp=when,
                    metadata={"dia_id": str(turn["dia_id"]).strip(), "speaker": turn["speaker"]},
                    idempotency_key=f"{name}/{turn['dia_id']}",
                ),
                now=now,
            )
            ingest.ingest_turns(brain, [accepted.turn_id], extract, now=now)


def _dia_ids(brain: mc.Brain) -> dict[str, list[str]]:
    """Each trace's turns: its own, the turn a fact came from, and every trace merged into it."""
    with brain.read() as conn:
        rows = conn.execute(text("SELECT id, metadata FROM memory_traces")).all()
    meta = {r.id: json.loads(r.metadata) for r in rows}
    by_turn = {m.get("turn_id"): m.get("dia_id") for m in meta.values() if m.get("dia_id")}

    def own(trace_id: str) -> str | None:
        m = meta.get(trace_id, {})
        return m.get("dia_id") or by_turn.get(m.get("turn_id"))

    out: dict[str, list[str]] = {}
    for trace_id, m in meta.items():
        found = [own(trace_id), *(own(t) for t in m.get("merged_from", []))]
        out[trace_id] = [d for d in dict.fromkeys(found) if d]
    return out


def _ask(brain: mc.Brain, conv: Any, now: float) -> dict[str, Any]:
    dia = _dia_ids(brain)
    recall, rr, latencies = [], [], []
    for q in conv.questions:
        t0 = time.perf_counter()
        hits = mc.search(brain, q.text, limit=LIMIT * 3, now=now).results
        latencies.append((time.perf_counter() - t0) * 1000.0)
        ranked: list[str] = []
        for h in hits:
            ranked += [d for d in dia.get(h.trace.id, []) if d not in ranked]
        scored = score_question(ranked, q.evidence)
        recall.append(scored["recall"][10])
        rr.append(scored["reciprocal_rank"])
    return {
        "R@10": round(100 * sum(recall) / len(recall), 1),
        "MRR": round(100 * sum(rr) / len(rr), 1),
        "p50_ms": round(percentile(latencies, 50), 2),
    }


def _evidence_kept(brain: mc.Brain, conv: Any) -> tuple[int, int]:
    dia = _dia_ids(brain)
    with brain.read() as conn:
        active = {
            r[0] for r in conn.execute(text("SELECT id FROM memory_traces WHERE deleted = 0"))
        }
    alive = {d for t in active for d in dia.get(t, [])}
    wanted = {e for q in conv.questions for e in q.evidence}
    return len(wanted & alive), len(wanted)


def _active(brain: mc.Brain) -> int:
    with brain.read() as conn:
        return int(
            conn.execute(text("SELECT count(*) FROM memory_traces WHERE deleted = 0")).scalar_one()
        )


def run_conversation(
    conv: Any, data: dict[str, Any], content_free: set[str], days: int
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="reverie-retention-") as tmp:
        folder = Path(tmp)
        settings = mc.load_settings(
            brain_url=f"sqlite:///{folder / 'brain.sqlite'}", data_dir=folder / "data"
        )
        brain = mc.open_brain(settings)
        start = time.time()
        _post(brain, settings, conv.name, data, now=start)
        embedder = make_embedder(settings)
        if embedder is not None:
            embed_missing(brain, embedder)
        copy = folder / "before.sqlite"
        with sqlite3.connect(settings.brain_url.removeprefix("sqlite:///")) as db:
            db.execute(f"VACUUM INTO '{copy}'")
        before_brain = mc.open_brain(
            mc.load_settings(brain_url=f"sqlite:///{copy}", data_dir=folder / "data-before")
        )
        before = _ask(before_brain, conv, start + days * DAY)
        before["active"] = _active(before_brain)
        mc.close_brain(before_brain.url)
        pruned_turns: set[str] = set()
        dia = _dia_ids(brain)
        for day in range(1, days + 1):
            now = start + day * DAY
            dream(brain, settings, embedder=embedder, now=now)
            for item in proposals.review(brain, settings, kind="prune", now=now):
                pruned_turns |= {d for t in item["traces"] for d in dia.get(t["id"], [])}
            proposals.accept_all(brain, settings, now=now)
        after = _ask(brain, conv, start + days * DAY)
        after["active"] = _active(brain)
        kept, wanted = _evidence_kept(brain, conv)
        mc.close_brain(brain.url)
    return {
        "before": before,
        "after": after,
        "evidence_kept": kept,
        "evidence": wanted,
        "content_free": len(content_free),
        "content_free_proposed": len(content_free & pruned_turns),
        "other_turns_proposed": len(pruned_turns - content_free),
    }


def run_retention(*, days: int = 60, stems: Sequence[str] | None = None) -> dict[str, Any]:
    labels = json.loads((DATA / "locomo_content_free.json").read_text())["conversations"]
    out = {}
    for conv in load_conversations(DEFAULT_DATA, stems):
        data = json.loads((DEFAULT_DATA / f"{conv.name}.json").read_text())
        out[conv.name] = run_conversation(conv, data, set(labels.get(conv.name, [])), days)
        log.warning("retention %s: %s", conv.name, out[conv.name])
    return {"days": days, "conversations": out}


def format_retention(r: dict[str, Any]) -> str:
    lines = [f"retention: {r['days']} daily passes, every proposal accepted"]
    lines.append(
        f"  {'conv':<6}{'R@10 before':>12}{'after':>7}{'MRR before':>12}{'after':>7}"
        f"{'evidence kept':>15}{'content-free proposed':>23}{'traces':>14}{'p50 ms':>14}"
    )
    for name, c in r["conversations"].items():
        b, a = c["before"], c["after"]
        lines.append(
            f"  {name:<6}{b['R@10']:>12}{a['R@10']:>7}{b['MRR']:>12}{a['MRR']:>7}"
            f"{c['evidence_kept']:>8}/{c['evidence']:<6}"
            f"{c['content_free_proposed']:>14}/{c['content_free']:<8}"
            f"{b['active']:>7}->{a['active']:<6}{b['p50_ms']:>7}->{a['p50_ms']:<6}"
        )
    return "\n".join(lines)
