"""The endpoints Reverie asks keep to their timeouts by the wall clock: one that sends its
headers and then a byte at a time costs a call its timeout, not its whole drip."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import memory_core as mc
from memory_core.embedders.openai import OpenAIEmbedder
from memory_core.errors import EmbedderError, ExtractionError
from memory_core.extraction.llm import LLMExtractor
from memory_core.reasoners.chat import ChatReasoner
from memory_core.retrieval.rerank import Reranker
from tests.fakes import FakeLLM

TIMEOUT_S = 2.0
SLACK_S = 1.0


@pytest.fixture
def dripping(llm_server: FakeLLM) -> FakeLLM:
    """The fake endpoint, answering any POST a byte every 0.25 s (about 30 s in all)."""
    llm_server.respond = lambda asked: {"facts": [{"content": "x" * 60, "category": "goal"}]}
    llm_server.drip = 0.25
    return llm_server


def test_a_slow_drip_llm_costs_an_extraction_its_timeout_and_no_more(dripping: FakeLLM) -> None:
    extractor = LLMExtractor(ChatReasoner(dripping.url, "m", timeout_s=TIMEOUT_S, max_retries=2))
    started = time.monotonic()
    try:
        with pytest.raises(ExtractionError):
            extractor.extract("I want to run a marathon.", "Great goal.")
    finally:
        extractor.close()
    assert time.monotonic() - started <= TIMEOUT_S + SLACK_S
    assert dripping.requests  # it was asked, and given up on


def test_a_slow_drip_embedding_endpoint_fails_within_its_timeout(dripping: FakeLLM) -> None:
    embedder = OpenAIEmbedder([dripping.url], "text-embedding-3-small", timeout_s=TIMEOUT_S)
    started = time.monotonic()
    try:
        with pytest.raises(EmbedderError, match="timed out"):
            embedder.embed(["hello"])
    finally:
        embedder.close()
    assert time.monotonic() - started <= TIMEOUT_S + SLACK_S


def test_a_slow_drip_rerank_endpoint_is_given_up_within_the_stage_timeout(
    dripping: FakeLLM, tmp_path: Path
) -> None:
    settings = mc.load_settings(
        data_dir=tmp_path,
        rerank_endpoints=[{"url": f"{dripping.url}/rerank"}],
        rerank_timeout_s=TIMEOUT_S,
    )
    reranker = Reranker(settings)
    started = time.monotonic()
    try:
        assert reranker.scores("tea", ["green tea", "coffee"]) is None
    finally:
        reranker.close()
    assert time.monotonic() - started <= TIMEOUT_S + SLACK_S
