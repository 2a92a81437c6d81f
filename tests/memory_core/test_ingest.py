"""The inbox and turn ingestion, without a queue: exactly once, facts deduplicated."""

from __future__ import annotations

import itertools
import threading
from typing import Any

import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core import inbox, ingest
from memory_core.auth import SYSTEM
from memory_core.extraction.base import Extraction, Fact


def facts_of(*items: tuple[str, str]) -> Any:
    def extract(user: str, assistant: str, *, when: float | None = None) -> Extraction:
        return Extraction([Fact(c, cat, 0.8, []) for c, cat in items], "fake")

    return extract


def turn(user: str = "I love green tea.", **kw: Any) -> inbox.Turn:
    base: dict[str, Any] = {"assistant": "Noted!", "scope": "user", "scope_id": "alice"}
    return inbox.Turn(user=user, **{**base, **kw})


def count(brain: mc.Brain, sql: str, **params: Any) -> int:
    with brain.read() as conn:
        return int(conn.execute(text(sql), params).scalar_one())


def test_accepted_turn_is_pending_in_the_inbox_until_ingested(brain: mc.Brain) -> None:
    accepted = inbox.accept_turn(brain, turn(), identity=SYSTEM)
    assert accepted.turn_id.startswith("turn_") and not accepted.duplicate
    assert inbox.turn_status(brain, accepted.turn_id, identity=SYSTEM)["status"] == "pending"
    assert count(brain, "SELECT count(*) FROM memory_traces") == 0


def test_same_idempotency_key_is_accepted_once(brain: mc.Brain) -> None:
    first = inbox.accept_turn(brain, turn(idempotency_key="k1"), identity=SYSTEM)
    again = inbox.accept_turn(
        brain, turn(user="different words", idempotency_key="k1"), identity=SYSTEM
    )
    assert again == inbox.Accepted(first.turn_id, duplicate=True)
    assert count(brain, "SELECT count(*) FROM inbox_turns") == 1


def test_ingest_stores_the_episode_verbatim_and_facts_citing_it(brain: mc.Brain) -> None:
    t = inbox.accept_turn(
        brain,
        turn(conversation_id="c1", timestamp=1_700_000_000.0, metadata={"channel": "web"}),
        identity=SYSTEM,
    )
    report = ingest.ingest_turns(
        brain, [t.turn_id], facts_of(("User loves green tea.", "user_preference"))
    )
    assert report.ingested == [t.turn_id]
    episode_id, fact_id = report.new_trace_ids
    episode = mc.get_trace(brain, episode_id, identity=SYSTEM)
    assert episode.content == "User: I love green tea.\n\nAssistant: Noted!"
    assert (episode.type, episode.scope, episode.scope_id) == ("episodic", "user", "alice")
    assert episode.sources == [{"turn": t.turn_id}]
    assert episode.occurred_at == 1_700_000_000.0
    assert episode.metadata == {"channel": "web", "turn_id": t.turn_id, "conversation_id": "c1"}
    fact = mc.get_trace(brain, fact_id, identity=SYSTEM)
    assert fact.type == "semantic" and fact.tags == ["user_preference", "auto_ingest"]
    assert fact.sources == [{"turn": t.turn_id}, {"trace": episode_id}]
    assert fact.importance == 0.8
    assert inbox.turn_status(brain, t.turn_id, identity=SYSTEM)["status"] == "done"
    assert [
        h.trace.id
        for h in mc.search(
            brain, "green tea", type="semantic", embedder=None, identity=SYSTEM
        ).results
    ] == [fact_id]


def test_a_fact_already_in_the_scope_is_skipped_and_counted(brain: mc.Brain) -> None:
    extract = facts_of(
        ("User loves green tea.", "user_preference"), ("User loves green tea.", "user_preference")
    )
    a = inbox.accept_turn(brain, turn(), identity=SYSTEM)
    b = inbox.accept_turn(brain, turn(user="I really love green tea."), identity=SYSTEM)
    other = inbox.accept_turn(brain, turn(scope_id="bob"), identity=SYSTEM)
    r1 = ingest.ingest_turns(brain, [a.turn_id], extract)
    r2 = ingest.ingest_turns(brain, [b.turn_id, other.turn_id], extract)
    assert r1.duplicates_skipped == 1  # twice in the same turn
    assert r2.duplicates_skipped == 3  # alice's again (x2), bob's second copy
    alice_facts = count(
        brain, "SELECT count(*) FROM memory_traces WHERE type='semantic' AND scope_id='alice'"
    )
    assert alice_facts == 1
    assert count(brain, "SELECT count(*) FROM memory_traces WHERE type='episodic'") == 3


