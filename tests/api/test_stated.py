"""A memory's own words give its speaker and time when the caller sends content alone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient

from memory_core.traces.stated import stated

MAY_8 = datetime(2023, 5, 8, tzinfo=UTC).timestamp()
AT_1356 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("content", "speaker", "when"),
    [
        ("Caroline: I went to the support group yesterday.", "Caroline", None),
        ("[2023-05-08 13:56] Ana: my new address is 4 Elm Row.", "Ana", AT_1356),
        ("(1:56 pm on 8 May, 2023) Mel: the kids loved the pottery class", "Mel", AT_1356),
        ("[May 8, 2023] Jo: yes, the vet said Friday", "Jo", MAY_8),
        ("2023-05-08: dentist moved to Thursday", None, MAY_8),
        ("2023-05-08T13:56:00Z - Dr Patel: take 20 mg at night", "Dr Patel", AT_1356),
        ("User (Ana): I work nights now", "Ana", None),
        # A colon after a label, a sentence or a day names nobody.
        ("Note: buy oat milk", None, None),
        ("Reminder: call Mum on Sunday", None, None),
        ("User: I work nights now", None, None),
        ("Tuesday: physio at 9", None, None),
        ("I live in Leeds: it rains a lot", None, None),
        # A bracket that is not a time is not read as one.
        ("[urgent] Ana: call back", None, None),
    ],
)
def test_the_opening_words_give_speaker_and_time(
    content: str, speaker: str | None, when: float | None
) -> None:
    assert stated(content, now=MAY_8 + 86_400 * 365) == (speaker, when)


def test_a_time_still_to_come_is_when_something_is_due_not_when_it_was_said() -> None:
    assert stated("[2023-05-08] Ana: the move is booked", now=MAY_8 - 86_400) == ("Ana", None)


def test_a_memory_added_with_content_alone_takes_them_and_the_callers_win(
    client: TestClient,
) -> None:
    r = client.post(
        "/v1/memories", json={"content": "[2023-05-08 13:56] Ana: I moved to Leeds last week."}
    )
    assert r.status_code == 201, r.text
    assert r.json()["metadata"]["speaker"] == "Ana"
    assert r.json()["occurred_at"] == AT_1356
    given = client.post(
        "/v1/memories",
        json={
            "content": "[2023-05-08 13:56] Ana: I moved to Leeds last week.",
            "metadata": {"speaker": "Bo"},
            "timestamp": "2023-06-01T00:00:00Z",
            "scope_id": "bo",  # the same words in another scope id: a memory of its own
        },
    )
    assert given.json()["metadata"]["speaker"] == "Bo"
    assert given.json()["occurred_at"] == datetime(2023, 6, 1, tzinfo=UTC).timestamp()
    plain = client.post("/v1/tools/memory_add", json={"content": "Mel: the kids loved it."})
    assert plain.status_code == 200, plain.text
    trace = client.get(f"/v1/memories/{plain.json()['traceId']}").json()
    assert trace["metadata"] == {"speaker": "Mel"}
