"""Tokens on every route: 401 without a working one, 403 without the capability, tenants apart."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient

import memory_core as mc
from memory_core import auth, proposals
from memory_core.auth import SYSTEM
from memory_core.consolidation.dream import dream
from memory_core.embedders.stub import StubEmbedder
from reverie.compose import Process
from reverie.compose import app as api_app
from tests.conftest import LOCAL

CAPS = ("read", "write", "delete", "dream", "admin")


@dataclass
class World:
    client: TestClient
    brain: mc.Brain
    tokens: dict[str, str]  # name -> token
    trace: str  # an active trace of user alice
    other: str  # a second one, for merges
    turn: str  # a posted turn of alice
    proposals: dict[str, str]  # pending ones to accept and reject, an accepted one to undo
    dream_pass: str  # a pass that merged two copies unattended (undoable)


@pytest.fixture
def world(api_settings: mc.Settings, workers: Process) -> Iterator[World]:
    with TestClient(api_app(workers), base_url=LOCAL) as client:
        brain = client.app.state.brain  # type: ignore[attr-defined]
        tokens = {c: auth.create_token(brain, c, [c], identity=auth.OPEN)[1] for c in CAPS}
        tokens["write+delete"] = auth.create_token(
            brain, "write-delete", ["write", "delete"], identity=auth.OPEN
        )[1]
        trace = mc.add_trace(brain, "Alice keeps bees.", scope_id="alice", identity=SYSTEM)
        other = mc.add_trace(brain, "Alice keeps hens.", scope_id="alice", identity=SYSTEM)
        admin = {"Authorization": f"Bearer {tokens['admin']}"}
        turn = client.post(
            "/v1/turns",
            json={"user": "hi", "assistant": "hello", "scope": "user", "scope_id": "alice"},
            headers=admin,
        ).json()["turn_id"]
        workers.join()
        settings = client.app.state.settings  # type: ignore[attr-defined]
        ids = [
            mc.add_trace(brain, f"Alice note {k}.", scope_id="alice", identity=SYSTEM)
            for k in range(3)
        ]
        drafts = [
            proposals.ProposalDraft("prune", [t], "test", {"strength": 0.01}, f"prune {t}")
            for t in ids
        ]
        made = proposals.create_proposals(brain, settings, drafts, None)
        proposals.accept(brain, settings, [made[2]])
        pending = {"accept": made[0], "reject": made[1], "undo": made[2]}
        copies = [mc.NewTrace("Alice likes plums.", scope_id="alice")] * 2
        mc.add_traces(brain, copies, identity=SYSTEM)
        done = dream(brain, settings, embedder=StubEmbedder())
        assert done.count("merge", "merged") == 1
        yield World(client, brain, tokens, trace, other, turn, pending, done.pass_id)


Call = Callable[[World, dict[str, str]], Any]


def _tool(name: str, args: Callable[[World], dict[str, Any]]) -> Call:
    return lambda w, h: w.client.post(f"/v1/tools/{name}", json=args(w), headers=h)


DECISIONS = ("accept", "reject", "undo")


def _decide(act: str) -> Call:
    return lambda w, h: w.client.post(f"/v1/proposals/{w.proposals[act]}/{act}", headers=h)


# (route, what it needs, how to call it)
ROUTES: list[tuple[str, tuple[str, ...], Call]] = [
    (
        "POST /v1/turns",
        ("write",),
        lambda w, h: w.client.post(
            "/v1/turns",
            json={"user": "u", "assistant": "a", "scope": "user", "scope_id": "alice"},
            headers=h,
        ),
    ),
    ("GET /v1/turns/{id}", ("read",), lambda w, h: w.client.get(f"/v1/turns/{w.turn}", headers=h)),
    (
        "POST /v1/memories",
        ("write",),
        lambda w, h: w.client.post("/v1/memories", json={"content": "x"}, headers=h),
    ),
    (
        "GET /v1/memories/{id}",
        ("read",),
        lambda w, h: w.client.get(f"/v1/memories/{w.trace}", headers=h),
    ),
    (
        "PATCH /v1/memories/{id}",
        ("write",),
        lambda w, h: w.client.patch(f"/v1/memories/{w.trace}", json={"tags": ["t"]}, headers=h),
    ),
    (
        "DELETE /v1/memories/{id}",
        ("delete",),
        lambda w, h: w.client.delete(f"/v1/memories/{w.trace}", headers=h),
    ),
    (
        "POST /v1/memories/merge",
        ("write", "delete"),
        lambda w, h: w.client.post(
            "/v1/memories/merge", json={"ids": [w.trace, w.other]}, headers=h
        ),
    ),
    ("GET /v1/search", ("read",), lambda w, h: w.client.get("/v1/search?q=bees", headers=h)),
    ("GET /v1/tools", (), lambda w, h: w.client.get("/v1/tools", headers=h)),
    ("tool memory_add", ("write",), _tool("memory_add", lambda w: {"content": "x"})),
    (
        "tool memory_update",
        ("write",),
        _tool("memory_update", lambda w: {"traceId": w.trace, "tags": ["t"]}),
    ),
    ("tool memory_delete", ("delete",), _tool("memory_delete", lambda w: {"traceId": w.trace})),
    (
        "tool memory_merge",
        ("write", "delete"),
        _tool("memory_merge", lambda w: {"traceIds": [w.trace, w.other]}),
    ),
    ("tool memory_search", ("read",), _tool("memory_search", lambda w: {"query": "bees"})),
    ("tool memory_reflect", ("dream",), _tool("memory_reflect", lambda w: {})),
    ("GET /metrics", ("read",), lambda w, h: w.client.get("/metrics", headers=h)),
    ("GET /v1/proposals", ("read",), lambda w, h: w.client.get("/v1/proposals", headers=h)),
    *[(f"POST /v1/proposals/{{id}}/{act}", ("dream",), _decide(act)) for act in DECISIONS],
    (
        "GET /v1/memories/{id}/history",
        ("read",),
        lambda w, h: w.client.get(f"/v1/memories/{w.trace}/history", headers=h),
    ),
    ("GET /v1/tags", ("read",), lambda w, h: w.client.get("/v1/tags", headers=h)),
    (
        "POST /v1/tags/rename",
        ("write",),
        lambda w, h: w.client.post("/v1/tags/rename", json={"from": "a", "to": "b"}, headers=h),
    ),
    ("GET /v1/me", (), lambda w, h: w.client.get("/v1/me", headers=h)),
    ("GET /v1/dreams", ("read",), lambda w, h: w.client.get("/v1/dreams", headers=h)),
    (
        "GET /v1/dreams/{id}",
        ("read",),
        lambda w, h: w.client.get(f"/v1/dreams/{w.dream_pass}", headers=h),
    ),
    (
        "POST /v1/dreams/{id}/undo",
        ("dream",),
        lambda w, h: w.client.post(f"/v1/dreams/{w.dream_pass}/undo", headers=h),
    ),
    ("GET /v1/tokens", ("admin",), lambda w, h: w.client.get("/v1/tokens", headers=h)),
    (
        "POST /v1/tokens",
        ("admin",),
        lambda w, h: w.client.post("/v1/tokens", json={"name": "new", "can": ["read"]}, headers=h),
    ),
    (
        "POST /v1/tokens/{name}/revoke",
        ("admin",),
        lambda w, h: w.client.post("/v1/tokens/dream/revoke", headers=h),
    ),
    (
        "POST /v1/tokens/{name}/reset",
        ("admin",),
        lambda w, h: w.client.post("/v1/tokens/dream/reset", headers=h),
    ),
]
ROUTE_IDS = [r[0] for r in ROUTES]


def secret_of(token: str) -> str:
    return token[len("rvt_") + 17 :]  # after rvt_<16 hex>_


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def granted(holder: str, needs: tuple[str, ...]) -> bool:
    held = set(holder.split("+"))
    return "admin" in held or set(needs) <= held


def state(w: World) -> tuple[str, list[Any]]:
    """The brain's content and the token table: what a refusal must leave alone."""
    from tests.conftest import brain_digest

    return brain_digest(w.brain), [
        t.to_dict() for t in auth.list_tokens(w.brain, identity=auth.OPEN)
    ]


