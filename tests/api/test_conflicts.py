"""Conflicts: two statements of a one-valued thing that both still stand.

Turns are posted through the API and ingested by the workers, without an embedder:
words alone cannot confirm that "Our flat in York ..." replaces "I live in Leeds"
(nothing in it says that something changed), so both stand after ingestion.  The
dream pass then asks the LLM, when one is configured, or files a ``conflict``
proposal for a person; accepting it supersedes the earlier statement, undoing it
restores it, and rejecting it keeps both.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.consolidation.dream import DreamReport, dream
from memory_core.traces.undo import undo_unit
from reverie.compose import Process
from tests.api.conftest import post_turn
from tests.fakes import FakeLLM
from tests.memctl.test_cli import memctl

DAY = 86_400.0
# The story ends a week ago: the passes run now, and people decide on their proposals now.
T0 = time.time() - 77 * DAY
NOW = T0 + 77 * DAY
LEEDS = "I live in Leeds, in a flat near the university."
YORK = "Our flat in York has a tiny garden and a view of the Minster."


@pytest.fixture
def api_settings(tmp_path: Path, brain_url: str) -> mc.Settings:
    return mc.load_settings(
        brain_url=brain_url,
        data_dir=tmp_path / "data",
        embedder="none",
    )


@pytest.fixture
def story(client: TestClient, workers: Process) -> dict[str, str]:
    """Leeds, other talk, then York two months later; their turn ids."""
    leeds = post_turn(client, LEEDS, T0, assistant="Thanks for telling me.")
    post_turn(client, "Can you suggest a quick pasta recipe for tonight?", T0 + 3 * DAY)
    york = post_turn(client, YORK, T0 + 60 * DAY, assistant="Sounds lovely.")
    post_turn(client, "Do you ever mess up when I mention my neighbour Mo?", T0 + 70 * DAY)
    workers.join()
    return {"leeds": leeds, "york": york}


def _pass(settings: mc.Settings, at: float) -> DreamReport:
    report = dream(mc.open_brain(settings), settings, now=at)
    assert report.status == "ok", report.error
    return report


def _search(client: TestClient, q: str, **params: Any) -> list[dict[str, Any]]:
    r = client.get("/v1/search", params={"q": q, "scope_id": "ana", "limit": 10, **params})
    assert r.status_code == 200, r.text
    return list(r.json()["results"])


def _of(hits: list[dict[str, Any]], turn: str) -> list[dict[str, Any]]:
    return [h for h in hits if h["metadata"].get("turn_id") == turn]


def _conflicts(client: TestClient, status: str = "pending") -> list[dict[str, Any]]:
    r = client.get("/v1/proposals", params={"kind": "conflict", "status": status})
    assert r.status_code == 200, r.text
    return list(r.json()["proposals"])


def test_two_homes_standing_become_a_conflict_that_accepting_supersedes(
    client: TestClient, story: dict[str, str], api_settings: mc.Settings, tmp_path: Path
) -> None:
    before = _search(client, "where do I live")
    assert all(h["current"] for h in _of(before, story["leeds"]) + _of(before, story["york"]))

    report = _pass(api_settings, NOW)
    [step] = [s for s in report.steps if s.name == "resolve"]
    assert step.counts["proposed"] == 1 and step.counts["superseded"] == 0
    [conflict] = _conflicts(client)
    earlier, later = conflict["traces"]
    assert conflict["superseded_id"] == earlier["id"] and conflict["successor_id"] == later["id"]
    assert LEEDS in earlier["content"] and YORK in later["content"]
    assert (
        "where the user lives" in conflict["summary"]
        and "nothing is deleted" in conflict["summary"]
    )
    # The person reading it sees both statements, in the order they were said.
    listed = memctl(
        "proposals",
        "--kind",
        "conflict",
        env={
            "REVERIE_BRAIN_URL": api_settings.brain_url,
            "REVERIE_DATA_DIR": str(api_settings.data_dir),
        },
        cwd=tmp_path,
    )
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.index(f"earlier  {earlier['id']}") < listed.stdout.index(
        f"later  {later['id']}"
    )

    accepted = client.post(f"/v1/proposals/{conflict['id']}/accept")
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["decision"]["outcome"] == "applied"
    hits = _search(client, "where do I live")
    for hit in _of(hits, story["leeds"]):  # the turn and its fact: kept, no longer current
        assert hit["current"] is False and YORK in hit["superseded_by"]["content"]
    assert all(h["current"] for h in _of(hits, story["york"]))
    then = _search(client, "where do I live", as_of=T0 + 30 * DAY)
    assert _of(then, story["leeds"]) and all(h["current"] for h in _of(then, story["leeds"]))
    assert not _of(then, story["york"])

    undone = client.post(f"/v1/proposals/{conflict['id']}/undo")
    assert undone.status_code == 200 and undone.json()["decision"]["outcome"] == "undone"
    assert all(h["current"] for h in _of(_search(client, "where do I live"), story["leeds"]))


def test_a_rejected_conflict_keeps_both_and_is_not_proposed_again(
    client: TestClient, story: dict[str, str], api_settings: mc.Settings
) -> None:
    _pass(api_settings, NOW)
    [conflict] = _conflicts(client)
    assert (
        client.post(f"/v1/proposals/{conflict['id']}/reject").json()["decision"]["outcome"]
        == "rejected"
    )
    _pass(api_settings, NOW + DAY)
    assert _conflicts(client) == []
    hits = _search(client, "where do I live")
    assert all(h["current"] for h in _of(hits, story["leeds"]) + _of(hits, story["york"]))


def test_accepting_a_conflict_settled_since_is_refused(
    client: TestClient, workers: Process, story: dict[str, str], api_settings: mc.Settings
) -> None:
    _pass(api_settings, NOW)
    [conflict] = _conflicts(client)
    # Said since: a move, which supersedes every earlier home as it is written.
    post_turn(client, "We moved to Whitby last week, right by the harbour.", T0 + 72 * DAY)
    workers.join()
    refused = client.post(f"/v1/proposals/{conflict['id']}/accept")
    assert refused.status_code == 409, refused.text
    assert "superseded" in refused.json()["error"]["message"]
    assert [p["id"] for p in _conflicts(client)] == [conflict["id"]]  # still for a person


@pytest.fixture
def llm(llm_server: FakeLLM, api_settings: mc.Settings) -> Iterator[mc.Settings]:
    """The same brain, its passes asking the fake LLM (ingestion stayed offline)."""
    yield mc.load_settings(
        brain_url=api_settings.brain_url,
        data_dir=api_settings.data_dir,
        embedder="none",
        llm_base_url=llm_server.url,
        llm_max_retries=0,
        llm_timeout_s=2.0,
    )


def _asked(llm_server: FakeLLM) -> list[dict[str, Any]]:
    return [
        json.loads(r["json"]["messages"][1]["content"])
        for r in llm_server.requests
        if "replaces" in r["json"]["messages"][0]["content"]
    ]


def test_the_llm_settles_a_conflict_and_undoing_the_pass_restores_it(
    client: TestClient, story: dict[str, str], llm: mc.Settings, llm_server: FakeLLM
) -> None:
    llm_server.answer({"replaces": True, "reason": "they moved to York"})
    report = _pass(llm, NOW)
    assert _asked(llm_server) == [{"older": LEEDS, "newer": YORK}]
    assert report.count("resolve", "superseded") == 2  # the Leeds turn and its fact
    assert _conflicts(client) == []
    hits = _search(client, "where do I live")
    assert _of(hits, story["leeds"]) and not any(h["current"] for h in _of(hits, story["leeds"]))

    undo_unit(mc.open_brain(llm), report.pass_id)
    assert all(h["current"] for h in _of(_search(client, "where do I live"), story["leeds"]))


@pytest.mark.parametrize(
    ("answer", "proposed"),
    [
        ({"replaces": False, "reason": "both can hold"}, 0),
        ({"replaces": None, "reason": "cannot tell"}, 1),
        ("not json at all", 1),
    ],
)
def test_what_the_llm_does_not_settle_is_left_for_a_person(
    client: TestClient,
    story: dict[str, str],
    llm: mc.Settings,
    llm_server: FakeLLM,
    answer: Any,
    proposed: int,
) -> None:
    llm_server.answer(answer)
    report = _pass(llm, NOW)
    assert report.count("resolve", "superseded") == 0
    assert len(_conflicts(client)) == proposed
    hits = _search(client, "where do I live")
    assert all(h["current"] for h in _of(hits, story["leeds"]) + _of(hits, story["york"]))
    # A pair is judged once: the next pass asks nothing about it.
    asked = len(llm_server.requests)
    _pass(llm, NOW + DAY)
    assert len(llm_server.requests) == asked


def test_other_people_looks_back_and_repeats_are_not_conflicts(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    said = [
        (T0, "I live in Leeds, in a flat near the university."),
        (T0 + DAY, "My sister Ana lives in Bristol now."),
        (T0 + 2 * DAY, "I used to live in Hull, years ago."),
        (T0 + 3 * DAY, "Still loving Leeds, the flat is great."),
    ]
    for at, content in said:
        mc.add_trace(brain, content, identity=SYSTEM, occurred_at=at, now=at)
    report = dream(brain, settings, now=T0 + 10 * DAY)
    assert report.count("resolve", "proposed") == 0, [s.items for s in report.steps]