def test_a_forgotten_fact_is_not_brought_back(brain: mc.Brain) -> None:
    extract = facts_of(("User loves green tea.", "user_preference"))
    first = ingest.ingest_turns(
        brain, [inbox.accept_turn(brain, turn(), identity=SYSTEM).turn_id], extract
    )
    mc.delete_trace(brain, first.new_trace_ids[1], identity=SYSTEM)
    again = ingest.ingest_turns(
        brain, [inbox.accept_turn(brain, turn(), identity=SYSTEM).turn_id], extract
    )
    assert again.duplicates_skipped == 1
    assert (
        mc.search(brain, "green tea", type="semantic", embedder=None, identity=SYSTEM).results == []
    )


def test_ingesting_a_done_or_unknown_turn_is_a_no_op(brain: mc.Brain) -> None:
    t = inbox.accept_turn(brain, turn(), identity=SYSTEM)
    ingest.ingest_turns(brain, [t.turn_id], facts_of())
    before = count(brain, "SELECT count(*) FROM memory_traces")
    again = ingest.ingest_turns(brain, [t.turn_id, "turn_nope"], facts_of())
    assert again.already_done == [t.turn_id] and again.missing == ["turn_nope"]
    assert count(brain, "SELECT count(*) FROM memory_traces") == before


def test_one_job_takes_other_pending_turns_along(brain: mc.Brain) -> None:
    ids = [
        inbox.accept_turn(brain, turn(user=f"turn {i}"), identity=SYSTEM).turn_id for i in range(10)
    ]
    report = ingest.ingest_turns(brain, ids[:1], facts_of(), batch_extra=5)
    assert len(report.ingested) == 6
    assert ids[0] in report.ingested


def test_concurrent_ingestion_of_the_same_turns_ingests_each_once(brain: mc.Brain) -> None:
    ids = [
        inbox.accept_turn(brain, turn(user=f"turn {i}"), identity=SYSTEM).turn_id for i in range(60)
    ]
    extract = facts_of(("User said something.", "knowledge"))

    def work(k: int) -> None:
        for turn_id in ids[k::3] + ids:
            ingest.ingest_turns(brain, [turn_id], extract, batch_extra=4)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert count(brain, "SELECT count(*) FROM memory_traces WHERE type='episodic'") == 60
    per_turn = count(
        brain,
        "SELECT max(n) FROM (SELECT count(*) AS n FROM memory_traces "
        "GROUP BY json_extract(metadata, '$.turn_id')) AS per_turn",
    )
    assert per_turn == 2  # one episode, one fact (the fact's hash is per scope: only once)
    assert count(brain, "SELECT count(*) FROM inbox_turns WHERE status='done'") == 60


def test_failures_count_attempts_then_mark_the_turn_failed(brain: mc.Brain) -> None:
    t = inbox.accept_turn(brain, turn(), identity=SYSTEM)
    for _ in range(2):
        inbox.record_failure(brain, [t.turn_id], "boom", max_attempts=3)
    assert inbox.turn_status(brain, t.turn_id, identity=SYSTEM)["status"] == "pending"
    inbox.record_failure(brain, [t.turn_id], "boom", max_attempts=3)
    status = inbox.turn_status(brain, t.turn_id, identity=SYSTEM)
    assert (status["status"], status["attempts"], status["last_error"]) == ("failed", 3, "boom")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"user": " ", "assistant": ""}, "user"),
        ({"scope": "galaxy"}, "scope"),
        ({"scope_id": ""}, "scope_id"),
        ({"idempotency_key": "x" * 300}, "idempotency_key"),
    ],
)
def test_bad_turns_are_refused_naming_the_field(
    brain: mc.Brain, kwargs: dict[str, Any], field: str
) -> None:
    with pytest.raises(mc.InvalidArgument, match=field):
        inbox.accept_turn(brain, turn(**kwargs), identity=SYSTEM)
    assert count(brain, "SELECT count(*) FROM inbox_turns") == 0


def test_stale_pending_lists_only_old_pending_turns(brain: mc.Brain) -> None:
    old = inbox.accept_turn(brain, turn(), now=1.0, identity=SYSTEM)
    inbox.accept_turn(brain, turn(), identity=SYSTEM)
    assert inbox.stale_pending(brain, older_than=60) == [old.turn_id]


