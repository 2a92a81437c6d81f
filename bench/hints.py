"""Duplicate hints on write: does ``POST /v1/memories`` name an earlier memory as a
repeat only when it is one?

Each pair of ``bench/data/repeat_pairs_<half>.jsonl`` -- the same fact said again
(``repeat``), a change of it told in mostly the same words (``change``: "the spare
key is under the flower pot" / "the spare key moved: it is with the neighbour"), two
facts about one named person (``same_person``: "I'm Zoe." / "Zoe has two cats."), and
a fact with a new one added (``elaboration``) -- is posted through the API of the
embedded default, each in a scope id of its own, the first memory then the second
once the first is embedded; a pair counts as hinted when the second's answer names
the first among its ``duplicates``.

    python -m bench.hints [--files dev,heldout] [--json OUT] [--show N]

Targets: every ``repeat`` a hint is meant for is hinted for >= 80% of pairs; of the
hints given, >= 95% are repeats; no ``change`` and no ``same_person`` pair hinted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from bench.served import embedded

DATA = Path(__file__).parent / "data"
REPEAT = "repeat"


def load(name: str) -> list[dict[str, Any]]:
    path = DATA / f"repeat_pairs_{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _post(client: TestClient, content: str, scope_id: str) -> dict[str, Any]:
    r = client.post(
        "/v1/memories",
        json={"content": content, "type": "semantic", "scope": "user", "scope_id": scope_id},
    )
    r.raise_for_status()
    return dict(r.json())


def run(pairs: Sequence[dict[str, Any]], show: int) -> dict[str, Any]:
    with embedded("hints") as (client, served):
        firsts = [_post(client, p["a"], p["id"])["id"] for p in pairs]
        served.join(timeout_ms=600_000)
        seconds = [_post(client, p["b"], p["id"]) for p in pairs]
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    wrong: list[str] = []
    for pair, first, second in zip(pairs, firsts, seconds, strict=True):
        hinted = any(d["id"] == first for d in second["duplicates"])
        by_kind[pair["kind"]]["n"] += 1
        by_kind[pair["kind"]]["hinted"] += hinted
        if hinted != (pair["kind"] == REPEAT):
            wrong.append(f"  {pair['kind']} {'hinted' if hinted else 'missed'}: {pair['id']}")
    for line in wrong[:show]:
        print(line)
    tp = by_kind[REPEAT]["hinted"]
    given = sum(c["hinted"] for c in by_kind.values())
    return {
        "kinds": {k: dict(v) for k, v in sorted(by_kind.items())},
        "recall": round(tp / by_kind[REPEAT]["n"], 3) if by_kind[REPEAT]["n"] else None,
        "precision": round(tp / given, 3) if given else 1.0,
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--files", default="dev")
    p.add_argument("--json", type=Path)
    p.add_argument("--show", type=int, default=0, help="print this many wrong answers")
    args = p.parse_args(argv)
    report = {}
    for name in args.files.split(","):
        report[name] = result = run(load(name), args.show)
        kinds = ", ".join(f"{k} {v['hinted']}/{v['n']}" for k, v in result["kinds"].items())
        print(f"{name}: hinted {kinds}; precision {result['precision']}, recall {result['recall']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
