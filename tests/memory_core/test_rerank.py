"""The rerank stage against local fake ``/rerank`` servers, some of which misbehave:
the reranked order is merged with the fused one, endpoints fail over in order within
one deadline, and when none answers the search keeps its order and says so."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.retrieval.rerank import Reranker, merged
from reverie.compose import app as api_app
from reverie.compose import embedded
from tests.conftest import LOCAL
from tests.fakes import FakeRerank

TIMEOUT = 1.0


@pytest.fixture
def fakes() -> Iterator[list[FakeRerank]]:
    made = [FakeRerank("Miso"), FakeRerank("Miso")]
    yield made
    for fake in made:
        fake.close()


def _brain_with_notes(brain: mc.Brain) -> dict[str, str]:
    notes = {
        "first": "Ana's garden: garden beds, garden tools, garden hose, the garden shed.",
        "second": "Ana's garden has a pond; the garden gate squeaks.",
        "cat": "Ana's cat Miso naps in the garden.",
    }
    ids = mc.add_traces(
        brain, [mc.NewTrace(t, scope_id="ana") for t in notes.values()], identity=SYSTEM
    )
    return dict(zip(notes, ids, strict=True))


def _reranker(settings: mc.Settings, *urls: str, weight: float = 0.9) -> Reranker:
    endpoints = [{"url": u, "model": "rerank-test", "api_key": "k"} for u in urls]
    return Reranker(
        settings.model_copy(
            update={
                "rerank_endpoints": [mc.settings.RerankEndpoint(**e) for e in endpoints],
                "rerank_timeout_s": TIMEOUT,
                "rerank_weight": weight,
            }
        )
    )


def _search(brain: mc.Brain, reranker: Reranker | None) -> mc.SearchResponse:
    return mc.search(brain, "garden", identity=SYSTEM, embedder=None, reranker=reranker)


def test_the_reranked_order_is_merged_with_the_fused_one(
    brain: mc.Brain, settings: mc.Settings, fakes: list[FakeRerank]
) -> None:
    ids = _brain_with_notes(brain)
    fused = [h.trace.id for h in _search(brain, None).results]
    assert fused[0] != ids["cat"]
    found = _search(brain, _reranker(settings, fakes[0].url))
    assert found.results[0].trace.id == ids["cat"] and found.degraded == []
    assert found.results[0].adjustments["rerank"] == pytest.approx(0.9)
    [asked] = fakes[0].requests
    assert asked["json"]["query"] == "garden" and asked["json"]["model"] == "rerank-test"
    assert sorted(asked["json"]["documents"]) == sorted(
        h.trace.content for h in _search(brain, None).results
    )
    assert asked["json"]["top_n"] == 3 and asked["headers"]["Authorization"] == "Bearer k"
    # With no weight on it the second stage changes nothing.
    unweighted = _search(brain, _reranker(settings, fakes[0].url, weight=0.0))
    assert [h.trace.id for h in unweighted.results] == fused


@pytest.mark.parametrize("fault", ["hung", "status", "malformed", "index"])
def test_a_failing_endpoint_passes_the_search_to_the_next(
    brain: mc.Brain, settings: mc.Settings, fakes: list[FakeRerank], fault: str
) -> None:
    ids = _brain_with_notes(brain)
    bad, good = fakes
    if fault == "hung":
        bad.slow = 30.0
    elif fault == "status":
        bad.status = 503
    elif fault == "malformed":
        bad.malformed = b"{not json"
    else:
        bad.malformed = json.dumps({"results": [{"index": 7, "relevance_score": 1}]}).encode()
    reranker = _reranker(settings, bad.url, good.url)
    started = time.monotonic()
    found = _search(brain, reranker)
    assert time.monotonic() - started < TIMEOUT + 10  # a hung one (30 s) gets its share only
    assert found.results[0].trace.id == ids["cat"] and found.degraded == []
    assert len(good.requests) == 1


def test_when_no_endpoint_answers_the_fused_order_stands_within_the_timeout(
    brain: mc.Brain, settings: mc.Settings, fakes: list[FakeRerank]
) -> None:
    _brain_with_notes(brain)
    fused = [h.trace.id for h in _search(brain, None).results]
    fakes[0].status = 500
    fakes[1].slow = 30.0
    started = time.monotonic()
    found = _search(brain, _reranker(settings, fakes[0].url, fakes[1].url))
    assert time.monotonic() - started < TIMEOUT + 10  # not the hung one's 30 s
    assert [h.trace.id for h in found.results] == fused
    assert found.degraded == ["rerank"]
    assert all("rerank" not in h.adjustments for h in found.results)


def test_merging_scales_both_scores_to_the_candidates() -> None:
    assert merged([10.0, 5.0, 0.0], [0.0, 0.5, 1.0], 0.5) == [0.5, 0.5, 0.5]
    assert merged([10.0, 5.0, 0.0], [0.0, 0.5, 1.0], 1.0) == [0.0, 0.5, 1.0]
    assert merged([3.0, 3.0], [0.2, 0.2], 0.3) == [1.0, 1.0]


def test_the_api_search_and_context_rerank_when_configured(
    tmp_path: Path, brain_url: str, fakes: list[FakeRerank]
) -> None:
    settings = mc.load_settings(
        brain_url=brain_url,
        data_dir=tmp_path / "data",
        embedder="stub",
        rerank_endpoints=[fakes[0].url],
        rerank_weight=0.9,
    )
    workers = embedded(settings, threads=1)
    try:
        with TestClient(api_app(workers), base_url=LOCAL) as client:
            ids = _brain_with_notes(client.app.state.brain)  # type: ignore[attr-defined]
            found = client.get("/v1/search", params={"q": "garden"}).json()
            assert found["results"][0]["id"] == ids["cat"] and found["degraded"] == []
            block = client.post("/v1/context", json={"query": "garden"}).json()
            assert block["memories"][0]["id"] == ids["cat"]
            fakes[0].status = 502
            found = client.get("/v1/search", params={"q": "garden"}).json()
            assert found["degraded"] == ["rerank"]
    finally:
        workers.stop()
