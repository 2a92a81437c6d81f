"""Structured logs: one JSON object per line, carrying the job and trace ids."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

import memory_core as mc
from memory_core import inbox
from memory_core.auth import SYSTEM
from memory_core.logs import configure_logging, log_context
from reverie.compose import embedded


@pytest.fixture(autouse=True)
def _restore_root_logger() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_json_logs_are_one_object_per_line_with_context(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging(mc.load_settings(log_format="json", log_level="INFO"))
    log = logging.getLogger("reverie.test")
    with log_context(job="ingest_batch:abc", trace_ids=["mt_1", "mt_2"]):
        log.info("multi\nline %s", "message")
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("failed")
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert first["message"] == "multi\nline message" and first["level"] == "INFO"
    assert first["job"] == "ingest_batch:abc" and first["trace_ids"] == ["mt_1", "mt_2"]
    assert "job" not in second and "ValueError: boom" in second["exception"]


def test_text_logs_stay_plain_with_context_appended(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(mc.load_settings(log_level="INFO"))
    with log_context(job="dream:x"):
        logging.getLogger("reverie.test").info("hello")
    assert capsys.readouterr().err.strip() == "INFO reverie.test: hello job=dream:x"


def test_actor_log_lines_carry_the_job_and_trace_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = mc.load_settings(
        brain_url=f"sqlite:///{tmp_path / 'b.sqlite'}",
        embedder="none",
        log_format="json",
        log_level="INFO",
    )
    configure_logging(settings)
    workers = embedded(settings, threads=1)
    try:
        brain = mc.open_brain(settings)
        turn = inbox.accept_turn(
            brain, inbox.Turn("I like tea.", "ok", "user", "u1"), identity=SYSTEM
        )
        workers.actors.ingest_turn.send(turn.turn_id)
        workers.join()
    finally:
        workers.stop()
    events = [
        json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")
    ]
    ingested = [e for e in events if e["message"].startswith("ingested 1 turn")]
    assert len(ingested) == 1
    assert ingested[0]["job"].startswith("ingest_turn:")
    assert ingested[0]["turn_ids"] == [turn.turn_id]
    assert all(t.startswith("mt_") for t in ingested[0]["trace_ids"])
