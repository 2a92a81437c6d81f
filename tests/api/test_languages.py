"""Turns in languages Reverie does not read are kept and found: posted through
``POST /v1/turns`` and ingested by the workers, a Chinese or Japanese turn is stored
verbatim and found by a word inside it through ``GET /v1/search``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import memory_core as mc
from reverie.compose import Process
from tests.api.conftest import post_turn


@pytest.fixture
def api_settings(tmp_path: Path, brain_url: str) -> mc.Settings:
    """The default a user gets: MiniLM, which reads these languages poorly."""
    return mc.load_settings(brain_url=brain_url, data_dir=tmp_path / "data", embedder="minilm")


TURNS = (
    "我对花生过敏，所以不能吃宫保鸡丁。",
    "周末我喜欢去爬长城。",
    "私は来月東京に引っ越します。",
    "저는 서울에 살아요.",
    "I moved to Lisbon last month.",
)


def _first(client: TestClient, q: str) -> dict[str, Any]:
    r = client.get("/v1/search", params={"q": q, "scope_id": "mei", "limit": 5})
    assert r.status_code == 200, r.text
    results = r.json()["results"]
    assert results, q
    return dict(results[0])


def test_a_word_inside_an_unspaced_sentence_finds_the_turn_that_says_it(
    client: TestClient, workers: Process
) -> None:
    ids = [post_turn(client, said, scope_id="mei") for said in TURNS]
    workers.join()
    for question, turn in (
        ("过敏", 0),
        ("我对什么过敏？", 0),
        ("长城", 1),
        ("東京", 2),
        ("서울", 3),
    ):
        hit = _first(client, question)
        assert (hit["metadata"].get("turn_id") or hit["id"]) == ids[turn], question
        assert TURNS[turn] in hit["content"] or hit["content"] in TURNS[turn]
        assert "bm25" in hit["channels"]
