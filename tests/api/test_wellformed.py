"""Text that is not well-formed -- a lone surrogate (JSON's "\\ud800"), a NUL -- is
refused at the door with 422 naming the field, changes nothing, and fails no one else."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

import memory_core as mc
from reverie.compose import Process
from reverie.compose import app as api_app
from tests.api.conftest import serving

SURROGATE, NUL = "\\ud800", "\\u0000"  # as escapes in a JSON text

# (path, a JSON body with BAD where the bad text goes, the field the answer names)
CASES = [
    (
        "/v1/turns",
        '{"user": "hi", "assistant": "ok", "scope": "user", "scope_id": "eve", '
        '"metadata": {"where": {"deep": ["fine", "BAD"]}}}',
        "metadata.where.deep[1]",
    ),
    (
        "/v1/turns",
        '{"user": "hi", "assistant": "ok", "scope": "user", "scope_id": "eve", '
        '"metadata": {"keyBAD": 1}}',
        "metadata",
    ),
    (
        "/v1/turns",
        '{"messages": [{"role": "user", "content": "hiBAD"}], "scope": "user", "scope_id": "eve"}',
        "messages[0].content",
    ),
    ("/v1/memories", '{"content": "a fact", "metadata": {"note": "BAD"}}', "metadata.note"),
    ("/v1/memories", '{"content": "a fact", "tags": ["tagBAD"]}', "tags[0]"),
    ("/v1/context", '{"query": "teaBAD"}', "query"),
    ("/v1/tools/memory_add", '{"content": "heBADllo"}', "content"),
    ("/v1/tools/memory_search", '{"query": "heBADllo"}', "query"),
    (
        "/v1/tools/memory_post_turn",
        '{"user": "hi", "assistant": "ok", "scope_id": "eve", "metadata": {"x": "BAD"}}',
        "metadata.x",
    ),
]


def post_raw(client: TestClient, path: str, body: str) -> httpx.Response:
    return client.post(path, content=body.encode(), headers={"content-type": "application/json"})


def inbox_size(brain: mc.Brain) -> int:
    with brain.read() as conn:
        return int(conn.execute(text("SELECT count(*) FROM inbox_turns")).scalar_one())


@pytest.mark.parametrize("bad", [SURROGATE, NUL], ids=["surrogate", "nul"])
@pytest.mark.parametrize(("path", "body", "field"), CASES, ids=[f"{p}:{f}" for p, _, f in CASES])
def test_bad_text_anywhere_in_a_body_is_refused_naming_the_field(
    client: TestClient,
    digest: Callable[[mc.Brain], str],
    path: str,
    body: str,
    field: str,
    bad: str,
) -> None:
    brain: mc.Brain = client.app.state.brain  # type: ignore[attr-defined]
    before = digest(brain), inbox_size(brain)
    r = post_raw(client, path, body.replace("BAD", bad))
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "invalid_argument"
    assert error["message"].startswith(f"{field}: text may not hold "), error["message"]
    assert (digest(brain), inbox_size(brain)) == before


def test_nul_in_a_query_string_or_a_path_is_refused(client: TestClient) -> None:
    r = client.get("/v1/search?q=tea%00")
    assert r.status_code == 422 and r.json()["error"]["message"].startswith("q: text may not")
    r = client.get("/v1/memories/mt_%00")
    assert r.status_code == 422 and r.json()["error"]["message"].startswith("trace_id: ")


def test_bad_queries_never_pause_the_vector_channel_for_anyone(
    client: TestClient, workers: Process
) -> None:
    added = client.post("/v1/memories", json={"content": "Ana drinks jasmine tea."})
    assert added.status_code == 201
    workers.join()  # its vector is stored
    for path, body in [
        ("/v1/tools/memory_search", '{"query": "jasmine\\ud800"}'),
        ("/v1/tools/memory_context", '{"query": "jasmine\\u0000"}'),
    ]:
        assert post_raw(client, path, body).status_code == 422
    assert client.get("/v1/search?q=jasmine%00").status_code == 422
    r = client.get("/v1/search", params={"q": "what does Ana drink"})
    assert r.status_code == 200
    assert "vector" in r.json()["channels"] and r.json()["degraded"] == []


def test_the_query_embedder_pauses_for_no_query_it_cannot_take() -> None:
    """Text the embedder cannot encode is the query's fault: the next search embeds."""
    from memory_core.embedders.stub import StubEmbedder
    from memory_core.errors import ChannelUnavailable
    from memory_core.retrieval.query_embedding import QueryEmbedder

    embedder = QueryEmbedder(StubEmbedder(), retry_after_s=3600, timeout_s=10)
    try:
        with pytest.raises(ChannelUnavailable):
            embedder.embed("jasmine\ud800")
        assert embedder.wait(embedder.start("jasmine")).shape == (embedder.dim,)
    finally:
        embedder.close()


def test_a_poisoned_turn_among_600_concurrent_posts_fails_alone(
    api_settings: mc.Settings, workers: Process
) -> None:
    """Another user's 600 posts, from threads over real HTTP, while an attacker keeps
    posting a turn whose metadata holds a lone surrogate: all 600 are accepted."""
    poison = (
        b'{"user": "x", "assistant": "y", "scope": "user", "scope_id": "mallory", '
        b'"metadata": {"m": "\\ud800"}}'
    )
    stop = threading.Event()
    refused: list[int] = []

    def attack(url: str) -> None:
        with httpx.Client(base_url=url, timeout=60) as http:
            while not stop.is_set():
                r = http.post(
                    "/v1/turns", content=poison, headers={"content-type": "application/json"}
                )
                refused.append(r.status_code)

    def post(url: str, first: int) -> list[int]:
        with httpx.Client(base_url=url, timeout=60) as http:
            return [
                http.post(
                    "/v1/turns",
                    json={
                        "user": f"I water the plants on day {i}.",
                        "assistant": "Noted.",
                        "scope": "user",
                        "scope_id": "alice",
                    },
                ).status_code
                for i in range(first, first + 100)
            ]

    with serving(api_app(workers)) as url, ThreadPoolExecutor(8) as pool:
        attackers = [pool.submit(attack, url) for _ in range(2)]
        try:
            statuses = [
                s for f in [pool.submit(post, url, k * 100) for k in range(6)] for s in f.result()
            ]
        finally:
            stop.set()
        for a in attackers:
            a.result()
    assert statuses == [202] * 600
    assert refused and set(refused) == {422}
    brain = workers.runtime.brain
    with brain.read() as conn:
        kept = conn.execute(
            text("SELECT count(*) FROM inbox_turns WHERE payload LIKE '%alice%'")
        ).scalar_one()
    assert kept == 600 and inbox_size(brain) == 600
