"""A scripted life asked "now" questions: is the statement current at the time asked
found first?

``bench/data/nowlife_<half>.json`` holds one person's two years of turns with an AI
assistant (each statement labelled with the attributes it states and their values,
over forty attributes that change) and, for each attribute, ten questions asked at
points in time between the turns, each naming the turns that state the value
current then.  The turns are posted in order through ``POST /v1/turns`` of the
embedded default (one scope id, each turn with its own time), ingested and embedded
by the workers; each question goes through ``GET /v1/search`` with ``as_of`` its
time, and counts when the first result comes from one of its answer turns (the turn,
or a fact drawn from it).

    python -m bench.nowlife [--files dev,heldout] [--json OUT] [--show N]

Target: the right current statement first for >= 90% of the questions.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from bench.served import each_set, embedded, post_turn

DATA = Path(__file__).parent / "data"


def load(name: str) -> dict[str, Any]:
    return dict(json.loads((DATA / f"nowlife_{name}.json").read_text()))


def _epoch(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def run(life: dict[str, Any], show: int) -> dict[str, Any]:
    scope_id = life["scope_id"]
    with embedded("nowlife") as (client, served):
        turn_of: dict[str, str] = {}
        for turn in life["turns"]:
            turn_id = post_turn(client, scope_id, turn, f"{scope_id}/{turn['id']}")
            turn_of[turn_id] = turn["id"]
        served.join(timeout_ms=1_800_000)
        return _score(client, life, turn_of, show)


def _score(
    client: TestClient, life: dict[str, Any], turn_of: dict[str, str], show: int
) -> dict[str, Any]:
    right = found = 0
    by_attribute: Counter[str] = Counter()
    right_by_attribute: Counter[str] = Counter()
    misses: list[str] = []
    for q in life["questions"]:
        r = client.get(
            "/v1/search",
            params={
                "q": q["question"],
                "scope_id": life["scope_id"],
                "limit": 5,
                "as_of": _epoch(q["at"]),
            },
        )
        r.raise_for_status()
        hits = r.json()["results"]
        first = turn_of.get(hits[0]["metadata"].get("turn_id", "")) if hits else None
        by_attribute[q["attribute"]] += 1
        turns = [turn_of.get(h["metadata"].get("turn_id", "")) for h in hits]
        found += any(t in q["answer_turns"] for t in turns)
        if first in q["answer_turns"]:
            right += 1
            right_by_attribute[q["attribute"]] += 1
        elif len(misses) < show:
            said = hits[0]["content"][:70].replace("\n", " ") if hits else "-"
            misses.append(f"  not first: {q['at'][:10]} {q['question']} -> {said}")
    for line in misses:
        print(line)
    return {
        "questions": len(life["questions"]),
        "now_first": round(right / len(life["questions"]), 3),
        "found_top5": round(found / len(life["questions"]), 3),
        "now_first_by_attribute": {
            a: round(right_by_attribute[a] / n, 3) for a, n in sorted(by_attribute.items())
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    return each_set(
        argv, __doc__, ("dev", "lives"), lambda name, show: run(load(name), show), _line
    )


def _line(name: str, result: dict[str, Any]) -> str:
    return (
        f"{name}: the current statement first for {result['now_first']:.1%} of "
        f"{result['questions']} questions (one of its answer turns in the top 5: "
        f"{result['found_top5']:.1%})"
    )


if __name__ == "__main__":
    sys.exit(main())