@pytest.mark.parametrize(("route", "needs", "do"), ROUTES, ids=ROUTE_IDS)
def test_each_capability_is_allowed_where_granted_and_refused_where_not(
    world: World, route: str, needs: tuple[str, ...], do: Call
) -> None:
    for holder in ("read", "write", "delete", "dream", "write+delete"):
        if granted(holder, needs):
            continue
        before = state(world)
        r = do(world, bearer(world.tokens[holder]))
        assert r.status_code == 403, (route, holder, r.status_code, r.text)
        assert r.json()["error"]["code"] == "forbidden"
        assert state(world) == before, (route, holder)
    allowed = next(
        h
        for h in ("read", "write", "delete", "dream", "write+delete", "admin")
        if granted(h, needs)
    )
    r = do(world, bearer(world.tokens[allowed]))
    assert r.status_code < 300, (route, allowed, r.status_code, r.text)


@pytest.mark.parametrize(("route", "needs", "do"), ROUTES, ids=ROUTE_IDS)
def test_without_a_working_token_every_route_answers_401_and_changes_nothing(
    world: World, route: str, needs: tuple[str, ...], do: Call
) -> None:
    auth.revoke_token(world.brain, "read", identity=auth.OPEN)
    revoked = world.tokens["read"]
    token_id = world.tokens["admin"].split("_")[1]
    wrong = f"rvt_{token_id}_{'A' * 43}"
    for headers in (
        {},
        bearer("rvt_nonsense"),
        bearer(wrong),
        bearer(revoked),
        {"Authorization": f"Basic {world.tokens['admin']}"},
        {"Authorization": world.tokens["admin"]},
    ):
        before = state(world)
        r = do(world, headers)
        assert r.status_code == 401, (route, headers, r.status_code, r.text)
        assert r.json()["error"]["code"] == "unauthorized"
        assert r.headers["www-authenticate"].startswith("Bearer")
        assert state(world) == before


