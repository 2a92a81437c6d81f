"""With ``REVERIE_REASONER=host``, a turn posted through the real HTTP API has its facts
read by the host agent's own command line: a fake ``claude`` first on PATH that
records each question.  A hung one costs a turn its deadline and then is not asked
while its breaker is open; a malformed answer costs only its own turn."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import memory_core as mc
from reverie.compose import Process, embedded
from reverie.compose import app as api_app
from tests.conftest import LOCAL
from tests.fakes import FakeHostCli

TIMEOUT_S = 2.0
ALICE = {"x-reverie-user": "alice"}


@pytest.fixture
def claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeHostCli:
    fake = FakeHostCli(tmp_path / "claude", "claude")
    fake.on_path(monkeypatch)
    return fake


@pytest.fixture
def served(tmp_path: Path, brain_url: str) -> Iterator[Process]:
    settings = mc.load_settings(
        brain_url=brain_url,
        data_dir=tmp_path / "data",
        embedder="none",
        reasoner="host",
        host_cli="claude",
        host_timeout_s=TIMEOUT_S,
        llm_breaker_failures=1,
        llm_breaker_probe_s=600,
    )
    process = embedded(settings, threads=1)
    yield process
    process.stop()


@pytest.fixture
def client(served: Process) -> Iterator[TestClient]:
    with TestClient(api_app(served), base_url=LOCAL) as c:
        yield c


def ingested(client: TestClient, said: str) -> dict[str, Any]:
    """Post one of alice's turns and wait until it is ingested; its status."""
    r = client.post(
        "/v1/turns", json={"user": said, "assistant": "Nice!", "scope": "user", "scope_id": "alice"}
    )
    assert r.status_code == 202, r.text
    turn_id = r.json()["turn_id"]
    deadline = time.monotonic() + 60
    while (status := client.get(f"/v1/turns/{turn_id}", headers=ALICE).json())["status"] != "done":
        assert time.monotonic() < deadline, status
        time.sleep(0.05)
    return dict(status)


def facts(client: TestClient, query: str) -> list[str]:
    r = client.get("/v1/search", params={"q": query, "tags_expr": "!turn"}, headers=ALICE)
    assert r.status_code == 200, r.text
    return [h["content"] for h in r.json()["results"]]


def test_a_posted_turn_has_its_facts_read_by_the_host_command_line(
    client: TestClient, claude: FakeHostCli
) -> None:
    ingested(client, "I grow chillies on my balcony.")
    assert facts(client, "chillies") == ["The user grows chillies on the balcony."]
    [call] = claude.calls()
    assert "User: I grow chillies on my balcony." in call["stdin"]
    assert "You extract facts" in call["argv"][call["argv"].index("--system-prompt") + 1]


def test_a_hung_command_costs_a_turn_its_deadline_and_then_is_not_asked(
    client: TestClient, claude: FakeHostCli, served: Process
) -> None:
    claude.set("hang")
    first = ingested(client, "I love hiking in the Alps.")
    assert first["processed_at"] - first["created_at"] <= TIMEOUT_S + 1.0
    second = ingested(client, "I prefer window seats on trains.")
    assert second["processed_at"] - second["created_at"] < TIMEOUT_S  # not waited for
    assert len(claude.calls()) == 1  # the breaker is open: the second turn was not asked
    served.join()  # a job counts what it did once it returns, after its turn is done
    assert served.actors.stats["extractor_fallbacks"] == 2
    assert served.actors.stats["llm_skipped"] == 1
    assert facts(client, "hiking Alps") and facts(client, "window seats")  # read offline


def test_a_malformed_answer_falls_back_offline_for_its_turn_alone(
    client: TestClient, claude: FakeHostCli, served: Process
) -> None:
    claude.set("malformed")
    ingested(client, "I love hiking in the Alps.")
    assert any("hiking" in f for f in facts(client, "hiking Alps"))  # the offline reading
    claude.set("good")
    ingested(client, "I grow chillies on my balcony.")
    assert facts(client, "chillies") == ["The user grows chillies on the balcony."]
    assert len(claude.calls()) == 2
    served.join()
    assert served.actors.stats["extractor_fallbacks"] == 1