def test_retrieval_feedback_applies_once_and_keeps_the_event(brain: mc.Brain) -> None:
    from memory_core.retrieval import feedback

    a, b, c = (mc.add_trace(brain, f"trace {x}", identity=SYSTEM) for x in "abc")
    assert feedback.record_retrieval(brain, "ret_1", [a, b, c], at=500.0)
    assert not feedback.record_retrieval(brain, "ret_1", [a, b, c], at=600.0)
    assert mc.get_trace(brain, a, identity=SYSTEM).retrieval_count == 1
    assert mc.get_trace(brain, a, identity=SYSTEM).last_accessed == 500.0
    with brain.read() as conn:
        events = conn.execute(text("SELECT id, consolidated FROM retrieval_events")).all()
    assert [tuple(e) for e in events] == [("ret_1", 0)]


def test_a_conversations_episodes_form_one_stream(brain: mc.Brain) -> None:
    first = inbox.accept_turn(
        brain, turn("I adopted a beagle.", conversation_id="c1"), identity=SYSTEM
    )
    other = inbox.accept_turn(brain, turn("Unrelated chat.", conversation_id="c2"), identity=SYSTEM)
    second = inbox.accept_turn(
        brain, turn("She is called Miso.", conversation_id="c1"), identity=SYSTEM
    )
    for t in (first, other, second):
        ingest.ingest_turns(brain, [t.turn_id], facts_of())
    episodes = {
        tr.content.split("\n")[0]: tr
        for tr in (
            mc.get_trace(brain, h.trace.id, identity=SYSTEM)
            for h in mc.search(
                brain, "turn", tags=["turn"], limit=10, embedder=None, identity=SYSTEM
            ).results
        )
    }
    a = episodes["User: I adopted a beagle."]
    b = episodes["User: She is called Miso."]
    c = episodes["User: Unrelated chat."]
    assert a.stream == b.stream == "user:alice:c1" and c.stream == "user:alice:c2"
    assert b.prev_seq == a.seq and b.context == a.content
    assert a.prev_seq is None and c.prev_seq is None


def _prev_by_turn(brain: mc.Brain) -> dict[str, tuple[int, int | None]]:
    with brain.read() as conn:
        rows = conn.execute(
            text(
                "SELECT json_extract(metadata, '$.turn_id'), seq, prev_seq FROM memory_traces "
                "WHERE stream IS NOT NULL"
            )
        ).all()
    return {str(r[0]): (int(r[1]), r[2]) for r in rows}


def test_a_batch_committed_together_is_ingested_in_the_order_it_was_posted(
    brain: mc.Brain,
) -> None:
    """Turns accepted in one commit share their acceptance time and have random ids: one
    job ingests them in the order they were posted, each after the turn before it."""
    turns = [turn(user=f"Chapter {k} of the story.") for k in range(40)]
    accepted = inbox.accept_turns(brain, turns, identity=SYSTEM)
    ids = [a.turn_id for a in accepted]
    report = ingest.ingest_turns(brain, [ids[-1]], facts_of(), batch_extra=100)
    assert sorted(report.ingested) == sorted(ids)
    links = _prev_by_turn(brain)
    assert links[ids[0]][1] is None
    assert [links[ids[k]][1] for k in range(1, 40)] == [links[ids[k - 1]][0] for k in range(1, 40)]


def test_a_job_for_a_turn_behind_a_backlog_does_not_write_it_ahead_of_its_conversation(
    brain: mc.Brain,
) -> None:
    """A job for a turn with older turns of its conversation still pending writes those
    first, in the order they were posted, then its own; turns of other conversations
    are not its business (beyond the room ``batch_extra`` leaves)."""
    story = [
        inbox.accept_turn(brain, turn(user=f"Part {k}.", conversation_id="s"), identity=SYSTEM)
        for k in range(80)
    ]
    other = inbox.accept_turn(brain, turn(user="Elsewhere.", conversation_id="o"), identity=SYSTEM)
    late = ingest.ingest_turns(brain, [story[-1].turn_id], facts_of())
    assert late.ingested == [a.turn_id for a in story]
    assert other.turn_id not in late.ingested and late.already_done == []
    links = _prev_by_turn(brain)
    for before, after in itertools.pairwise(story):
        assert links[after.turn_id][1] == links[before.turn_id][0]
    alone = ingest.ingest_turns(brain, [other.turn_id], facts_of(), batch_extra=3)
    assert alone.ingested == [other.turn_id]
