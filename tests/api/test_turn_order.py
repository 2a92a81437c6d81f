"""Turns of a conversation are ingested in the order they were posted, so each turn's
previous-turn context is the turn before it."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import text

import memory_core as mc
from memory_core.brain.schema import FTS_TABLE
from reverie.compose import Process
from tests.api.conftest import post_turn


def _episodes_in_stream_order(brain: mc.Brain) -> list[tuple[int, int | None, str, str]]:
    with brain.read() as conn:
        rows = conn.execute(
            text(
                "SELECT seq, prev_seq, json_extract(metadata, '$.turn_id'), context "
                "FROM memory_traces WHERE stream IS NOT NULL ORDER BY seq"
            )
        ).all()
    return [(int(r[0]), r[1], str(r[2]), str(r[3])) for r in rows]


def test_turns_posted_while_workers_ingest_each_follow_the_turn_before(
    client: TestClient, workers: Process, api_settings: mc.Settings
) -> None:
    posted = _post_story(client)
    workers.join()
    _assert_each_follows_the_one_before(api_settings, posted)


def _post_story(client: TestClient) -> list[str]:
    posted = []
    for k in range(200):
        posted.append(_post_message(client, k))
    return posted


def _post_message(client: TestClient, k: int, at: float | None = None) -> str:
    """Message ``k`` of the story, said at ``at`` (none: when it arrives)."""
    return post_turn(
        client,
        f"Message number {k} of the story.",
        at,
        assistant=f"Reply {k}.",
        conversation_id="story",
    )


def _assert_each_follows_the_one_before(settings: mc.Settings, posted: list[str]) -> None:
    brain = mc.open_brain(settings)
    episodes = _episodes_in_stream_order(brain)
    by_turn = {turn_id: (seq, prev) for seq, prev, turn_id, _ in episodes}
    assert len(by_turn) == 200
    wrong = [k for k in range(1, 200) if by_turn[posted[k]][1] != by_turn[posted[k - 1]][0]]
    assert wrong == [], f"{len(wrong)} turns follow another than the turn posted before"
    assert by_turn[posted[0]][1] is None
    contexts = {turn_id: context for _, _, turn_id, context in episodes}
    assert contexts[posted[57]].startswith("User: Message number 56 of the story.")


def test_a_turn_posted_late_goes_between_the_turns_it_was_said_between(
    client: TestClient, workers: Process, api_settings: mc.Settings
) -> None:
    """Turns of one conversation posted out of order (concurrent clients, a late
    retry), each ingested before the next arrives: each follows the turn said before
    it, and the turn said after it follows it."""
    said_at = {0: 1_700_000_000, 1: 1_700_000_060, 2: 1_700_000_120, 3: 1_700_000_180}
    turn_of = {}
    for k in (2, 0, 3, 1):  # the order they arrive in
        turn_of[k] = _post_message(client, k, said_at[k])
        workers.join()
    episodes = _episodes_in_stream_order(mc.open_brain(api_settings))
    by_turn = {turn_id: (seq, prev, context) for seq, prev, turn_id, context in episodes}
    assert by_turn[turn_of[0]][1] is None
    for k in (1, 2, 3):
        _, prev, context = by_turn[turn_of[k]]
        assert prev == by_turn[turn_of[k - 1]][0], f"turn {k} follows another"
        assert context.startswith(f"User: Message number {k - 1} of the story.")
    # The full-text index holds each turn's new context: it matches the traces it indexes.
    with mc.open_brain(api_settings).transaction() as conn:
        conn.execute(text(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('integrity-check')"))
