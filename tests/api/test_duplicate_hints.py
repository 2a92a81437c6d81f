"""A write says what it repeats: the same words again are the memory already kept,
and the memories of the same scope id it may repeat, as the merge verifier judges,
are named beside the stored one."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient


def _add(client: TestClient, content: str, scope_id: str = "ana") -> dict[str, Any]:
    r = client.post("/v1/memories", json={"content": content, "scope_id": scope_id})
    assert r.status_code == 201, r.text
    return dict(r.json())


def test_a_near_duplicate_add_names_the_memory_it_repeats(client: TestClient) -> None:
    first = _add(client, "Ana's sister Maja lives in Lisbon.")
    other = _add(client, "Ana keeps bees in the garden.")
    again = _add(client, "Ana's sister Maja lives in Lisbon, near the river.")
    assert again["id"] not in (first["id"], other["id"])  # it is stored all the same
    [hint] = again["duplicates"]
    assert hint["id"] == first["id"] and hint["kind"] == "near"
    assert 0 < hint["score"] <= 1 and hint["content"] == "Ana's sister Maja lives in Lisbon."
    assert other["duplicates"] == []


def test_the_same_words_again_are_the_same_memory_with_each_occurrence(
    client: TestClient,
) -> None:
    first = _add(client, "Ana's passport expires in March 2027.")
    r = client.post(
        "/v1/memories",
        json={
            "content": "Ana's passport expires in March 2027.",
            "scope_id": "ana",
            "tags": ["travel"],
        },
    )
    assert r.status_code == 200, r.text  # nothing new stored
    again = r.json()
    assert again["id"] == first["id"] and again["existing"] is True
    assert again["tags"] == ["travel"]  # the tags it lacked, added
    assert len(again["metadata"]["occurrences"]) == 2
    page = client.get("/v1/memories", params={"scope_id": "ana"}).json()["memories"]
    assert [m["id"] for m in page if "passport" in m["content"]] == [first["id"]]
    other = _add(client, "Ana's passport expires in March 2027.", scope_id="ben")
    assert other["id"] != first["id"]  # another scope id's words are its own


def test_a_changed_number_date_name_or_negation_is_no_duplicate(client: TestClient) -> None:
    for older, newer in (
        (
            "Ana takes 20 mg of sertraline every morning.",
            "Ana takes 40 mg of sertraline every morning.",
        ),
        ("Ana's dentist appointment is on Monday.", "Ana's dentist appointment is on Friday."),
        ("Ana's manager is called Tomas.", "Ana's manager is called Priya."),
        ("Ana eats meat.", "Ana does not eat meat."),
    ):
        _add(client, older)
        assert _add(client, newer)["duplicates"] == [], newer


def test_another_users_memory_is_never_a_hint(client: TestClient) -> None:
    _add(client, "The spare key is under the blue pot.", scope_id="ben")
    assert _add(client, "The spare key is under the blue pot.")["duplicates"] == []


def test_the_memory_add_tool_answers_the_hint_too(client: TestClient) -> None:
    user = {"X-Reverie-User": "ana"}
    first = client.post(
        "/v1/tools/memory_add", json={"content": "Ana plays the cello in a quartet."}, headers=user
    ).json()
    near = client.post(
        "/v1/tools/memory_add",
        json={"content": "Ana plays the cello in a string quartet."},
        headers=user,
    ).json()
    assert [d["id"] for d in near["duplicates"]] == [first["traceId"]]
    same = client.post(
        "/v1/tools/memory_add", json={"content": "Ana plays the cello in a quartet."}, headers=user
    ).json()
    assert same == {"traceId": first["traceId"], "existing": True}
