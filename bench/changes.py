"""Memory that follows change: is the current statement found first, and the old one
when asked as of its time?

Each update chain of ``bench/data/changes_*.jsonl`` -- a subject's attribute
stated and changed one to three times, with other talk between, and after the
last change two more turns: other talk and one near the topic that gives no
new value (a request about it, someone else's value, a look back at an older
value, a remark) -- is posted
as turns through ``POST /v1/turns`` of the embedded default (one user, one
scope id per chain, each turn with its own time), ingested and embedded by the
workers.  Then, through ``GET /v1/search``:

* **now**: the chain's present-tense question; a hit counts when the top
  result comes from the last statement's turn (the turn itself, or a fact
  citing it);
* **as of**: for each older value, its question asked ``as_of`` a time between
  that statement and the next; found when its turn is among the top 5.

    python -m bench.changes [--files dev,heldout,fresh,unseen] [--json OUT] [--show N]

Also counted: the supersessions (of every memory of the chain's scope id) whose
later statement is a turn of another attribute than the earlier one's (an aside's
label, the chain's attribute for its statements, the kind of any other turn).

Targets: now first for >= 90% of chains; as of found for >= 95%; no supersession
across attributes.
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
AS_OF_DEPTH = 5


def load(name: str) -> list[dict[str, Any]]:
    path = DATA / f"changes_{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _epoch(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def post_chain(client: TestClient, chain: dict[str, Any]) -> list[str]:
    """Every turn of the chain, posted in order; their turn ids."""
    return [
        post_turn(client, chain["id"], turn, f"{chain['id']}/{k}")
        for k, turn in enumerate(chain["conversation"])
    ]


def _turn_of(hit: dict[str, Any]) -> str | None:
    return hit.get("metadata", {}).get("turn_id")


def ask(client: TestClient, chain: dict[str, Any], question: str, **params: Any) -> list[str]:
    """The source turns of the hits, best first."""
    r = client.get(
        "/v1/search", params={"q": question, "scope_id": chain["id"], "limit": 10, **params}
    )
    r.raise_for_status()
    return [t for h in r.json()["results"] if (t := _turn_of(h)) is not None]


def run(chains: Sequence[dict[str, Any]], show: int) -> dict[str, Any]:
    with embedded("changes") as (client, served):
        posted = {chain["id"]: post_chain(client, chain) for chain in chains}
        served.join(timeout_ms=600_000)
        return _score(client, chains, posted, show)


def _score(
    client: TestClient,
    chains: Sequence[dict[str, Any]],
    posted: dict[str, list[str]],
    show: int,
) -> dict[str, Any]:
    now_first, as_of_found, as_of_asked = 0, 0, 0
    by_attribute: Counter[str] = Counter()
    first_by_attribute: Counter[str] = Counter()
    misses = []
    for chain in chains:
        ids = posted[chain["id"]]
        statements = [
            (k, t) for k, t in enumerate(chain["conversation"]) if t["kind"] == "statement"
        ]
        last = ids[statements[-1][0]]
        hits = ask(client, chain, chain["now"]["question"])
        by_attribute[chain["attribute"]] += 1
        if hits and hits[0] == last:
            now_first += 1
            first_by_attribute[chain["attribute"]] += 1
        elif len(misses) < show:
            misses.append((chain["id"], chain["now"]["question"]))
        for then in chain["then"]:
            k, turn = statements[then["state"]]
            _, following = statements[then["state"] + 1]
            when = (_epoch(turn["ts"]) + _epoch(following["ts"])) / 2
            as_of_asked += 1
            older = ask(client, chain, then["question"], as_of=when)
            as_of_found += ids[k] in older[:AS_OF_DEPTH]
    for chain_id, question in misses:
        print(f"  not first now: {chain_id}: {question}")
    crossed, superseded = _crossings(client, chains, posted)
    return {
        "chains": len(chains),
        "superseded": superseded,
        "crossed": crossed,
        "now_first": round(now_first / len(chains), 3),
        "as_of_found_top5": round(as_of_found / as_of_asked, 3) if as_of_asked else None,
        "now_first_by_attribute": {
            a: round(first_by_attribute[a] / n, 3) for a, n in sorted(by_attribute.items())
        },
    }


def _attribute_of(chain: dict[str, Any], turn: dict[str, Any]) -> str:
    """What a turn of a chain states: the chain's attribute for its statements, an
    aside's own, the kind of any other turn (which states none)."""
    if turn["kind"] == "statement":
        return str(chain["attribute"])
    return str(turn.get("attribute") or turn["kind"])


def _crossings(
    client: TestClient, chains: Sequence[dict[str, Any]], posted: dict[str, list[str]]
) -> tuple[int, int]:
    """How many statements (of the chain or an aside) were superseded by a turn of
    another attribute, of how many superseded at all."""
    crossed = superseded = 0
    for chain in chains:
        attribute = {
            turn_id: _attribute_of(chain, turn)
            for turn_id, turn in zip(posted[chain["id"]], chain["conversation"], strict=True)
        }
        r = client.get("/v1/memories", params={"scope_id": chain["id"], "limit": 500})
        r.raise_for_status()
        memories = r.json()["memories"]
        turn_of = {m["id"]: _turn_of(m) or m["id"] for m in memories}
        for m in memories:
            successor = m.get("superseded_by")
            if not successor or successor not in turn_of:
                continue
            superseded += 1
            mine, theirs = attribute.get(turn_of[m["id"]]), attribute.get(turn_of[successor])
            crossed += mine != theirs
    return crossed, superseded


def main(argv: Sequence[str] | None = None) -> int:
    return each_set(
        argv,
        __doc__,
        ("dev,heldout,fresh,unseen", "chain sets"),
        lambda name, show: run(load(name), show),
        _line,
    )


def _line(name: str, result: dict[str, Any]) -> str:
    return (
        f"{name}: current statement first for {result['now_first']:.1%} of "
        f"{result['chains']} chains; older statement found as of its time (top "
        f"{AS_OF_DEPTH}) for {result['as_of_found_top5']:.1%}; superseded by another "
        f"attribute: {result['crossed']} of {result['superseded']} supersessions"
    )


if __name__ == "__main__":
    sys.exit(main())