def test_health_checks_answer_without_a_token(world: World) -> None:
    assert world.client.get("/healthz").status_code == 200
    assert world.client.get("/readyz").status_code == 200


def test_a_token_made_over_http_works_once_and_is_never_listed(world: World) -> None:
    admin = bearer(world.tokens["admin"])
    made = world.client.post(
        "/v1/tokens", json={"name": "reader", "can": ["read"]}, headers=admin
    ).json()
    assert world.client.get("/v1/search?q=bees", headers=bearer(made["token"])).status_code == 200
    listed = world.client.get("/v1/tokens", headers=admin).text
    assert made["token"] not in listed and secret_of(made["token"]) not in listed
    reset = world.client.post("/v1/tokens/reader/reset", headers=admin).json()
    assert world.client.get("/v1/search?q=x", headers=bearer(made["token"])).status_code == 401
    assert world.client.get("/v1/search?q=x", headers=bearer(reset["token"])).status_code == 200


# -- tenants ----------------------------------------------------------------------


@pytest.fixture
def tenants(world: World) -> tuple[dict[str, str], dict[str, str]]:
    caps = ["read", "write", "delete"]
    alice = bearer(
        auth.create_token(world.brain, "alice-app", caps, ["alice"], identity=auth.OPEN)[1]
    )
    bob = bearer(auth.create_token(world.brain, "bob-app", caps, ["bob"], identity=auth.OPEN)[1])
    return alice, bob


def test_pinned_identities_never_reach_each_others_traces(
    world: World, tenants: tuple[dict[str, str], dict[str, str]]
) -> None:
    alice, bob = tenants
    c = world.client
    mine = c.post("/v1/memories", json={"content": "Bob's locker code is 4711"}, headers=bob).json()
    assert mine["scope_id"] == "bob"  # a pinned identity writes to its scope id
    guessed = mine["id"]
    before = mc.get_trace(world.brain, guessed, identity=SYSTEM)
    assert c.get(f"/v1/memories/{guessed}", headers=alice).status_code == 404
    assert c.get(f"/v1/memories/{guessed}?include_deleted=true", headers=alice).status_code == 404
    assert (
        c.patch(f"/v1/memories/{guessed}", json={"tags": ["x"]}, headers=alice).status_code == 404
    )
    assert c.delete(f"/v1/memories/{guessed}", headers=alice).status_code == 404
    merge = {"ids": [guessed, world.trace]}
    assert c.post("/v1/memories/merge", json=merge, headers=alice).status_code == 404

    def ids(r: Any) -> set[str]:
        return {h["id"] for h in r.json()["results"]}

    assert guessed not in ids(c.get("/v1/search?q=locker", headers=alice))
    assert ids(c.get("/v1/search?q=locker&scope_id=bob", headers=alice)) == set()
    for name, args in (
        ("memory_update", {"traceId": guessed, "content": "mine now"}),
        ("memory_delete", {"traceId": guessed}),
        ("memory_merge", {"traceIds": [guessed, world.trace]}),
        ("memory_search", {"query": "locker"}),
    ):
        r = c.post(f"/v1/tools/{name}", json=args, headers=alice).json()
        assert guessed not in {h["id"] for h in r.get("results", [])}, (name, r)
        assert r.get("updated", False) is False and r.get("deleted", False) is False, (name, r)
    after = mc.get_trace(world.brain, guessed, identity=SYSTEM)
    assert (after.version, after.content, after.tags, after.deleted) == (
        before.version,
        before.content,
        before.tags,
        False,
    )
    assert not mc.get_trace(
        world.brain, world.trace, identity=SYSTEM
    ).deleted  # no merge happened either
    found = c.get("/v1/search?q=locker", headers=bob).json()["results"]
    assert [h["id"] for h in found] == [guessed]


