"""The routes a reviewer reads by: a memory's history, tags, dream passes, the caller.

Each is what the console shows, and any client may call: where a memory came
from and what changed it since, every tag renamed at once, what each pass did
and how long each step took, and undoing a whole pass.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi.testclient import TestClient

import memory_core as mc
from memory_core import proposals
from memory_core.auth import SYSTEM, create_token
from memory_core.consolidation.dream import dream
from memory_core.embedders.stub import StubEmbedder
from reverie.compose import Process
from tests.api.conftest import post_turn

DAY = 86_400.0


def _add(client: TestClient, content: str, **body: Any) -> str:
    r = client.post("/v1/memories", json={"content": content, "scope_id": "ana", **body})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _history(client: TestClient, trace_id: str, **headers: str) -> dict[str, Any]:
    r = client.get(f"/v1/memories/{trace_id}/history", headers=headers)
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_an_edit_is_kept_in_the_memorys_history_with_the_words_before(
    client: TestClient,
) -> None:
    trace = _add(client, "Ana runs 5 km on Sundays.")
    r = client.patch(
        f"/v1/memories/{trace}",
        json={"content": "Ana runs 10 km on Sundays."},
        headers={"If-Match": "1"},
    )
    assert r.status_code == 200, r.text
    [change] = _history(client, trace)["changes"]
    assert change["by"] == "edit" and change["step"] == "edit"
    assert change["content_before"] == "Ana runs 5 km on Sundays."
    assert change["version_after"] == 2 and change["undone_at"] is None


def test_a_fact_shows_the_turn_and_episode_it_came_from_and_the_episode_its_facts(
    client: TestClient, workers: Process
) -> None:
    turn = post_turn(client, "I moved to Leeds in May.")
    workers.join()
    listed = client.get("/v1/memories", params={"scope_id": "ana"}).json()["memories"]
    episode = next(t for t in listed if "turn" in t["tags"])
    fact = next(t for t in listed if "turn" not in t["tags"])
    story = _history(client, fact["id"])
    assert story["turns"] == [turn]
    assert [s["id"] for s in story["sources"]] == [episode["id"]]
    assert fact["id"] in [t["id"] for t in _history(client, episode["id"])["cited_by"]]


def test_an_accepted_proposal_shows_in_the_history_of_the_memories_it_changed(
    client: TestClient, api_settings: mc.Settings
) -> None:
    brain: mc.Brain = client.app.state.brain  # type: ignore[attr-defined]
    keep = _add(client, "Ana's sister lives in Lisbon.")
    gone = _add(client, "Ana's sister lives in Lisbon now.")
    draft = proposals.ProposalDraft("merge", [keep, gone], "test", {"cosine": 0.97}, "merge")
    [made] = proposals.create_proposals(brain, api_settings, [draft], None)
    assert client.post(f"/v1/proposals/{made}/accept").status_code == 200
    story = _history(client, gone)
    assert story["trace"]["deleted"] is True  # a merged-away memory's history is still read
    assert [(c["by"], c["unit"]) for c in story["changes"]] == [("proposal", made)]
    assert [p["id"] for p in story["proposals"]] == [made]
    assert story["proposals"][0]["status"] == "accepted"


def test_a_proposal_whose_memory_changed_since_is_listed_as_stale(
    client: TestClient, api_settings: mc.Settings
) -> None:
    brain: mc.Brain = client.app.state.brain  # type: ignore[attr-defined]
    a, b, c = (_add(client, f"Ana's note number {k}.") for k in range(3))
    drafts = [
        proposals.ProposalDraft("prune", [t], "test", {"strength": 0.01}, f"prune {t}")
        for t in (a, b)
    ]
    draft = proposals.ProposalDraft("merge", [b, c], "test", {"cosine": 0.9}, "merge")
    made = proposals.create_proposals(brain, api_settings, [*drafts, draft], None)
    assert client.patch(f"/v1/memories/{b}", json={"tags": ["kept"]}).status_code == 200

    listed = {p["id"]: p for p in client.get("/v1/proposals").json()["proposals"]}
    assert [listed[m]["stale"] for m in made] == [False, True, True]
    assert listed[made[0]]["confidence"] == 0.8  # strength 0.01 of the threshold 0.05
    assert client.post(f"/v1/proposals/{made[1]}/accept").status_code == 409  # as it says


def test_a_statement_shows_what_it_replaced_and_what_replaced_it(
    client: TestClient, workers: Process
) -> None:
    t0 = time.time() - 90 * DAY
    old = post_turn(client, "I work as a nurse.", t0)
    workers.join()  # told in this order (turns ingested out of order: tests/api/test_turn_order.py)
    new = post_turn(client, "I quit nursing, now I am a teacher.", t0 + 60 * DAY)
    workers.join()
    listed = client.get("/v1/memories", params={"scope_id": "ana", "limit": 100}).json()
    by_turn = {t["metadata"]["turn_id"]: t["id"] for t in listed["memories"] if "turn" in t["tags"]}
    # The new statement is its turn or the fact drawn from it, whichever names it.
    of_new = {t["id"] for t in listed["memories"] if t["metadata"].get("turn_id") == new}
    older = _history(client, by_turn[old])
    [successor] = [t["id"] for t in older["replaced_by"]]
    assert successor in of_new
    assert by_turn[old] in [t["id"] for t in _history(client, successor)["replaced"]]


def test_a_tag_is_renamed_everywhere_the_caller_sees_and_nowhere_else(
    client: TestClient,
) -> None:
    brain: mc.Brain = client.app.state.brain  # type: ignore[attr-defined]
    a = _add(client, "Ana's garden has tomatoes.", tags=["garden"])
    b = _add(client, "Ana's garden has beans.", tags=["garden", "veg"])
    c = _add(client, "Ana composts.", tags=["veg"])
    ben = mc.add_trace(
        brain, "Ben's garden is paved.", scope_id="ben", tags=["garden"], identity=SYSTEM
    )
    assert client.get("/v1/tags").json()["tags"] == {"garden": 3, "veg": 2}

    _, anas = create_token(brain, "ana-only", ["read", "write"], ["ana"], identity=mc.OPEN)
    r = client.post(
        "/v1/tags/rename",
        json={"from": "garden", "to": "veg"},
        headers={"Authorization": f"Bearer {anas}"},
    )
    assert r.status_code == 200, r.text
    assert sorted(r.json()["renamed"]) == sorted([a, b])
    tags = {t: mc.get_trace(brain, t, identity=SYSTEM).tags for t in (a, b, c, ben)}
    assert tags == {a: ["veg"], b: ["veg"], c: ["veg"], ben: ["garden"]}  # one "veg" on b
    admin = {
        "Authorization": f"Bearer {create_token(brain, 'root', ['admin'], identity=mc.OPEN)[1]}"
    }
    assert _history(client, b, **admin)["changes"][0]["tags_before"] == ["garden", "veg"]
    r = client.post("/v1/tags/rename", json={"from": "veg", "to": "turn"}, headers=admin)
    assert r.status_code == 403, r.text
    assert "'turn' is a tag the dream passes read" in r.json()["error"]["message"]
    r = client.post("/v1/tags/rename", json={"from": "veg", "to": "veg"}, headers=admin)
    assert r.status_code == 200 and r.json()["renamed"] == []
    r = client.post("/v1/tags/rename", json={"from": "veg"}, headers=admin)
    assert r.status_code == 422, r.text


def test_the_dream_routes_say_what_each_pass_did_and_undo_one(
    client: TestClient, api_settings: mc.Settings
) -> None:
    brain: mc.Brain = client.app.state.brain  # type: ignore[attr-defined]
    copies = [mc.NewTrace("Ana likes plums.", scope_id="ana", type="semantic")] * 2
    ids = mc.add_traces(brain, copies, identity=SYSTEM)
    weak = _add(client, "Ana said hello.", importance=0.1)
    done = dream(brain, api_settings, embedder=StubEmbedder(), now=time.time() + 400 * DAY)
    assert done.count("merge", "merged") == 1

    [listed] = client.get("/v1/dreams").json()["passes"]
    assert listed["pass_id"] == done.pass_id and listed["undoable"] and not listed["undone"]
    assert set(listed["step_seconds"]) >= {"prune", "merge", "derive"}
    assert listed["proposals"] == {"pending": done.count("prune", "proposed")}
    report = client.get(f"/v1/dreams/{done.pass_id}").json()
    assert [s["name"] for s in report["steps"]][:3] == ["embed", "prune", "merge"]
    assert weak in str(report["steps"][1]["items"])

    undone = client.post(f"/v1/dreams/{done.pass_id}/undo")
    assert undone.status_code == 200, undone.text
    assert set(undone.json()["restored"]) & set(ids)
    [after] = client.get("/v1/dreams").json()["passes"]
    assert after["undone"] and not after["undoable"]
    assert client.post(f"/v1/dreams/{done.pass_id}/undo").status_code == 404
    assert client.get("/v1/dreams/dream_nothing").status_code == 404

    _, pinned = create_token(brain, "ana-reader", ["read"], ["ana"], identity=mc.OPEN)
    r = client.get("/v1/dreams", headers={"Authorization": f"Bearer {pinned}"})
    assert r.status_code == 403 and "spans the whole brain" in r.json()["error"]["message"]


def test_me_says_who_the_caller_is(client: TestClient) -> None:
    brain: mc.Brain = client.app.state.brain  # type: ignore[attr-defined]
    assert client.get("/v1/me").json()["name"] == "open"
    _, token = create_token(brain, "agent", ["read", "write"], ["ana"], identity=mc.OPEN)
    r = client.get("/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert r.json() == {"name": "agent", "capabilities": ["read", "write"], "scope_ids": ["ana"]}


def test_a_search_that_only_looks_does_not_count_as_a_use(
    client: TestClient, workers: Process
) -> None:
    trace = _add(client, "Ana is allergic to penicillin.")
    workers.join()
    assert client.get("/v1/search", params={"q": "penicillin", "record": "false"}).json()["results"]
    workers.join()
    assert client.get(f"/v1/memories/{trace}").json()["retrieval_count"] == 0
    assert client.get("/v1/search", params={"q": "penicillin"}).json()["results"]
    workers.join()
    assert client.get(f"/v1/memories/{trace}").json()["retrieval_count"] == 1
