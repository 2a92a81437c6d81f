"""What another tenant writes never moves what a confined caller sees of its own hit:
BM25's raw score (weighed by the whole brain's word statistics) is not shown to it, and
its hits' relevance and its plain-language query are counted among its own traces."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

import memory_core as mc
from memory_core.auth import OPEN, SYSTEM, create_token
from tests.api.conftest import close

QUERIES = ("sourdough", "sourdough oven", "where does the sourdough starter live")


@pytest.fixture(params=["pinned token", "open operator acting as bob"])
def bob(request: pytest.FixtureRequest, client: TestClient) -> Iterator[dict[str, str]]:
    brain: mc.Brain = client.app.state.brain  # type: ignore[attr-defined]
    mc.add_traces(
        brain,
        [
            mc.NewTrace("My sourdough starter lives in the fridge.", scope_id="bob"),
            mc.NewTrace("The garden needs water on Sunday.", scope_id="bob"),
            mc.NewTrace("Alice walks to the market.", scope_id="alice"),
        ],
        identity=SYSTEM,
    )
    if request.param == "pinned token":
        _, token = create_token(brain, "bob", ["read"], scope_ids=["bob"], identity=OPEN)
        yield {"Authorization": f"Bearer {token}"}
    else:
        yield {"X-Reverie-User": "bob"}


def _seen(client: TestClient, headers: dict[str, str], q: str) -> dict[str, Any]:
    """All a search tells Bob, less its own id (``record=false``: nothing counted)."""
    r = client.get("/v1/search", params={"q": q, "record": "false"}, headers=headers)
    assert r.status_code == 200, r.text
    body = r.json()
    body.pop("query_id", None)
    return dict(body)


def test_another_tenants_words_never_move_a_confined_callers_own_hit(
    client: TestClient, bob: dict[str, str]
) -> None:
    before = {q: _seen(client, bob, q) for q in QUERIES}
    mine = before["sourdough"]["results"]
    assert len(mine) == 1 and "sourdough" in mine[0]["content"]
    assert mine[0]["channels"]["bm25"] == {"rank": 1, "score": None}  # no raw BM25 score
    assert before["sourdough oven"]["mode"] == "natural"
    brain: mc.Brain = client.app.state.brain  # type: ignore[attr-defined]
    mc.add_traces(
        brain,
        [
            mc.NewTrace(f"Alice bakes sourdough loaf number {n}.", scope_id="alice")
            for n in range(3)
        ],
        identity=SYSTEM,
    )
    for q in QUERIES:
        assert close(_seen(client, bob, q), before[q]), q


def test_an_unconfined_caller_still_sees_bm25s_score(client: TestClient) -> None:
    mc.add_trace(
        client.app.state.brain,  # type: ignore[attr-defined]
        "My sourdough starter lives in the fridge.",
        scope_id="bob",
        identity=SYSTEM,
    )
    hits = client.get("/v1/search", params={"q": "sourdough"}).json()["results"]
    assert hits and hits[0]["channels"]["bm25"]["score"] > 0
