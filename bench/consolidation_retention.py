"""Retention: LoCoMo conversations through the HTTP API, daily passes, every proposal accepted.

Each shared LoCoMo conversation is posted turn by turn to ``POST /v1/turns``
(one speaker's line a turn, its session's date as the turn's time) on the
embedded default -- the API ``reverie.compose`` builds with in-process
workers that ingest with the configured extractor and embed with the
configured embedder -- never searched, then given a dream pass every
simulated day for ``days`` days with every proposal accepted after each (the
worst case of a person who trusts the passes; what ``memctl proposals accept
--all --yes`` does).  The questions are asked through ``GET /v1/search``
before (on a copy of the brain made before the first pass, served by an API
of its own, so asking leaves the brain under test unsearched) and after:

* Recall@10 and MRR, each conversation; a hit counts for its own turn, the
  turn a fact was extracted from, and every turn merged into it;
* evidence turns kept: still active, or merged into an active survivor;
* forgetting's work: how many of the labelled content-free turns
  (``bench/data/locomo_content_free.json``) were proposed for pruning;
* the brain's active traces and search latency p50 through the API, before
  and after.
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

from fastapi.testclient import TestClient
from sqlalchemy import text

import memory_core as mc
from bench.locomo import DEFAULT_DATA, load_conversations, parse_session_date, turn_content
from bench.locomo_scoring import score_question
from bench.stats import percentile
from memory_core import proposals
from memory_core.auth import SYSTEM
from memory_core.consolidation.dream import dream
from memory_core.embedders import make_embedder
from reverie import compose

log = logging.getLogger(__name__)
DATA = Path(__file__).resolve().parent / "data"
DAY = 86_400.0
LIMIT = 10


def _post(client: TestClient, name: str, data: dict[str, Any]) -> int:
    """Every turn of the conversation to ``POST /v1/turns``, in order; how many were posted."""
    sessions = sorted(
        (int(k.split("_")[1]), k)
        for k in data
        if k.startswith("session_") and k.count("_") == 1 and data[k]
    )
    posted = 0
    for number, key in sessions:
        when = parse_session_date(data[f"{key}_date_time"]).isoformat()
        for turn in data[key]:
            answer = client.post(
                "/v1/turns",
                json={
                    "user": turn_content(turn),
                    "assistant": "",
                    "scope": "user",
                    "scope_id": name,
                    "conversation_id": f"{name}-s{number}",
                    "timestamp": when,
                    "metadata": {"dia_id": str(turn["dia_id"]).strip(), "speaker": turn["speaker"]},
                    "idempotency_key": f"{name}/{turn['dia_id']}",
                },
            )
            answer.raise_for_status()
            posted += 1
    return posted


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


def _ask(
    brain: mc.Brain, workers: Any, client: TestClient, conv: Any, scope_id: str
) -> dict[str, Any]:
    """The conversation's questions through ``GET /v1/search``, scored by their evidence;
    each search's retrieval feedback is recorded before the next question, as a person
    asking one after another would find it."""
    dia = _dia_ids(brain)
    recall, rr, latencies = [], [], []
    for q in conv.questions:
        t0 = time.perf_counter()
        answer = client.get(
            "/v1/search", params={"q": q.text, "scope_id": scope_id, "limit": LIMIT * 3}
        )
        latencies.append((time.perf_counter() - t0) * 1000.0)
        answer.raise_for_status()
        workers.join()
        ranked: list[str] = []
        for hit in answer.json()["results"]:
            ranked += [d for d in dia.get(hit["id"], []) if d not in ranked]
        scored = score_question(ranked, q.evidence)
        recall.append(scored["recall"][10])
        rr.append(scored["reciprocal_rank"])
    return {
        "R@10": round(100 * sum(recall) / len(recall), 1),
        "MRR": round(100 * sum(rr) / len(rr), 1),
        "p50_ms": round(percentile(latencies, 50), 2),
        "rr": rr,
    }


def _alive(brain: mc.Brain) -> set[str]:
    """The turns still held: by an active trace of their own or one merged from them."""
    dia = _dia_ids(brain)
    with brain.read() as conn:
        active = {
            r[0] for r in conn.execute(text("SELECT id FROM memory_traces WHERE deleted = 0"))
        }
    return {d for t in active for d in dia.get(t, [])}


def _dia_order(dia_id: str) -> tuple[int, int]:
    session, _, turn = dia_id.removeprefix("D").partition(":")
    return (int(session), int(turn)) if session.isdigit() and turn.isdigit() else (0, 0)


def _evidence_kept(brain: mc.Brain, conv: Any) -> tuple[int, int]:
    alive = _alive(brain)
    wanted = {e for q in conv.questions for e in q.evidence}
    return len(wanted & alive), len(wanted)


def _active(brain: mc.Brain) -> int:
    with brain.read() as conn:
        return int(
            conn.execute(text("SELECT count(*) FROM memory_traces WHERE deleted = 0")).scalar_one()
        )


def _served(settings: mc.Settings) -> tuple[Any, TestClient]:
    """The embedded default for these settings: in-process workers and the API over them."""
    workers = compose.embedded(settings)
    return workers, TestClient(compose.app(workers), base_url="http://127.0.0.1:8420")


def ingested(folder: Path, name: str, data: dict[str, Any]) -> mc.Settings:
    """A brain in ``folder`` holding the conversation posted through the API, ingested
    and embedded by the embedded default's workers; its settings."""
    settings = mc.load_settings(
        brain_url=f"sqlite:///{folder / 'brain.sqlite'}", data_dir=folder / "data"
    )
    workers, client = _served(settings)
    with client:
        _post(client, name, data)
        workers.join(timeout_ms=600_000)  # ingested and embedded
    workers.stop()
    return settings


