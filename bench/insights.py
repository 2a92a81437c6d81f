"""Insights worth reading: what the dream passes derive from real conversations.

Each shared LoCoMo conversation is posted turn by turn to ``POST /v1/turns`` of
the embedded default (as the retention bench does: one speaker's line a turn,
its session's date as the turn's time), ingested with the offline extractor and
embedded; then it gets a dream pass every simulated week for ``weeks`` weeks,
every proposal accepted after each.  Of the insights active at the end:

* **content-free**: built from a content-free cluster -- at least half the
  statements it cites are small talk (:func:`is_smalltalk`) or come from a turn
  labelled content-free in ``bench/data/locomo_content_free.json``; target 0;
* **duplicates**: two insights of one conversation citing mostly the same
  statements (at least half of either's), or saying the same words; target 0;
* **traceable**: every claim of the insight traced to the statements it cites
  (:func:`memory_core.consolidation.digest.traceable`); target 100%;
* **quoted first**: each statement an insight tells (up to three an insight),
  searched for in its own words: how often its memory (the statement or its
  turn) comes before the insight; target 100%.

    python -m bench.insights [--weeks 4] [--conversations 26,30] [--show 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from itertools import combinations
from pathlib import Path
from typing import Any

from sqlalchemy import text

import memory_core as mc
from bench.consolidation_retention import DATA, ingested
from bench.locomo import DEFAULT_DATA, load_conversations
from bench.locomo_month import tells
from memory_core import proposals
from memory_core.auth import SYSTEM
from memory_core.consolidation.digest import traceable
from memory_core.consolidation.dream import dream
from memory_core.consolidation.salience import is_smalltalk
from memory_core.embedders import make_embedder
from memory_core.language.days import written_day
from memory_core.retrieval.query_embedding import query_embedder_for
from memory_core.supersession.telling import said_by, said_in

WEEK = 7 * 86_400.0


def run_conversation(
    name: str, data: dict[str, Any], content_free: set[str], weeks: int
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="reverie-insights-") as tmp:
        settings = ingested(Path(tmp), name, data)
        brain = mc.open_brain(settings)
        embedder = make_embedder(settings)
        start = time.time()
        for week in range(1, weeks + 1):
            now = start + week * WEEK
            dream(brain, settings, embedder=embedder, now=now)
            proposals.accept_all(brain, settings, now=now)
        found = _insights(brain, content_free)
        found.update(_quoted(brain, settings, embedder, found.pop("told")))
        brain.close()
    return found


QUOTED_PER_INSIGHT = 3


def _quoted(
    brain: mc.Brain, settings: mc.Settings, embedder: Any, told: dict[str, list[Any]]
) -> dict[str, Any]:
    """Each statement an insight tells, searched for in its own words: does its memory
    come before the insight?"""
    searcher = query_embedder_for(settings, embedder)
    asked, first, behind = 0, 0, []
    for insight_id, statements in told.items():
        for statement in statements[:QUOTED_PER_INSIGHT]:
            hits = mc.search(
                brain, statement.content, limit=20, embedder=searcher, identity=SYSTEM
            ).results
            ranks = {t.id: rank for rank, h in enumerate(hits) for t in (h.trace, *h.attached)}
            asked += 1
            if ranks.get(statement.id, 99) < ranks.get(insight_id, 99):
                first += 1
            else:
                behind.append(statement.content)
    return {"quoted": asked, "quoted_first": first, "quoted_behind": behind}


def _insights(brain: mc.Brain, content_free: set[str]) -> dict[str, Any]:
    with brain.read() as conn:
        rows = conn.execute(
            text("SELECT id, content, sources, metadata, occurred_at, deleted FROM memory_traces")
        ).all()
    traces = {r.id: r for r in rows}
    dia = {r.id: json.loads(r.metadata).get("dia_id") for r in rows}
    by_turn = {json.loads(r.metadata).get("turn_id"): dia[r.id] for r in rows if dia[r.id]}
    insights = []
    for r in rows:
        meta = json.loads(r.metadata)
        if r.deleted or "derived_by" not in meta:
            continue
        cited = [s["trace"] for s in json.loads(r.sources) if "trace" in s]
        sources = [traces[t] for t in cited if t in traces]

        def free(t: Any) -> bool:
            m = json.loads(t.metadata)
            turn = m.get("dia_id") or by_turn.get(m.get("turn_id"))
            said = said_by(said_in(t.content), m.get("speaker"))
            return turn in content_free or is_smalltalk(said)

        told = [t.content for t in sources] + [
            written_day(datetime.fromtimestamp(t.occurred_at, UTC).date()) for t in sources
        ]
        insights.append(
            {
                "id": r.id,
                "told": [t for t in sources if tells(r.content, t.content)],
                "content": r.content,
                "cited": set(cited),
                "content_free": 2 * sum(free(t) for t in sources) >= max(len(sources), 1),
                "traceable": traceable(r.content, told),
            }
        )
    pairs = [
        (a, b)
        for a, b in combinations(insights, 2)
        if a["content"] == b["content"]
        or 2 * len(a["cited"] & b["cited"]) >= min(len(a["cited"]), len(b["cited"]))
    ]
    return {
        "told": {i["id"]: i["told"] for i in insights},
        "insights": len(insights),
        "content_free": sum(i["content_free"] for i in insights),
        "duplicates": len(pairs),
        "traceable": sum(i["traceable"] for i in insights),
        "examples": [i["content"] for i in insights],
        "duplicate_pairs": [[a["content"], b["content"]] for a, b in pairs],
        "untraceable": [i["content"] for i in insights if not i["traceable"]],
        "from_content_free": [i["content"] for i in insights if i["content_free"]],
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--weeks", type=int, default=4, help="dream passes, one a simulated week")
    p.add_argument("--conversations", help="which shared conversations, comma-separated")
    p.add_argument("--show", type=int, default=2, help="example insights to print per conversation")
    p.add_argument("--json", type=Path, help="write the figures here")
    args = p.parse_args(argv)
    stems = args.conversations.split(",") if args.conversations else None
    labels = json.loads((DATA / "locomo_content_free.json").read_text())["conversations"]
    totals = {
        "insights": 0,
        "content_free": 0,
        "duplicates": 0,
        "traceable": 0,
        "quoted": 0,
        "quoted_first": 0,
    }
    report: dict[str, Any] = {}
    for conv in load_conversations(DEFAULT_DATA, stems):
        data = json.loads((DEFAULT_DATA / f"{conv.name}.json").read_text())
        found = run_conversation(conv.name, data, set(labels.get(conv.name, [])), args.weeks)
        report[conv.name] = found
        for key in totals:
            totals[key] += found[key]
        print(
            f"{conv.name}: {found['insights']} insights, {found['content_free']} content-free, "
            f"{found['duplicates']} duplicate pairs, {found['traceable']} traceable, "
            f"{found['quoted_first']}/{found['quoted']} quoted statements before their insight"
        )
        for example in found["examples"][: args.show]:
            print(f"    {example}")
        for claim in found["untraceable"][:3]:
            print(f"    untraceable: {claim}")
        for claim in found["from_content_free"][:3]:
            print(f"    from content-free statements: {claim}")
        for said in found["quoted_behind"][:3]:
            print(f"    quoted, behind its insight: {said}")
    n = max(totals["insights"], 1)
    print(
        f"all: {totals['insights']} insights after {args.weeks} weekly passes; content-free "
        f"{totals['content_free'] / n:.1%} (target 0), duplicate pairs {totals['duplicates']} "
        f"(target 0), traceable {totals['traceable'] / n:.1%} (target 100%); a statement "
        f"quoted came before its insight {totals['quoted_first']}/{totals['quoted']} "
        f"(target all)"
    )
    if args.json:
        args.json.write_text(json.dumps({"totals": totals, "conversations": report}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
