"""LoCoMo on the path a user takes: turns posted to the API, questions asked of it.

Each conversation goes into a fresh embedded default (SQLite brain, in-process
workers, the offline extractor and the MiniLM embedder), one utterance at a time
through ``POST /v1/turns`` as a message with its speaker's name, the session's
time and the session as the conversation: nothing the API would not get from an
agent.  Once the workers have ingested and embedded every turn, each question is
asked through ``GET /v1/search`` -- with the retrieval feedback that search
records, as a user's searches do -- and a hit counts for the turn it comes from
(the episode, or a fact drawn from it).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi.testclient import TestClient

import memory_core as mc
from bench.locomo_scoring import QuestionResult, scored
from reverie import compose

if TYPE_CHECKING:
    from bench.locomo import ConfigRun, Conversation, Question

# How long the workers may take over one conversation's turns.
JOIN_TIMEOUT_MS = 900_000
BASE_URL = "http://127.0.0.1:8420"


def post_conversation(client: TestClient, conv: Conversation) -> dict[str, str]:
    """Every utterance of ``conv`` posted as a turn, in order; dia_id by turn id."""
    dia_of: dict[str, str] = {}
    for trace in conv.traces:
        speaker = str(trace.metadata["speaker"])
        said = trace.content.removeprefix(f"{speaker}: ")
        r = client.post(
            "/v1/turns",
            json={
                "messages": [{"role": "user", "content": said, "name": speaker}],
                "scope": "user",
                "scope_id": conv.name,
                "conversation_id": trace.stream,
                "timestamp": trace.occurred_at,
                "idempotency_key": trace.id,
            },
        )
        r.raise_for_status()
        dia_of[r.json()["turn_id"]] = str(trace.metadata["dia_id"])
    return dia_of


def ask(
    client: TestClient, conv: Conversation, question: Question, limit: int, dia_of: dict[str, str]
) -> QuestionResult:
    """One question through the API's search, scored by the turns of its hits."""
    start = time.perf_counter()
    r = client.get("/v1/search", params={"q": question.text, "scope_id": conv.name, "limit": limit})
    latency_ms = (time.perf_counter() - start) * 1000.0
    r.raise_for_status()
    body: dict[str, Any] = r.json()
    hit_ids = [dia_of.get(str(h["metadata"].get("turn_id")), "") for h in body["results"]]
    return scored(conv.name, question, hit_ids, latency_ms, str(body["mode"]))


def run_conversation(
    conv: Conversation, questions: list[Question], run: ConfigRun, limit: int
) -> None:
    """Post one conversation to a fresh embedded default and ask ``questions`` of it."""
    with tempfile.TemporaryDirectory(prefix=f"locomo-real-{conv.name}-") as tmp:
        settings = mc.load_settings(
            brain_url=f"sqlite:///{Path(tmp) / 'brain.sqlite'}",
            data_dir=Path(tmp) / "data",
            **run.config.settings,
        )
        served = compose.embedded(settings)
        try:
            with TestClient(compose.app(served), base_url=BASE_URL) as client:
                start = time.perf_counter()
                dia_of = post_conversation(client, conv)
                served.join(timeout_ms=JOIN_TIMEOUT_MS)
                run.ingest_seconds += time.perf_counter() - start
                start = time.perf_counter()
                for question in questions:
                    run.results.append(ask(client, conv, question, limit, dia_of))
                run.search_seconds += time.perf_counter() - start
        finally:
            served.stop()
