"""Requests without a token: refused once a token works, unless an admin granted them
capabilities with ``memctl token anonymous``; the grant is pinned, listed and ended like
a token, and never administers."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator

import httpx
import pytest

import memory_core as mc
from memory_core import auth
from memory_core.auth import SYSTEM
from reverie.compose import Process
from reverie.compose import app as api_app
from tests.api.conftest import serving
from tests.conftest import memctl_in_process

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def memctl(api_settings: mc.Settings) -> Run:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = {"REVERIE_DATA_DIR": str(api_settings.data_dir)}
        return memctl_in_process(["--brain", api_settings.brain_url, *args], env=env)

    return run


@pytest.fixture
def api(api_settings: mc.Settings, workers: Process) -> Iterator[tuple[str, mc.Brain, str]]:
    """A served API whose brain has an admin token and two users' memories."""
    app = api_app(workers)
    with serving(app) as url:
        brain = app.state.brain
        _, admin = auth.create_token(brain, "root", ["admin"], identity=auth.OPEN)
        for user in ("ana", "ben"):
            mc.add_trace(
                brain, f"The {user} garden has heron statues.", scope_id=user, identity=SYSTEM
            )
        yield url, brain, admin


def _search(url: str, **headers: str) -> httpx.Response:
    return httpx.get(f"{url}/v1/search", params={"q": "heron"}, headers=headers, timeout=10)


def _write(url: str) -> httpx.Response:
    body = {"content": "Anyone may write this?", "scope_id": "ana"}
    return httpx.post(f"{url}/v1/memories", json=body, timeout=10)


def test_without_a_grant_a_request_without_a_token_is_refused(
    api: tuple[str, mc.Brain, str],
) -> None:
    url, _, _ = api
    assert _search(url).status_code == 401
    assert _write(url).status_code == 401


def test_a_read_grant_lets_a_search_through_and_refuses_a_write(
    api: tuple[str, mc.Brain, str],
    memctl: Run,
    digest: Callable[[mc.Brain], str],
    workers: Process,
) -> None:
    url, brain, admin = api
    granted = memctl("token", "anonymous", "--can", "read")
    assert granted.returncode == 0, granted.stderr
    assert "may read" in granted.stdout

    found = _search(url)
    assert found.status_code == 200
    assert len(found.json()["results"]) == 2
    workers.join()  # the search's use is counted by a job
    before = digest(brain)
    refused = _write(url)
    assert refused.status_code == 403, refused.text
    assert "anonymous may not write" in refused.json()["error"]["message"]
    assert digest(brain) == before
    assert httpx.get(f"{url}/v1/me", timeout=10).json() == {
        "name": "anonymous",
        "capabilities": ["read"],
        "scope_ids": None,
    }
    # Tokens still work as they did, and the grant is listed beside them.
    assert _search(url, authorization=f"Bearer {admin}").status_code == 200
    listed = json.loads(memctl("--json", "token", "list").stdout)["tokens"]
    assert {t["name"]: t["capabilities"] for t in listed} == {
        "root": ["admin"],
        "anonymous": ["read"],
    }

    ended = memctl("token", "anonymous", "--off")
    assert ended.returncode == 0, ended.stderr
    assert _search(url).status_code == 401


def test_a_pinned_grant_sees_only_its_scope_ids(
    api: tuple[str, mc.Brain, str], memctl: Run
) -> None:
    url, _, _ = api
    assert memctl("token", "anonymous", "--can", "read", "--scope-id", "ana").returncode == 0
    hits = _search(url).json()["results"]
    assert [h["scope_id"] for h in hits] == ["ana"]


def test_the_grant_never_administers_and_is_no_token(
    api: tuple[str, mc.Brain, str], memctl: Run, digest: Callable[[mc.Brain], str]
) -> None:
    url, brain, admin = api
    before = digest(brain)
    r = memctl("token", "anonymous", "--can", "read,admin")
    assert r.returncode != 0 and "may not administer" in r.stderr
    r = memctl("token", "anonymous")
    assert r.returncode != 0 and "give --can" in r.stderr
    assert digest(brain) == before
    assert _search(url).status_code == 401  # nothing was granted

    assert memctl("token", "anonymous", "--can", "read").returncode == 0
    headers = {"authorization": f"Bearer {admin}"}
    made = httpx.post(
        f"{url}/v1/tokens", json={"name": "anonymous", "can": ["read"]}, headers=headers, timeout=10
    )
    assert made.status_code == 409, made.text
    reset = httpx.post(f"{url}/v1/tokens/anonymous/reset", headers=headers, timeout=10)
    assert reset.status_code == 409, reset.text
    # A token-less request acts as the grant, never as the open local operator.
    assert httpx.get(f"{url}/v1/tokens", timeout=10).status_code == 403


def test_with_no_token_but_a_grant_a_loopback_api_still_runs_open(
    api_settings: mc.Settings, workers: Process
) -> None:
    """A grant is no token: with none, the local operator keeps every capability."""
    app = api_app(workers)
    with serving(app) as url:
        auth.grant_anonymous(app.state.brain, ["read"], identity=auth.OPEN)
        assert httpx.get(f"{url}/v1/me", timeout=10).json()["name"] == "open"
