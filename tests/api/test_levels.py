"""Reading by level: a search answers each memory by one line and the passage that
matched; a memory is read as deep as needed; the context call writes the best
memories into one block within a token budget."""

from __future__ import annotations

import re
from typing import Any

from fastapi.testclient import TestClient

from reverie.compose import Process
from tests.api.conftest import post_turn

NOTE = (
    "Ana moved to Leeds in May. She works at the library on Park Road. "
    "Her cat is called Miso and sleeps on the radiator."
)


def _add(client: TestClient, content: str, **body: Any) -> str:
    r = client.post("/v1/memories", json={"content": content, "scope_id": "ana", **body})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def test_a_search_hit_carries_its_abstract_and_the_passage_that_matched(
    client: TestClient,
) -> None:
    trace = _add(client, NOTE)
    [hit] = client.get("/v1/search", params={"q": "what is the cat called"}).json()["results"]
    assert hit["id"] == trace
    assert hit["abstract"] == "Ana moved to Leeds in May."
    assert hit["snippet"] == "Her cat is called Miso and sleeps on the radiator."
    tool = client.post("/v1/tools/memory_search", json={"query": "library"}).json()
    assert tool["results"][0]["snippet"] == "She works at the library on Park Road."
    assert tool["results"][0]["abstract"] == "Ana moved to Leeds in May."


def test_an_abstract_is_its_first_sentence_whole_whatever_its_abbreviations(
    client: TestClient,
) -> None:
    trace = _add(client, "My GP is Dr. Okafor at St. Mary's. She is great.")
    [hit] = client.get("/v1/search", params={"q": "who is my GP"}).json()["results"]
    assert hit["id"] == trace
    assert hit["abstract"] == "My GP is Dr. Okafor at St. Mary's."
    read = client.get(f"/v1/memories/{trace}", params={"level": "abstract"}).json()
    assert "My GP is Dr. Okafor at St. Mary's." in str(read)


def test_a_long_sentence_is_cut_around_the_match() -> None:
    from memory_core.traces.levels import snippet

    long = "Word " * 80 + "the heron nests by the lake " + "filler " * 80
    cut = snippet(long, "heron")
    assert "heron" in cut and len(cut) <= 200
    assert cut.startswith("…") and cut.endswith("…")


def test_a_memory_is_read_at_the_level_asked(client: TestClient, workers: Process) -> None:
    turn = post_turn(
        client, "I adopted a cat. She is called Miso.", assistant="Lovely! How old is she?"
    )
    workers.join()
    listed = client.get("/v1/memories", params={"scope_id": "ana"}).json()["memories"]
    episode = next(t for t in listed if "turn" in t["tags"])
    fact = next(t for t in listed if "turn" not in t["tags"])

    short = client.get(f"/v1/memories/{episode['id']}", params={"level": "abstract"}).json()
    assert short["level"] == "abstract" and short["abstract"] == "User: I adopted a cat."
    assert "content" not in short
    outline = client.get(f"/v1/memories/{episode['id']}", params={"level": "outline"}).json()
    assert outline["outline"] == [
        "User: I adopted a cat. (+1 more)",
        "Assistant: Lovely! (+1 more)",
    ]
    whole = client.get(f"/v1/memories/{fact['id']}").json()
    assert whole["content"] == fact["content"] and whole["version"] == 1  # full, as before

    sources = client.get(f"/v1/memories/{fact['id']}", params={"level": "sources"}).json()
    [said] = sources["turns"]
    assert said["turn_id"] == turn and said["user"] == "I adopted a cat. She is called Miso."
    assert said["assistant"] == "Lovely! How old is she?"
    assert [t["id"] for t in sources["traces"]] == [episode["id"]]

    by_tool = client.post(
        "/v1/tools/memory_read", json={"traceId": episode["id"], "level": "outline"}
    ).json()
    assert by_tool["outline"] == outline["outline"]
    assert client.get(f"/v1/memories/{fact['id']}", params={"level": "deep"}).status_code == 422


def test_another_users_memory_is_not_read_at_any_level(client: TestClient) -> None:
    trace = _add(client, NOTE)
    for level in ("abstract", "outline", "sources"):
        r = client.get(
            f"/v1/memories/{trace}", params={"level": level}, headers={"X-Reverie-User": "ben"}
        )
        assert r.status_code == 404, level


LINE = re.compile(r"^- \[\d{4}-\d{2}-\d{2}\] \((mt_[0-9a-f-]+)\) .+$")


def test_the_context_call_keeps_within_its_budget(client: TestClient) -> None:
    ids = [
        _add(client, f"Ana's garden note {k}: the {plant} bed needs water twice a week.")
        for k, plant in enumerate(["tomato", "bean", "pea", "rose", "mint", "sage", "leek", "kale"])
    ]
    small = client.post("/v1/context", json={"query": "garden bed water", "budget_tokens": 60})
    assert small.status_code == 200, small.text
    small_doc = small.json()
    assert 0 < small_doc["tokens"] <= 60 and small_doc["left_out"] > 0
    lines = small_doc["context"].splitlines()
    assert lines[0].startswith("Memories relevant to:")
    named = [LINE.match(line).group(1) for line in lines[1:]]  # type: ignore[union-attr]
    assert named == [m["id"] for m in small_doc["memories"]] and set(named) <= set(ids)
    assert len(small_doc["context"]) <= 4 * 60

    large = client.post(
        "/v1/context", json={"query": "garden bed water", "budget_tokens": 2000}
    ).json()
    assert len(large["memories"]) == len(ids) and large["left_out"] == 0
    assert large["tokens"] <= 2000

    tool = client.post(
        "/v1/tools/memory_context", json={"query": "garden bed water", "budgetTokens": 60}
    ).json()
    assert tool["tokens"] <= 60 and tool["memories"]
    for bad in (10, 100_000, "many"):
        r = client.post("/v1/context", json={"query": "garden", "budget_tokens": bad})
        assert r.status_code == 422, bad


def test_the_context_call_says_nothing_when_nothing_is_known(client: TestClient) -> None:
    doc = client.post("/v1/context", json={"query": "submarine periscope"}).json()
    assert doc["context"] == "" and doc["memories"] == [] and doc["tokens"] == 0