def run_conversation(
    conv: Any, data: dict[str, Any], content_free: set[str], days: int
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="reverie-retention-") as tmp:
        folder = Path(tmp)
        settings = ingested(folder, conv.name, data)
        brain = mc.open_brain(settings)
        copy = folder / "before.sqlite"
        with sqlite3.connect(settings.brain_url.removeprefix("sqlite:///")) as db:
            db.execute(f"VACUUM INTO '{copy}'")
        before_settings = mc.load_settings(
            brain_url=f"sqlite:///{copy}", data_dir=folder / "data-before"
        )
        before_workers, before_client = _served(before_settings)
        before_brain = mc.open_brain(before_settings)
        with before_client:
            before = _ask(before_brain, before_workers, before_client, conv, conv.name)
        before_workers.stop()
        before["active"] = _active(before_brain)
        before_brain.close()
        embedder = make_embedder(settings)
        pruned_turns: set[str] = set()
        dia = _dia_ids(brain)
        start = time.time()
        for day in range(1, days + 1):
            now = start + day * DAY
            dream(brain, settings, embedder=embedder, now=now)
            for item in proposals.review(brain, settings, kind="prune", now=now, identity=SYSTEM):
                pruned_turns |= {d for t in item["traces"] for d in dia.get(t["id"], [])}
            proposals.accept_all(brain, settings, now=now)
        workers, client = _served(settings)
        with client:
            after = _ask(brain, workers, client, conv, conv.name)
        workers.stop()
        after["active"] = _active(brain)
        kept, wanted = _evidence_kept(brain, conv)
        lost = sorted(
            {e for q in conv.questions for e in q.evidence} - _alive(brain), key=_dia_order
        )
        brain.close()
    worse = [
        {"question": q.text, "evidence": list(q.evidence), "rr_before": b, "rr_after": a}
        for q, b, a in zip(conv.questions, before.pop("rr"), after.pop("rr"), strict=True)
        if a < b
    ]
    return {
        "before": before,
        "worse": sorted(worse, key=lambda w: w["rr_after"] - w["rr_before"]),
        "after": after,
        "evidence_kept": kept,
        "evidence": wanted,
        "evidence_lost": lost,
        "evidence_lost_content_free": len(set(lost) & content_free),
        "content_free": len(content_free),
        "content_free_proposed": len(content_free & pruned_turns),
        "other_turns_proposed": len(pruned_turns - content_free),
        "other_proposed": sorted(pruned_turns - content_free, key=_dia_order),
    }


def run_retention(
    *, days: int = 60, stems: Sequence[str] | None = None, repeats: int = 1
) -> dict[str, Any]:
    """Each conversation ``repeats`` times, each time built anew (the workers' threads
    interleave differently from one build to the next, and so do the rankings)."""
    labels = json.loads((DATA / "locomo_content_free.json").read_text())["conversations"]
    out = {}
    for conv in load_conversations(DEFAULT_DATA, stems):
        data = json.loads((DEFAULT_DATA / f"{conv.name}.json").read_text())
        runs = []
        for _ in range(repeats):
            runs.append(run_conversation(conv, data, set(labels.get(conv.name, [])), days))
            log.warning("retention %s: %s", conv.name, runs[-1])
        out[conv.name] = {"runs": runs, **_mean(runs)}
    return {"days": days, "repeats": repeats, "conversations": out}


def _mean(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The runs' mean of each figure the table shows; the worst run's change."""

    def mean(values: list[float]) -> float:
        return round(sum(values) / len(values), 1)

    side = {
        when: {k: mean([r[when][k] for r in runs]) for k in ("R@10", "MRR", "p50_ms", "active")}
        for when in ("before", "after")
    }
    counts = {
        k: mean([r[k] for r in runs])
        for k in (
            "evidence_kept",
            "evidence",
            "evidence_lost_content_free",
            "content_free",
            "content_free_proposed",
        )
    }
    worst = {
        k: round(min(r["after"][k] - r["before"][k] for r in runs), 1) for k in ("R@10", "MRR")
    }
    return {**side, **counts, "worst_change": worst}


def format_retention(r: dict[str, Any]) -> str:
    lines = [
        f"retention: {r['days']} daily passes, every proposal accepted "
        f"(mean of {r['repeats']} builds; worst build's change in brackets)"
    ]
    lines.append(
        f"  {'conv':<6}{'R@10 before':>12}{'after':>15}{'MRR before':>12}{'after':>15}"
        f"{'evidence kept (lost: content-free)':>36}{'content-free proposed':>24}"
        f"{'traces':>16}{'p50 ms':>16}"
    )
    for name, c in r["conversations"].items():
        b, a, w = c["before"], c["after"], c["worst_change"]
        lines.append(
            f"  {name:<6}{b['R@10']:>12}{a['R@10']:>7} ({w['R@10']:+.1f}){b['MRR']:>12}"
            f"{a['MRR']:>7} ({w['MRR']:+.1f}){c['evidence_kept']:>20}/{c['evidence']:<6}"
            f"({c['evidence_lost_content_free']:>4})   "
            f"{c['content_free_proposed']:>14}/{c['content_free']:<9}"
            f"{b['active']:>8}->{a['active']:<7}{b['p50_ms']:>8}->{a['p50_ms']:<7}"
        )
    return "\n".join(lines)
