"""A tag expression costs a bounded time whatever it says.  Its regexes run on RE2 against
the caller's tags, never in the database, so patterns that backtrack without end in a
backtracking engine answer at once on both backends, and /healthz answers meanwhile;
nesting, terms and regexes past their bounds, and patterns RE2 refuses, are a clear 422
(never a 500 or a 503)."""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.retrieval import tagexpr
from reverie.compose import Process
from reverie.compose import app as api_app
from tests.api.conftest import serving

BACKTRACKING = ("/^(a+)+$/", "/" + "(.*)" * 40 + "Z/")
PROBE_PAUSE_S = 0.02


@pytest.fixture
def base_url(api_settings: mc.Settings, workers: Process) -> Iterator[str]:
    with serving(api_app(workers)) as url:
        yield url


def test_backtracking_patterns_answer_at_once_while_healthz_answers(base_url: str) -> None:
    with httpx.Client(base_url=base_url, timeout=60) as http:
        for k, tags in enumerate((["a" * 119 + "b", "x" * 120], ["a" * 120])):
            body = {"content": f"Long tag notes, part {k}.", "scope_id": "ana", "tags": tags}
            assert http.post("/v1/memories", json=body).status_code == 201
    answers: list[tuple[str, int, float, int]] = []

    def searching() -> None:
        with httpx.Client(base_url=base_url, timeout=60) as http:
            for _ in range(3):
                for expr in BACKTRACKING:
                    start = time.monotonic()
                    r = http.get("/v1/search", params={"q": "notes", "tags_expr": expr})
                    took = time.monotonic() - start
                    answers.append((expr, r.status_code, took, len(r.json()["results"])))

    thread = threading.Thread(target=searching, daemon=True)
    thread.start()
    probes: list[float] = []
    with httpx.Client(base_url=base_url, timeout=60) as http:
        deadline = time.monotonic() + 120
        while (thread.is_alive() or len(probes) < 5) and time.monotonic() < deadline:
            start = time.monotonic()
            assert http.get("/healthz").status_code == 200
            probes.append(time.monotonic() - start)
            # A probe now and then, as a health check comes: probing without a pause
            # took the server's time from the searches it measures.
            time.sleep(PROBE_PAUSE_S)
    thread.join(60)
    assert len(answers) == 3 * len(BACKTRACKING), answers
    for expr, status, took, found in answers:
        assert status == 200 and took < 1.0, (expr, status, took)
        # ^(a+)+$ holds for the tag of 120 a's alone; nothing ends in Z.
        assert found == (1 if expr == BACKTRACKING[0] else 0), expr
    # Not starved: a probe waits for no search (the median, against one slow moment).
    assert statistics.median(probes) < 0.1, probes


def _refused(client: TestClient, expr: str) -> str:
    r = client.get("/v1/search", params={"q": "notes", "tags_expr": expr})
    assert r.status_code == 422, (expr[:60], r.status_code, r.text[:300])
    return str(r.json()["error"]["message"])


def test_past_a_bound_or_outside_re2_is_a_clear_422(client: TestClient) -> None:
    assert (
        client.post(
            "/v1/memories", json={"content": "Notes.", "scope_id": "ana", "tags": ["a", "b"]}
        ).status_code
        == 201
    )
    deep = tagexpr.MAX_NESTING
    cases = {
        "!" * 998 + "a": "nests deeper than",
        "mutex(" * 60 + "a, b" + ", c)" * 60: "nests deeper than",
        "!" * deep + "a": "nests deeper than",
        " | ".join(["a"] * (tagexpr.MAX_TERMS + 1)): f"more than {tagexpr.MAX_TERMS} terms",
        " | ".join(["/a/"] * (tagexpr.MAX_REGEXES + 1)): "more than",
        r"/(a)\1/": "RE2 syntax: no backreferences or lookaround",
        "/(?=a)b/": "RE2 syntax: no backreferences or lookaround",
        "/[^a]{1000}/": "too large a regular expression",
    }
    for expr, said in cases.items():
        assert said in _refused(client, expr), expr[:60]


def test_an_expression_at_every_bound_runs_on_the_backend(client: TestClient) -> None:
    r = client.post("/v1/memories", json={"content": "Notes.", "scope_id": "ana", "tags": ["a"]})
    kept = r.json()["id"]
    deep = tagexpr.MAX_NESTING
    # MAX_NESTING levels of each operator, a regex at the deepest, and every term used.
    mutexes = "mutex(" * (deep - 1) + "/^a$/, b" + ", c)" * (deep - 1)
    negations = "!" * (deep - 2) + "(/^a/ | b)"
    terms = " | ".join(["zz"] * (tagexpr.MAX_TERMS - 2))
    for expr in (mutexes, negations, f"a & ({terms} | /a/)"):
        r = client.get("/v1/search", params={"q": "notes", "tags_expr": expr})
        assert r.status_code == 200, (expr[:60], r.text[:300])
        assert [h["id"] for h in r.json()["results"]] == [kept], expr[:60]


def test_a_named_predicate_counts_toward_the_bounds(client: TestClient) -> None:
    brain: Any = client.app.state.brain  # type: ignore[attr-defined]
    client.post("/v1/memories", json={"content": "Notes.", "scope_id": "ana", "tags": ["a"]})
    deep = tagexpr.MAX_NESTING
    tagexpr.save_predicate(brain, "deep", "!" * (deep - 3) + "a", identity=SYSTEM)
    assert client.get("/v1/search", params={"q": "notes", "tags_expr": "!@deep"}).status_code == 200
    assert "nests deeper than" in _refused(client, "!!!@deep")
