"""Fact extraction against turns labelled with the facts a person would keep.

Each turn of ``bench/data/extraction_*.jsonl`` (what the user and the
assistant said, when, and the facts to keep, each with the key terms a
matching fact must contain) goes through the configured extraction -- the
extractor, its fallback and the personality filter, as the ingest worker runs
it -- and the facts it keeps are scored:

* **recall**: labelled facts matched by some extracted fact;
* **precision**: extracted facts that match some labelled fact (a fact from a
  turn labelled with none is a false one);
* **relative times**: extracted facts still holding a relative time
  ("yesterday", "next Friday") instead of a date.

A fact matches a label when every key group has an alternative in it, case
blind; an ISO date key (``2023-05-07``, ``2023-05``, ``2023``) matches any
common written form of that date.

    python -m bench.extraction [--files dev,heldout] [--json OUT] [--show N]

``dev2`` and ``heldout2`` are a second pair, written later and apart from the first,
whose facts also say their attribute and whether the user asked for them to be kept
(``protect``); ``heldout2`` is measured only once a method is settled.

Targets (offline extractor): recall >= 0.8, precision >= 0.9, no relative time, well
under a millisecond a turn (the time per turn is printed last).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

import memory_core as mc
from memory_core.extraction import make_extract

DATA = Path(__file__).parent / "data"
_ISO_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_ISO_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_ISO_YEAR = re.compile(r"^(\d{4})$")
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
RELATIVE = re.compile(
    r"\b(?:yesterday|today|tomorrow|tonight|this (?:morning|afternoon|evening|weekend|week)"
    rf"|(?:last|next|this|coming) (?:week|month|year|night|weekend|{_WEEKDAYS}"
    r"|spring|summer|autumn|fall|winter|january|february|march|april|may|june|july"
    r"|august|september|october|november|december)"
    r"|\d+ (?:days?|weeks?|months?|years?) ago|in (?:a|one|two|three|\d+) (?:days?|weeks?|months?)"
    r"|the day before yesterday|the other day)\b",
    re.IGNORECASE,
)


def date_forms(key: str) -> list[str] | None:
    """The written forms an ISO date key matches, or None when it is not a date."""
    if m := _ISO_DAY.match(key):
        d = date(int(m[1]), int(m[2]), int(m[3]))
        month = d.strftime("%B")
        return [
            key,
            f"{d.day} {month} {d.year}",
            f"{d.day}th {month} {d.year}",
            f"{d.day}st {month} {d.year}",
            f"{d.day}nd {month} {d.year}",
            f"{d.day}rd {month} {d.year}",
            f"{month} {d.day}, {d.year}",
            f"{month} {d.day} {d.year}",
            f"{d.day} {month[:3]} {d.year}",
            f"{month[:3]} {d.day}, {d.year}",
        ]
    if m := _ISO_MONTH.match(key):
        month = date(int(m[1]), int(m[2]), 1).strftime("%B")
        return [key, f"{month} {m[1]}", f"{month[:3]} {m[1]}"]
    if _ISO_YEAR.match(key):
        return [key]
    return None


def matches(fact: str, keys: Sequence[Sequence[str]]) -> bool:
    """Whether ``fact`` holds an alternative of every key group."""
    text = fact.lower()
    for group in keys:
        wanted: list[str] = []
        for alternative in group:
            wanted += date_forms(alternative) or [alternative]
        if not any(w.lower() in text for w in wanted):
            return False
    return True


@dataclass
class Score:
    labelled: int = 0
    found: int = 0
    extracted: int = 0
    correct: int = 0
    relative: int = 0
    # Labels the user asked to be kept, and how many of them a kept fact matched;
    # facts kept as asked, and how many of them match such a label.
    to_protect: int = 0
    protected: int = 0
    asked: int = 0
    asked_rightly: int = 0
    misses: list[dict[str, Any]] = field(default_factory=list)
    false: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "labelled_facts": self.labelled,
            "extracted_facts": self.extracted,
            "recall": round(self.found / self.labelled, 3) if self.labelled else None,
            "precision": round(self.correct / self.extracted, 3) if self.extracted else None,
            "relative_times_left": self.relative,
            "protect_recall": round(self.protected / self.to_protect, 3)
            if self.to_protect
            else None,
            "protect_precision": round(self.asked_rightly / self.asked, 3) if self.asked else None,
        }


def _when(turn: dict[str, Any]) -> float | None:
    return datetime.fromisoformat(turn["ts"]).timestamp() if turn.get("ts") else None


def score(turns: Sequence[dict[str, Any]], extract: Callable[[str, str], Any]) -> Score:
    out = Score()
    for turn in turns:
        extracted = extract(turn["user"], turn["assistant"], when=_when(turn)).facts
        facts = [f.content for f in extracted]
        kept = [f.content for f in extracted if getattr(f, "keep", False)]
        labels = turn["facts"]
        out.labelled += len(labels)
        out.extracted += len(facts)
        protect = [label for label in labels if label.get("protect")]
        out.to_protect += len(protect)
        out.protected += sum(any(matches(f, p["keys"]) for f in kept) for p in protect)
        out.asked += len(kept)
        out.asked_rightly += sum(any(matches(f, p["keys"]) for p in protect) for f in kept)
        for label in labels:
            if any(matches(f, label["keys"]) for f in facts):
                out.found += 1
            else:
                out.misses.append({"id": turn["id"], "fact": label["text"]})
        for fact in facts:
            if any(matches(fact, label["keys"]) for label in labels):
                out.correct += 1
            else:
                out.false.append({"id": turn["id"], "fact": fact})
            out.relative += bool(RELATIVE.search(fact))
    return out


def load(name: str) -> list[dict[str, Any]]:
    path = DATA / f"extraction_{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--files", default="dev,heldout", help="which labelled sets, comma-separated")
    p.add_argument("--json", type=Path, help="write the figures here")
    p.add_argument("--show", type=int, default=0, help="print this many misses and false facts")
    args = p.parse_args(argv)
    settings = mc.load_settings()
    extract = make_extract(settings)
    report: dict[str, Any] = {"extractor": "llm" if settings.llm_base_url else "offline"}
    for name in args.files.split(","):
        result = score(load(name), extract)
        report[name] = result.to_dict()
        figures = result.to_dict()
        print(
            f"{name}: recall {figures['recall']}, precision {figures['precision']}, "
            f"{figures['labelled_facts']} labelled, {figures['extracted_facts']} extracted, "
            f"{figures['relative_times_left']} with a relative time left; asked to keep: "
            f"recall {figures['protect_recall']}, precision {figures['protect_precision']}"
        )
        for miss in result.misses[: args.show]:
            print(f"  missed {miss['id']}: {miss['fact']}")
        for false in result.false[: args.show]:
            print(f"  false  {false['id']}: {false['fact']}")
    report["us_per_turn"] = per_turn_us(
        extract, [t for n in args.files.split(",") for t in load(n)]
    )
    print(f"{report['us_per_turn']:.0f} us per turn ({report['extractor']} extractor)")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


def per_turn_us(extract: Callable[..., Any], turns: list[dict[str, Any]], rounds: int = 5) -> float:
    """The extractor's time per turn, the best of ``rounds`` passes over ``turns``
    (the offline extractor's target: well under a millisecond)."""
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for turn in turns:
            extract(turn["user"], turn["assistant"], when=_when(turn))
        best = min(best, time.perf_counter() - started)
    return best / max(len(turns), 1) * 1e6


if __name__ == "__main__":
    sys.exit(main())
