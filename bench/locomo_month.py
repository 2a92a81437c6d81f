"""LoCoMo after a month of use: does consolidation make the next questions easier?

Each conversation is posted through ``POST /v1/turns`` on the embedded default,
as on the real path.  Its questions are then split in two halves by their place
in the file: the even ones are *use*, asked through ``GET /v1/search`` the way
an agent asks (the top ten, and ``POST /v1/feedback`` for the hits it used:
those from the question's evidence turns), and the odd ones are *scored*.  Four
weekly dream passes follow, with every proposal accepted after each (what a
person who trusts the passes does), and the scored half is asked of what is
left.  So nothing a scored question asks shaped the brain it is scored on.

One build serves every configuration of a conversation, each scored on a copy
of its own brain so one configuration's searches cannot teach another's:

* ``month``: the defaults after the month;
* ``month-no-coactivation``: the same brain, searched without co-activation;
* ``month-no-insights``: the same month with derive off (no insight written);
* ``month-fresh``: the brain as posted, before any use or pass.

Ranks are hits, as a reader gets them: Recall@10 is the share of a question's
evidence turns the first ten results stand for.  A hit stands for its own
turn, the turn a fact was drawn from, every turn merged into it and what it
cites (a compacted statement its episode); an insight stands for the cited
statements its text tells (it cites every statement of its topic, but tells
the most important).  ``month-uncredited`` is ``month`` with insights standing
for nothing, to show what they add.  For
multi-hop questions the report also says how often the first hit is an
insight and how often it alone covers two or more evidence turns.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi.testclient import TestClient
from sqlalchemy import text

import memory_core as mc
from bench.locomo_real import BASE_URL, JOIN_TIMEOUT_MS, post_conversation
from bench.locomo_scoring import MULTI_HOP, scored_hits
from memory_core import proposals
from memory_core.consolidation.dream import dream
from memory_core.embedders import make_embedder
from memory_core.textutil import content_words, stem
from reverie import compose

if TYPE_CHECKING:
    from bench.locomo import ConfigRun, Conversation, Question

WEEK = 7 * 86_400.0
PASSES = 4
USE_LIMIT = 10

FRESH = "month-fresh"
MONTH = "month"
NO_COACTIVATION = "month-no-coactivation"
NO_INSIGHTS = "month-no-insights"
UNCREDITED = "month-uncredited"
NAMES = (FRESH, MONTH, NO_COACTIVATION, NO_INSIGHTS, UNCREDITED)
DESCRIPTIONS = {
    FRESH: "real path, as posted: no use, no pass",
    MONTH: "real path after use and 4 weekly passes, every proposal accepted",
    NO_COACTIVATION: "month, searched with REVERIE_SEARCH_COACTIVATION_WEIGHT=0",
    NO_INSIGHTS: "month with derive off (REVERIE_DREAM_DERIVE_MAX=0)",
    UNCREDITED: "month, insight hits counting for no turn",
}


def is_use(question: Question) -> bool:
    """The half of a conversation's questions asked as use; the rest are scored."""
    return question.index % 2 == 0


def _settings(folder: Path, brain: str, **overrides: Any) -> mc.Settings:
    return mc.load_settings(
        brain_url=f"sqlite:///{folder / brain}", data_dir=folder / f"data-{brain}", **overrides
    )


def _copy(folder: Path, source: str, target: str) -> None:
    with sqlite3.connect(folder / source) as db:
        db.execute(f"VACUUM INTO '{folder / target}'")


class Turns:
    """Which posted turns each trace of a brain stands for, and which traces are insights."""

    def __init__(self, brain: mc.Brain, dia_of: dict[str, str]) -> None:
        with brain.read() as conn:
            rows = conn.execute(
                text("SELECT id, content, metadata, sources, tags FROM memory_traces")
            ).all()
        self._meta = {r.id: json.loads(r.metadata or "{}") for r in rows}
        self._content = {r.id: str(r.content) for r in rows}
        self._cites = {
            r.id: [
                s["trace"]
                for s in json.loads(r.sources or "[]")
                if isinstance(s, dict) and isinstance(s.get("trace"), str)
            ]
            for r in rows
        }
        self.insights = {r.id for r in rows if "insight" in json.loads(r.tags or "[]")}
        self._dia_of = dia_of
        self._memo: dict[tuple[str, bool], list[str]] = {}

    def of(self, trace_id: str, *, credit_insights: bool = True, depth: int = 0) -> list[str]:
        """The turns ``trace_id`` stands for, in order: its own, a fact's turn, what was
        merged into it, what it cites -- for an insight, only the statements its text
        tells (it cites every member of its topic but tells the most important)."""
        insight = trace_id in self.insights
        if insight and not credit_insights:
            return []
        key = (trace_id, credit_insights)
        if key in self._memo:
            return self._memo[key]
        meta = self._meta.get(trace_id, {})
        found = [self._dia_of.get(str(meta.get("turn_id")), "")]
        cites = self._cites.get(trace_id, [])
        if insight:
            cites = [c for c in cites if tells(self._content[trace_id], self._content.get(c, ""))]
        if depth < 3:
            for other in [*meta.get("merged_from", []), *cites]:
                found += self.of(other, credit_insights=credit_insights, depth=depth + 1)
        out = [d for d in dict.fromkeys(found) if d]
        self._memo[key] = out
        return out


def tells(insight: str, statement: str) -> bool:
    """Whether an insight's text tells ``statement``: most of its content words are
    there (by stem)."""
    said = {stem(w) for w in content_words(statement)}
    if not said:
        return False
    there = {stem(w) for w in content_words(insight)}
    return len(said & there) >= TOLD_SHARE * len(said)