def test_pinned_identities_write_only_their_scope_ids(
    world: World, tenants: tuple[dict[str, str], dict[str, str]]
) -> None:
    alice, _ = tenants
    c = world.client
    before = state(world)
    r = c.post("/v1/memories", json={"content": "x", "scope_id": "bob"}, headers=alice)
    assert r.status_code == 403
    turn = {"user": "u", "assistant": "a", "scope": "user", "scope_id": "bob"}
    assert c.post("/v1/turns", json=turn, headers=alice).status_code == 403
    tool = c.post(
        "/v1/tools/memory_add", json={"content": "x"}, headers={**alice, "X-Reverie-User": "bob"}
    )
    assert tool.status_code == 403
    assert state(world) == before
    assert c.get(f"/v1/turns/{world.turn}", headers=tenants[1]).status_code == 404
    assert c.get(f"/v1/turns/{world.turn}", headers=alice).status_code == 200
    assert c.get("/metrics", headers=alice).status_code == 403  # counts span every tenant


# -- open mode ----------------------------------------------------------------------


def test_with_no_token_a_loopback_api_answers_without_auth(client: TestClient) -> None:
    assert client.get("/v1/search?q=x").status_code == 200
    brain = client.app.state.brain  # type: ignore[attr-defined]
    auth.create_token(brain, "first", ["read"], identity=auth.OPEN)
    assert client.get("/v1/search?q=x").status_code == 401  # a token exists: auth is on


def test_an_api_for_another_address_never_answers_without_a_token(
    api_settings: mc.Settings, workers: Process
) -> None:
    from reverie.api.auth import check_bind

    with TestClient(api_app(workers, host="0.0.0.0")) as client:
        assert client.get("/v1/search?q=x").status_code == 401
        brain = client.app.state.brain  # type: ignore[attr-defined]
        with pytest.raises(mc.ConfigError, match=r"refusing to listen on 0\.0\.0\.0 without auth"):
            check_bind(brain, "0.0.0.0")
        auth.create_token(brain, "ops", ["admin"], identity=auth.OPEN)
        check_bind(brain, "0.0.0.0")  # with a token, it may
        auth.revoke_token(brain, "ops", identity=auth.OPEN)
        assert client.get("/v1/search?q=x").status_code == 401


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost", "127.8.9.1"])
def test_loopback_addresses_are_recognised(host: str) -> None:
    from reverie.api.auth import is_loopback

    assert is_loopback(host)
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")


# -- secrets stay secret ----------------------------------------------------------------


def test_tokens_never_appear_in_logs_or_metrics(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = f"rvt_{'0' * 16}_{'B' * 43}"
    for token in (*world.tokens.values(), wrong, "rvt_broken"):
        for do in (r[2] for r in ROUTES):
            do(world, bearer(token))
    exposition = world.client.get("/metrics", headers=bearer(world.tokens["admin"])).text
    secrets = [secret_of(t) for t in world.tokens.values()]
    for text in (caplog.text, exposition):
        for token in (*world.tokens.values(), wrong):
            assert token not in text
        for secret in secrets:
            assert secret not in text


def test_secrets_are_compared_in_constant_time(
    brain: mc.Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hmac

    compared: list[tuple[str, str]] = []
    real = hmac.compare_digest

    def spy(a: str, b: str) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    _, token = auth.create_token(brain, "t", ["read"], identity=auth.OPEN)
    assert auth.authenticate(brain, token).name == "t"
    token_id = token.split("_")[1]
    for bad in (f"rvt_{token_id}_{'C' * 43}", f"rvt_{'f' * 16}_{'C' * 43}"):
        with pytest.raises(mc.Unauthorized):
            auth.authenticate(brain, bad)
    assert len(compared) == 3  # right, wrong secret, unknown id: each one comparison
    with brain.read() as conn:
        stored = conn.exec_driver_sql("SELECT secret_sha256 FROM tokens").scalar()
    assert stored != token and secret_of(token) not in str(stored)
