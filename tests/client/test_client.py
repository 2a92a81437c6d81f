"""reverie.client against a real ``memctl up``: every call family, typed results, refusals
as exceptions, and isolation of the identity the client speaks for."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from reverie import types
from reverie.client import (
    AsyncClient,
    Client,
    Conflict,
    Forbidden,
    InvalidArgument,
    NotFound,
    Unauthorized,
)
from tests.conftest import memctl_up


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "reverie-home"


@pytest.fixture
def server(home: Path) -> Iterator[str]:
    """``memctl up`` on a free port over a fresh brain in ``home``: its base URL."""
    home.mkdir()
    env = {"REVERIE_HOME": str(home), "REVERIE_EMBEDDER": "stub"}
    with memctl_up(env, home / "up.stderr") as (base, _):
        yield base


def _ingested(memory: Client, turn_id: str) -> types.TurnStatus:
    deadline = time.monotonic() + 30
    while (status := memory.turn(turn_id)).status == "pending":
        assert time.monotonic() < deadline, "the turn was not ingested"
        time.sleep(0.1)
    return status


def test_turns_memories_search_and_listing(server: str) -> None:
    with Client(server, user="ana") as memory:
        posted = memory.post_turn("I keep bees on my roof in Porto.", "How many hives?")
        assert isinstance(posted, types.TurnAccepted) and not posted.duplicate
        assert _ingested(memory, posted.turn_id).status == "done"
        chat = memory.post_turn(
            messages=[
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "My sister Rita is a pilot.", "name": "Ana"},
                {"role": "assistant", "content": "Noted."},
            ]
        )
        _ingested(memory, chat.turn_id)
        added = memory.add("Ana's locker code is 4471.", type="semantic", tags=["codes"])
        assert isinstance(added, types.TraceOut) and added.scope_id == "ana"
        found = memory.search("locker code")
        assert found.results[0].id == added.id
        assert found.results[0].created_at.endswith("Z") and found.results[0].relevance > 0
        loose = "locker combination at the gym"
        assert added.id in {h.id for h in memory.search(loose, min_score=0).results}
        assert memory.search(loose, min_score=0.99).results == []
        updated = memory.update(added.id, content="Ana's locker code is 5512.", version=1)
        assert updated.version == 2
        with pytest.raises(Conflict):
            memory.update(added.id, content="stale", version=1)
        listed = list(memory.iter_memories(limit=2))
        assert added.id in {t.id for t in listed} and len(listed) >= 3
        assert len({t.id for t in listed}) == len(listed)
        assert memory.get(added.id).content == "Ana's locker code is 5512."
        assert memory.delete(added.id).deleted
        with pytest.raises(NotFound):
            memory.get(added.id)
        assert memory.get(added.id, include_deleted=True).deleted


def test_tools_and_isolation_of_the_identity(server: str) -> None:
    with Client(server, user="bea") as bea, Client(server, user="cai") as cai:
        added = bea.call_tool("memory_add", {"content": "Bea's bike is in shed 7."})
        assert cai.call_tool("memory_search", {"query": "bike shed"})["results"] == []
        found = bea.call_tool("memory_search", {"query": "bike shed"})["results"]
        assert [r["id"] for r in found] == [added["traceId"]]
        with pytest.raises(NotFound):
            cai.get(added["traceId"])
        assert {t.name for t in bea.tools()} >= {"memory_add", "memory_search"}
        assert all(t.parameters["type"] == "object" for t in bea.tools())
        with pytest.raises(InvalidArgument) as refused:
            bea.search("x", limit=1000)
        assert refused.value.code == "invalid_argument" and "limit" in refused.value.message
        gone = bea.forget("user", "bea")
        assert gone.traces >= 1 and gone.scope_id == "bea"
        assert bea.search("bike shed").results == []


def test_proposals_and_tokens(server: str) -> None:
    with Client(server) as operator:
        assert operator.proposals() == []
        assert operator.ready().status == "ok"
        with pytest.raises(NotFound):
            operator.decide("pr_nope", "accept")
        made = operator.create_token("ci-agent", ["read", "write"], scope_ids=["dan"])
        assert made.token.startswith("rvt_") and made.scope_ids == ["dan"]
    # Once a token exists, the open API asks for one.
    with Client(server) as anonymous, pytest.raises(Unauthorized):
        anonymous.search("anything")
    with Client(server, made.token) as agent:
        agent.add("Dan plays the oboe.", scope_id="dan")
        assert [h.content for h in agent.search("oboe").results] == ["Dan plays the oboe."]
    with Client(server, made.token) as agent, pytest.raises(Forbidden):
        agent.tokens()


def test_async_client(server: str, home: Path) -> None:
    root = subprocess.run(
        [sys.executable, "-m", "memctl", "token", "create", "async-admin", "--can", "admin"],
        capture_output=True,
        text=True,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")},
            "REVERIE_HOME": str(home),
        },
        check=True,
    ).stdout
    secret = next(w for w in root.split() if w.startswith("rvt_"))

    async def scenario() -> None:
        async with AsyncClient(server, secret, user="eve") as memory:
            posted = await memory.post_turn("I run the Lisbon half marathon in March.", "Nice!")
            assert (await memory.turn(posted.turn_id)).id == posted.turn_id
            added = await memory.add("Eve's bib number is 1208.", scope_id="eve")
            hits = (await memory.search("bib number", limit=3)).results
            assert hits[0].id == added.id
            seen = [t.id async for t in memory.iter_memories(scope_id="eve", limit=1)]
            assert added.id in seen
            with pytest.raises(Forbidden):  # acting for eve: tokens span every user
                await memory.tokens()
        async with AsyncClient(server, secret) as operator:
            assert "async-admin" in {t.name for t in await operator.tokens()}

    anyio.run(scenario)
