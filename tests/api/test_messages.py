"""A turn as a chat's message list (the OpenAI shape): kept verbatim with who said what;
only the user's messages are mined for facts."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

import memory_core as mc
from reverie.compose import Process

MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant. I prefer dark mode in every app."},
    {"role": "user", "content": "I am allergic to penicillin.", "name": "Ana"},
    {"role": "assistant", "content": "Noted: no penicillin."},
    {"role": "tool", "content": "I prefer tabs over spaces."},
]


def _traces(settings: mc.Settings, turn_id: str) -> list[Any]:
    with mc.open_brain(settings).read() as conn:
        return conn.execute(
            text(
                "SELECT content, tags FROM memory_traces WHERE EXISTS (SELECT 1 FROM "
                "json_each(sources) WHERE json_extract(value, '$.turn') = :t) ORDER BY seq"
            ),
            {"t": turn_id},
        ).all()


def test_a_message_list_is_ingested_with_each_speaker_kept(
    client: TestClient, api_settings: mc.Settings, workers: Process
) -> None:
    r = client.post("/v1/turns", json={"messages": MESSAGES, "scope": "user", "scope_id": "ana"})
    assert r.status_code == 202, r.text
    workers.join()
    turn_id = r.json()["turn_id"]
    assert client.get(f"/v1/turns/{turn_id}").json()["status"] == "done"
    rows = _traces(api_settings, turn_id)
    episode = next(r.content for r in rows if '"turn"' in r.tags)
    assert episode.split("\n\n") == [
        "System: You are a helpful assistant. I prefer dark mode in every app.",
        "User (Ana): I am allergic to penicillin.",
        "Assistant: Noted: no penicillin.",
        "Tool: I prefer tabs over spaces.",
    ]
    facts = [r.content for r in rows if '"turn"' not in r.tags]
    # The user's words are mined, as said by the one who said them.
    assert "Ana: I am allergic to penicillin." in facts
    assert not any("dark mode" in f or "tabs" in f for f in facts)  # system, tool: never
    hits = client.get("/v1/search", params={"q": "penicillin", "scope_id": "ana"}).json()
    assert hits["results"]
    assert all(h["metadata"]["speaker"] == "Ana" for h in hits["results"])


def test_a_message_that_opens_with_its_speakers_name_is_labelled_once(
    client: TestClient, api_settings: mc.Settings, workers: Process
) -> None:
    said = [
        {
            "role": "user",
            "content": "Jon: I'm reading The Lean Startup by Eric Ries.",
            "name": "Jon",
        }
    ]
    r = client.post("/v1/turns", json={"messages": said, "scope": "user", "scope_id": "jon"})
    assert r.status_code == 202, r.text
    workers.join()
    facts = [
        row.content
        for row in _traces(api_settings, r.json()["turn_id"])
        if '"turn"' not in row.tags
    ]
    assert facts == ["Jon: I'm reading The Lean Startup by Eric Ries."]


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "wizard", "content": "x"}]}, "role"),
        ({"messages": [{"role": "user"}]}, "content"),
        ({"messages": MESSAGES, "user": "x", "assistant": "y"}, "not both"),
        ({"user": "only the user"}, "required"),
        ({"messages": [{"role": "user", "content": "  "}]}, "empty"),
    ],
)
def test_a_malformed_message_list_is_refused_and_changes_nothing(
    client: TestClient, api_settings: mc.Settings, body: dict[str, Any], needle: str
) -> None:
    r = client.post("/v1/turns", json={**body, "scope": "user", "scope_id": "ana"})
    assert r.status_code == 422, r.text
    assert needle in r.json()["error"]["message"]
    with mc.open_brain(api_settings).read() as conn:
        assert conn.execute(text("SELECT count(*) FROM inbox_turns")).scalar_one() == 0
