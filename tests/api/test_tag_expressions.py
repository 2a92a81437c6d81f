"""Tag expressions filter exactly as the algebra says, before ranking, on both channels:
a crowd the expression keeps out never displaces a match; numbers match canonically; a
tag no memory carries matches nothing; a named predicate is reusable."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

import memory_core as mc
from memory_core.auth import SYSTEM, create_token
from tests.conftest import memctl_in_process

EXPR = r"project=nmmt & (rust | /^topic\./) & !archived"


def _add(client: TestClient, content: str, tags: list[str]) -> str:
    r = client.post("/v1/memories", json={"content": content, "scope_id": "ana", "tags": tags})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _found(client: TestClient, q: str, expr: str, **params: Any) -> list[str]:
    r = client.get("/v1/search", params={"q": q, "tags_expr": expr, "limit": 10, **params})
    assert r.status_code == 200, r.text
    return [h["id"] for h in r.json()["results"]]


def test_the_expression_filters_before_ranking_on_both_channels(client: TestClient) -> None:
    brain: mc.Brain = client.app.state.brain  # type: ignore[attr-defined]
    wanted = {
        _add(client, "Heron survey notes.", ["project:nmmt", "rust"]),
        _add(client, "Heron nesting notes.", ["project:nmmt", "topic.birds"]),
    }
    _add(client, "Heron archive notes.", ["project:nmmt", "rust", "archived"])
    _add(client, "Heron notes elsewhere.", ["project:other", "rust"])
    _add(client, "Heron python notes.", ["project:nmmt", "python", "topic"])
    # A crowd that matches the query far better, and the expression keeps out.
    crowd = [
        mc.NewTrace("Heron heron heron heron notes notes.", scope_id="ana", tags=["project:other"])
        for _ in range(60)
    ]
    mc.add_traces(brain, crowd, identity=SYSTEM)
    assert set(_found(client, "heron notes", EXPR, limit=2)) == wanted
    r = client.get("/v1/search", params={"q": "heron notes", "tags_expr": EXPR})
    assert "vector" in r.json()["channels"] and r.json()["degraded"] == []
    assert all("vector" in h["channels"] for h in r.json()["results"])
    assert set(_found(client, "heron notes", "!(" + EXPR + ")", limit=100)) & wanted == set()


def test_a_number_matches_canonically_and_mutex_allows_at_most_one(client: TestClient) -> None:
    two = {
        _add(client, "Task one.", ["priority:2"]),
        _add(client, "Task two.", ["priority:2.0"]),
        _add(client, "Task three.", ["priority:02", "draft"]),
    }
    three = _add(client, "Task four.", ["priority:3", "draft", "final"])
    assert set(_found(client, "task", "priority=2")) == two
    assert _found(client, "task", "priority=3.0") == [three]
    assert set(_found(client, "task", "priority=2 | priority=3")) == two | {three}
    assert three not in _found(client, "task", "mutex(draft, final)")
    assert len(_found(client, "task", "mutex(draft, final)")) == 3


def test_an_unknown_tag_matches_nothing_and_bad_syntax_says_where(client: TestClient) -> None:
    kept = _add(client, "Rust notes.", ["rust", "project:nmmt"])
    for expr, found in (
        ("rusty & project=nmmt", []),
        ("projekt=nmmt", []),
        ("!rusty", [kept]),
        ("/^rust$/ & !/^ru$/", [kept]),
    ):
        assert _found(client, "notes", expr) == found, expr
    for expr, said, status in (
        ("@nothing", "no named predicate @nothing", 404),
        ("rust & (", "tags_expr: unexpected", 422),
        ("/(/", "is no regular expression", 422),
    ):
        r = client.get("/v1/search", params={"q": "notes", "tags_expr": expr})
        assert r.status_code == status, (expr, r.text)
        assert said in r.json()["error"]["message"], (expr, r.json())


def test_a_named_predicate_is_stored_by_an_admin_and_reusable(client: TestClient) -> None:
    brain: mc.Brain = client.app.state.brain  # type: ignore[attr-defined]
    kept = _add(client, "Live rust notes.", ["rust"])
    _add(client, "Old rust notes.", ["rust", "archived"])
    _, reader = create_token(brain, "reader", ["read"], identity=mc.OPEN)
    _, admin = create_token(brain, "root", ["admin"], identity=mc.OPEN)
    as_admin = {"Authorization": f"Bearer {admin}"}
    refused = client.put(
        "/v1/tag-predicates/live",
        json={"expression": "!archived"},
        headers={"Authorization": f"Bearer {reader}"},
    )
    assert refused.status_code == 403
    saved = client.put(
        "/v1/tag-predicates/live", json={"expression": "!archived"}, headers=as_admin
    )
    assert saved.status_code == 200 and saved.json()["predicates"] == {"live": "!archived"}
    for expr in ("@live & rust", "rust & !(!@live)"):
        r = client.get("/v1/search", params={"q": "notes", "tags_expr": expr}, headers=as_admin)
        assert [h["id"] for h in r.json()["results"]] == [kept], expr
    loop = client.put(
        "/v1/tag-predicates/loop", json={"expression": "rust & @loop"}, headers=as_admin
    )
    assert loop.status_code == 422 and "names itself" in loop.json()["error"]["message"]
    assert client.delete("/v1/tag-predicates/live", headers=as_admin).status_code == 200
    assert client.delete("/v1/tag-predicates/live", headers=as_admin).status_code == 404


def test_the_tool_and_memctl_take_the_expression_too(
    client: TestClient, api_settings: mc.Settings
) -> None:
    kept = _add(client, "Rust heron notes.", ["rust"])
    _add(client, "Python heron notes.", ["python"])
    tool = client.post("/v1/tools/memory_search", json={"query": "heron", "tagsExpr": "!python"})
    assert [h["id"] for h in tool.json()["results"]] == [kept]
    printed = memctl_in_process(
        ["--brain", api_settings.brain_url, "--json", "search", "heron", "--tags-expr", "rust"],
        env={"REVERIE_DATA_DIR": str(api_settings.data_dir)},
    )
    assert printed.returncode == 0, printed.stderr
    import json

    assert [h["id"] for h in json.loads(printed.stdout)["results"]] == [kept]


def test_a_regex_sees_a_tag_as_soon_as_it_is_added_or_rewritten(client: TestClient) -> None:
    first = _add(client, "Topic notes.", ["topic.one"])
    assert _found(client, "notes", "/^topic\\./") == [first]  # the tags are read, and kept
    second = _add(client, "More topic notes.", ["topic.two"])
    assert set(_found(client, "notes", "/^topic\\./")) == {first, second}
    r = client.patch(f"/v1/memories/{first}", json={"tags": ["subject.one"]})
    assert r.status_code == 200, r.text
    assert _found(client, "notes", "/^subject\\./") == [first]
    renamed = client.post("/v1/tags/rename", json={"from": "topic.two", "to": "subject.two"})
    assert renamed.json()["renamed"] == [second]
    assert set(_found(client, "notes", "/^subject\\./")) == {first, second}
    assert _found(client, "notes", "/^topic\\./") == []
