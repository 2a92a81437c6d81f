"""Process on the embedded broker and on a real Redis: the same suite for both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core import inbox
from memory_core.auth import SYSTEM
from reverie.compose import Process, embedded


@pytest.fixture(params=["embedded", "redis"])
def stack(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[mc.Settings, Process]]:
    overrides: dict[str, object] = {
        "brain_url": f"sqlite:///{tmp_path / 'brain.sqlite'}",
        "data_dir": tmp_path / "data",
        "embedder": "stub",
    }
    if request.param == "redis":
        overrides["redis_url"] = request.getfixturevalue("redis_url")
    settings = mc.load_settings(**overrides)
    workers = embedded(settings, threads=2)  # worker threads on either queue
    yield settings, workers
    workers.stop()


def post(brain: mc.Brain, workers: Process, user: str, **kw: object) -> str:
    turn = inbox.Turn(
        user=user,
        assistant=kw.pop("assistant", "ok"),  # type: ignore[arg-type]
        scope="user",
        scope_id="alice",
        **kw,
    )  # type: ignore[arg-type]
    turn_id = inbox.accept_turn(mc.open_brain(brain.settings), turn, identity=SYSTEM).turn_id
    workers.actors.ingest_turn.send(turn_id)
    return turn_id


def test_posted_turns_become_searchable_episodes_facts_and_vectors(
    stack: tuple[mc.Settings, Process],
) -> None:
    settings, workers = stack
    brain = mc.open_brain(settings)
    ids = [post(brain, workers, f"I love hiking in the Alps number {i}.") for i in range(20)]
    workers.join()
    for turn_id in ids:
        assert inbox.turn_status(brain, turn_id, identity=SYSTEM)["status"] == "done"
    hits = mc.search(
        brain,
        "hiking",
        type="episodic",
        limit=100,
        embedder=workers.runtime.query_embedder,
        identity=SYSTEM,
    ).results
    assert len(hits) == 20
    with brain.read() as conn:
        unembedded = conn.execute(
            text(
                "SELECT count(*) FROM memory_traces t WHERE NOT EXISTS (SELECT 1 FROM "
                "trace_embeddings e WHERE e.trace_id = t.id)"
            )
        ).scalar()
        facts = conn.execute(
            text("SELECT count(*) FROM memory_traces WHERE tags LIKE '%auto_ingest%'")
        ).scalar()
        unfollowed = conn.execute(text("SELECT count(*) FROM supersession_pending")).scalar()
    assert unembedded == 0
    assert facts >= 1
    assert unfollowed == 0  # each embed job's supersession ran after it, and cleared its notes


def test_supersession_waits_behind_the_embedding_on_the_same_queue(
    stack: tuple[mc.Settings, Process],
) -> None:
    """A worker runs the messages it holds lowest priority first: every trace's vector
    before the supersession of any (which embeds too, so shares the embed queue)."""
    _, workers = stack
    follow, embed = workers.actors.follow_traces, workers.actors.embed_traces
    assert follow.queue_name == embed.queue_name == "embed"
    assert follow.priority > embed.priority


def test_a_redelivered_ingest_message_is_harmless(stack: tuple[mc.Settings, Process]) -> None:
    settings, workers = stack
    brain = mc.open_brain(settings)
    turn_id = post(brain, workers, "I moved to Lisbon last month.")
    for _ in range(3):
        workers.actors.ingest_turn.send(turn_id)
    workers.join()
    with brain.read() as conn:
        episodes = conn.execute(
            text(
                "SELECT count(*) FROM memory_traces WHERE json_extract(metadata, '$.turn_id') = :t "
                "AND tags LIKE '%\"turn\"%'"
            ),
            {"t": turn_id},
        ).scalar()
    assert episodes == 1


def test_retrieval_feedback_is_recorded_by_a_job(stack: tuple[mc.Settings, Process]) -> None:
    from memory_core.retrieval import feedback

    settings, workers = stack
    brain = mc.open_brain(settings)
    a = mc.add_trace(brain, "walrus facts", identity=SYSTEM)
    workers.actors.record_retrieval.send(feedback.new_event_id(), [a], 1234.0)
    workers.join()
    assert mc.get_trace(brain, a, identity=SYSTEM).retrieval_count == 1


def test_reconcile_picks_up_turns_the_queue_never_got(stack: tuple[mc.Settings, Process]) -> None:
    settings, workers = stack
    brain = mc.open_brain(settings)
    lost = [
        inbox.accept_turn(
            brain, inbox.Turn(f"lost turn {i}", "ok", "user", "alice"), now=1.0, identity=SYSTEM
        ).turn_id
        for i in range(5)
    ]
    unembedded = mc.add_trace(brain, "added while the workers were away", identity=SYSTEM)
    workers.actors.reconcile.send()
    workers.join()
    assert all(inbox.turn_status(brain, t, identity=SYSTEM)["status"] == "done" for t in lost)
    with brain.read() as conn:
        assert (
            conn.execute(
                text("SELECT count(*) FROM trace_embeddings WHERE trace_id = :t"), {"t": unembedded}
            ).scalar()
            == 1
        )


def llm_down_settings(tmp_path: Path, **overrides: object) -> mc.Settings:
    """Settings whose LLM endpoint is a port nothing listens on, failing at once."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    return mc.load_settings(
        brain_url=f"sqlite:///{tmp_path / 'brain.sqlite'}",
        embedder="none",
        llm_base_url=f"http://127.0.0.1:{dead}/v1",
        llm_max_retries=0,
        llm_timeout_s=1.0,
        **overrides,
    )


