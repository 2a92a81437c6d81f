"""A caller confined to scope ids never learns another tenant's tags: by every door (REST
search, the tools, MCP, the routes about tags the console uses), a tag only Alice
carries answers Bob exactly as a tag nobody carries, and no answer or error of his
names one of hers.  Named predicates are the whole brain's: a confined caller uses
them on its own memories, sees their names only, and never manages them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core.auth import OPEN, SYSTEM, create_token
from memory_core.retrieval import tagexpr
from tests.api.conftest import close

SECRET = "alice-secret-diagnosis-hiv"
ALICES = [SECRET, "diagnosis:hiv", "clinic.north"]
NOBODYS = "zz-no-such-tag"


@pytest.fixture
def tenants(served: Any) -> dict[str, str]:
    alice = mc.NewTrace("Notes from the clinic visit.", scope_id="alice", tags=ALICES)
    bob = mc.NewTrace("Notes from the garden visit.", scope_id="bob", tags=["bob-notes"])
    [alice_id, bob_id] = mc.add_traces(served.brain, [alice, bob], identity=SYSTEM)
    # An unconfined admin's predicate naming Alice's tag.
    tagexpr.save_predicate(served.brain, "flagged", f"{SECRET} | /^clinic/", identity=SYSTEM)
    return {"alice": alice_id, "bob": bob_id}


@pytest.fixture(params=["pinned token", "open operator acting as bob"])
def bob(request: pytest.FixtureRequest, served: Any) -> Iterator[httpx.Client]:
    """Bob's caller: an admin token pinned to bob, or the open operator naming bob."""
    if request.param == "pinned token":
        _, token = create_token(served.brain, "bob", ["admin"], scope_ids=["bob"], identity=OPEN)
        headers = {"Authorization": f"Bearer {token}"}
    else:
        headers = {"X-Reverie-User": "bob"}
    with httpx.Client(
        base_url=served.url.removesuffix("/mcp"), headers=headers, timeout=60
    ) as http:
        yield http


def _answer(r: httpx.Response) -> tuple[int, Any]:
    """What a response tells: its status and body, less what differs on every call."""
    body = r.json()
    for key in ("query_id", "unit", "from", "to"):
        body.pop(key, None)
    return r.status_code, body


def test_a_tag_only_another_tenant_has_answers_as_one_nobody_has(
    served: Any, bob: httpx.Client, tenants: dict[str, str]
) -> None:
    texts: list[str] = []

    def search(expr: str) -> tuple[int, Any]:
        params = {"q": "notes visit", "tags_expr": expr, "record": "false"}
        r = bob.get("/v1/search", params=params)
        texts.append(r.text)
        return _answer(r)

    def tool(expr: str) -> tuple[int, Any]:
        r = bob.post("/v1/tools/memory_search", json={"query": "notes", "tagsExpr": expr})
        texts.append(r.text)
        # What a hit's use changes (its strength) aside: the tool counts every search.
        return r.status_code, [h["id"] for h in r.json()["results"]]

    for theirs, nobodys in (
        (SECRET, NOBODYS),
        ("diagnosis=hiv", "zz=hiv"),
        ("diagnosis=1", "zz=1"),
        ("/secret/", "/zz-nothing/"),
        ("/^clinic\\./ | hiv", "/^zz\\./ | zz"),
        (f"!{SECRET}", f"!{NOBODYS}"),
    ):
        assert close(search(theirs), search(nobodys)), theirs
        assert tool(theirs) == tool(nobodys), theirs
    assert search("hiv")[0] == 200 and search("hiv")[1]["results"] == []
    own = bob.get("/v1/search", params={"q": "notes", "tags_expr": "/^bob-/"}).json()
    assert [h["id"] for h in own["results"]] == [tenants["bob"]]
    # Errors quote the caller's own words only.
    bad = bob.get("/v1/search", params={"q": "notes", "tags_expr": "hiv & ("})
    texts.append(bad.text)
    assert bad.status_code == 422
    # The routes about tags: the listing and the rename the console calls.
    listed = bob.get("/v1/tags")
    texts.append(listed.text)
    assert listed.json()["tags"] == {"bob-notes": 1}
    renames = [  # each answer echoes the name asked, and is otherwise the same
        bob.post("/v1/tags/rename", json={"from": name, "to": "renamed"})
        for name in (SECRET, NOBODYS)
    ]
    assert _answer(renames[0]) == _answer(renames[1]) == (200, {"renamed": []})
    for said in texts:
        assert not any(name in said for name in ALICES), said
        assert "clinic" not in said, said
    assert mc.get_trace(served.brain, tenants["alice"], identity=SYSTEM).tags == ALICES


def test_a_confined_caller_uses_predicates_but_neither_reads_nor_manages_them(
    served: Any, bob: httpx.Client, tenants: dict[str, str]
) -> None:
    listed = bob.get("/v1/tag-predicates")
    assert listed.status_code == 200 and listed.json() == {"predicates": {"flagged": None}}
    found = bob.get("/v1/search", params={"q": "notes", "tags_expr": "@flagged"})
    assert found.status_code == 200 and found.json()["results"] == []
    kept = bob.get("/v1/search", params={"q": "notes", "tags_expr": "!@flagged"})
    assert [h["id"] for h in kept.json()["results"]] == [tenants["bob"]]
    for refused in (
        bob.put("/v1/tag-predicates/mine", json={"expression": "bob-notes"}),
        bob.put("/v1/tag-predicates/flagged", json={"expression": "bob-notes"}),
        bob.delete("/v1/tag-predicates/flagged"),
    ):
        assert refused.status_code == 403, refused.text
        assert SECRET not in refused.text
    shown = tagexpr.list_predicates(served.brain, identity=SYSTEM)
    assert shown == {"flagged": f"{SECRET} | /^clinic/"}
    # One stored before its regex was refused (lookaround is not RE2): Bob is told it
    # does not compile, and nothing of its text.
    with served.brain.transaction() as conn:
        conn.execute(
            text("INSERT INTO tag_predicates (name, expression, created_at) VALUES (:n, :e, 0)"),
            {"n": "stale", "e": f"/(?={SECRET})/"},
        )
    stale = bob.get("/v1/search", params={"q": "notes", "tags_expr": "bob-notes & @stale"})
    assert stale.status_code == 422 and "@stale does not compile" in stale.text
    assert SECRET not in stale.text


def test_mcp_acting_for_bob_answers_alices_tag_as_nobodys(
    over_http: Any, tenants: dict[str, str]
) -> None:
    async def scenario() -> list[Any]:
        answers = []
        async with over_http(scope_ids={"user": "bob"}) as client:
            for expr in (SECRET, NOBODYS, "/hiv/", "/zz-nothing/"):
                found = await client.call_tool(
                    "memory_search", {"query": "notes", "tagsExpr": expr}
                )
                content = found.structured_content or {}
                answers.append((found.is_error, [h["id"] for h in content.get("results", [])]))
        return answers

    answers = anyio.run(scenario)
    assert answers[0] == answers[1] and answers[2] == answers[3]
    assert answers[0] == (False, [])