TOLD_SHARE = 0.6


def _hit_turns(hits: Sequence[dict[str, Any]], turns: Turns, credit: bool) -> list[set[str]]:
    return [set(turns.of(str(hit["id"]), credit_insights=credit)) for hit in hits]


def _use(
    client: TestClient, conv: Conversation, questions: Sequence[Question], dia_of: dict[str, str]
) -> None:
    """The use half asked as an agent asks: the top ten, the evidence hits reported used."""
    for q in questions:
        r = client.get(
            "/v1/search", params={"q": q.text, "scope_id": conv.name, "limit": USE_LIMIT}
        )
        r.raise_for_status()
        body = r.json()
        used = [
            h["id"]
            for h in body["results"]
            if dia_of.get(str(h["metadata"].get("turn_id"))) in q.evidence
        ]
        if used:
            client.post(
                "/v1/feedback", json={"query_id": body["query_id"], "trace_ids": used}
            ).raise_for_status()


def _month(
    folder: Path,
    brain_file: str,
    conv: Conversation,
    use: Sequence[Question],
    dia_of: dict[str, str],
    start: float,
    **overrides: Any,
) -> None:
    """Use, then four weekly passes with every proposal accepted, on ``brain_file``."""
    settings = _settings(folder, brain_file, **overrides)
    served = compose.embedded(settings)
    try:
        with TestClient(compose.app(served), base_url=BASE_URL) as client:
            _use(client, conv, use, dia_of)
            served.join(timeout_ms=JOIN_TIMEOUT_MS)
    finally:
        served.stop()
    brain = mc.open_brain(settings)
    embedder = make_embedder(settings)
    try:
        for week in range(1, PASSES + 1):
            now = start + week * WEEK
            dream(brain, settings, embedder=embedder, now=now)
            proposals.accept_all(brain, settings, now=now)
    finally:
        brain.close()


def _score(
    folder: Path,
    brain_file: str,
    conv: Conversation,
    scored_half: Sequence[Question],
    dia_of: dict[str, str],
    limit: int,
    runs: dict[str, ConfigRun],
    names: Sequence[str],
    **overrides: Any,
) -> None:
    """The scored half asked through the API of ``brain_file``, into each of ``names``
    (the second, if any, without insight credit)."""
    settings = _settings(folder, brain_file, **overrides)
    brain = mc.open_brain(settings)
    turns = Turns(brain, dia_of)
    served = compose.embedded(settings)
    try:
        with TestClient(compose.app(served), base_url=BASE_URL) as client:
            t0 = time.perf_counter()
            for q in scored_half:
                start = time.perf_counter()
                r = client.get(
                    "/v1/search", params={"q": q.text, "scope_id": conv.name, "limit": limit}
                )
                latency_ms = (time.perf_counter() - start) * 1000.0
                r.raise_for_status()
                body = r.json()
                hits = body["results"]
                for name, credit in zip(names, (True, False), strict=False):
                    run = runs[name]
                    covered = _hit_turns(hits, turns, credit)
                    run.results.append(
                        scored_hits(conv.name, q, covered, latency_ms, str(body["mode"]))
                    )
                    if q.category == MULTI_HOP and credit:
                        _first_hit(run, hits, turns, q)
            runs[names[0]].search_seconds += time.perf_counter() - t0
    finally:
        served.stop()
        brain.close()


def _first_hit(run: ConfigRun, hits: Sequence[dict[str, Any]], turns: Turns, q: Question) -> None:
    extra = run.extra.setdefault("multi_hop_first_hit", {"n": 0, "insight": 0, "covers_2": 0})
    extra["n"] += 1
    if not hits:
        return
    first = str(hits[0]["id"])
    extra["insight"] += first in turns.insights
    extra["covers_2"] += len(set(turns.of(first)) & set(q.evidence)) >= 2


def run_conversation(
    conv: Conversation, questions: list[Question], runs: dict[str, ConfigRun], limit: int
) -> None:
    """One build of ``conv``; every month configuration scored on the odd half."""
    use = [q for q in questions if is_use(q)]
    scored_half = [q for q in questions if not is_use(q)]
    with tempfile.TemporaryDirectory(prefix=f"locomo-month-{conv.name}-") as tmp:
        folder = Path(tmp)
        settings = _settings(folder, "posted.sqlite")
        served = compose.embedded(settings)
        t0 = time.perf_counter()
        try:
            with TestClient(compose.app(served), base_url=BASE_URL) as client:
                dia_of = post_conversation(client, conv)
                served.join(timeout_ms=JOIN_TIMEOUT_MS)
        finally:
            served.stop()
        runs[FRESH].ingest_seconds += time.perf_counter() - t0
        for name in ("fresh.sqlite", "month.sqlite", "no-insights.sqlite"):
            _copy(folder, "posted.sqlite", name)
        start = time.time()
        _month(folder, "month.sqlite", conv, use, dia_of, start)
        _month(folder, "no-insights.sqlite", conv, use, dia_of, start, dream_derive_max=0)
        _copy(folder, "month.sqlite", "no-coactivation.sqlite")
        _score(folder, "fresh.sqlite", conv, scored_half, dia_of, limit, runs, [FRESH])
        _score(folder, "month.sqlite", conv, scored_half, dia_of, limit, runs, [MONTH, UNCREDITED])
        _score(
            folder,
            "no-coactivation.sqlite",
            conv,
            scored_half,
            dia_of,
            limit,
            runs,
            [NO_COACTIVATION],
            search_coactivation_weight=0.0,
        )
        _score(folder, "no-insights.sqlite", conv, scored_half, dia_of, limit, runs, [NO_INSIGHTS])