def test_llm_down_turns_are_still_ingested_and_the_failure_counted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = llm_down_settings(tmp_path, llm_api_key="sk-secret-key")
    workers = embedded(settings, threads=2)
    try:
        brain = mc.open_brain(settings)
        ids = [
            post(brain, workers, f"I prefer window seats on trains, trip {i}.") for i in range(3)
        ]
        workers.join()
    finally:
        workers.stop()
    assert all(inbox.turn_status(brain, t, identity=SYSTEM)["status"] == "done" for t in ids)
    found = mc.search(brain, "window seats", tags=["turn"], embedder=None, identity=SYSTEM)
    assert found.results
    stats = workers.actors.stats
    assert stats["turns_ingested"] == 3
    assert stats["extractor_fallbacks"] == 3 and stats["llm_failures"] == 3
    assert any("falling back" in r.getMessage() for r in caplog.records)
    assert "sk-secret-key" not in caplog.text


def test_an_open_breaker_extracts_offline_without_asking_and_says_so_in_metrics(
    tmp_path: Path,
) -> None:
    from fastapi.testclient import TestClient
    from prometheus_client.parser import text_string_to_metric_families

    from reverie.compose import app as api_app
    from tests.conftest import LOCAL

    settings = llm_down_settings(tmp_path, llm_breaker_failures=1, llm_breaker_probe_s=3600)
    workers = embedded(settings, threads=1)  # one turn at a time: the first opens it
    try:
        brain = mc.open_brain(settings)
        ids = [post(brain, workers, f"I prefer aisle seats, trip {i}.") for i in range(3)]
        workers.join()
        with TestClient(api_app(workers), base_url=LOCAL) as client:
            exposition = client.get("/metrics").text
    finally:
        workers.stop()
    assert all(inbox.turn_status(brain, t, identity=SYSTEM)["status"] == "done" for t in ids)
    stats = workers.actors.stats
    assert stats["extractor_fallbacks"] == 3
    assert stats["llm_failures"] == 1 and stats["llm_skipped"] == 2
    samples = {
        s.name: s.value for f in text_string_to_metric_families(exposition) for s in f.samples
    }
    assert samples["reverie_llm_breaker_open"] == 1
    assert samples["reverie_llm_skipped_total"] >= 2
