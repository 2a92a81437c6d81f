"""Proposals: filed with evidence, applied only with compare-and-set, crash-safe."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core import proposals as p
from memory_core.auth import SYSTEM
from memory_core.retrieval.feedback import new_event_id, record_retrieval

Digest = Callable[[mc.Brain], str]
T0 = 1_800_000_000.0
DAY = 86_400.0


def folder(settings: mc.Settings, status: str) -> Path:
    return settings.data_dir / "proposals" / status


def prune(trace_id: str) -> p.ProposalDraft:
    return p.ProposalDraft("prune", [trace_id], "decayed", {"strength": 0.01}, f"prune {trace_id}")


def merge(*ids: str, content: str | None = None) -> p.ProposalDraft:
    return p.ProposalDraft("merge", list(ids), "near duplicate", {"cosine": 0.97}, "merge", content)


def create(brain: mc.Brain, settings: mc.Settings, *drafts: p.ProposalDraft, now: float = T0):
    return p.create_proposals(brain, settings, list(drafts), "pass_1", now=now)


def ledger(brain: mc.Brain, pid: str) -> Any:
    with brain.read() as conn:
        return conn.execute(text("SELECT * FROM proposals WHERE id = :id"), {"id": pid}).one()


def files(settings: mc.Settings) -> dict[str, list[str]]:
    """Every file under proposals/, by folder (hidden temporary files included)."""
    root = settings.data_dir / "proposals"
    return {
        d.name: sorted(f.name for f in d.iterdir()) for d in sorted(root.iterdir()) if d.is_dir()
    }


# -- creating ----------------------------------------------------------------


def test_create_files_one_document_and_one_ledger_row_per_proposal(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    a = mc.add_trace(brain, "User likes tea.", tags=["drink"], scope_id="u1", identity=SYSTEM)
    b = mc.add_trace(brain, "User likes green tea.", identity=SYSTEM)
    [prune_id, merge_id] = create(brain, settings, prune(a), merge(a, b))
    assert files(settings) == {"pending": sorted([f"{prune_id}.json", f"{merge_id}.json"])}
    path = folder(settings, "pending") / f"{merge_id}.json"
    doc = json.loads(path.read_text())
    assert doc["id"] == merge_id and doc["kind"] == "merge" and doc["pass_id"] == "pass_1"
    assert doc["created_at"].startswith("2027-01-15T08:00:00")
    assert (
        doc["subject_key"] == p.subject_key("merge", [b, a]) == f"merge:{','.join(sorted([a, b]))}"
    )
    assert (doc["reason"], doc["scores"], doc["summary"]) == (
        "near duplicate",
        {"cosine": 0.97},
        "merge",
    )
    assert doc["merged_content"] == "User likes tea."  # the survivor's, by default
    assert f"memctl proposals accept {merge_id}" in doc["how_to_decide"]
    first = doc["traces"][0]
    trace = mc.get_trace(brain, a, identity=SYSTEM)
    assert first == {
        "id": a,
        "content": "User likes tea.",
        "content_hash": trace.content_hash,
        "version": 1,
        "type": "episodic",
        "scope": "user",
        "scope_id": "u1",
        "tags": ["drink"],
        "retrieval_count": 0,
        "strength": 1.0,
        "importance": 0.5,
        "occurred_at": trace.occurred_at,
        "created_at": trace.created_at,
    }
    row = ledger(brain, merge_id)
    assert (row.kind, row.status, row.pass_id, row.created_at) == ("merge", "pending", "pass_1", T0)
    assert row.file_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert row.subject_key == doc["subject_key"] and row.decided_at is None


def test_create_drops_drafts_naming_a_deleted_or_missing_trace(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    a = mc.add_trace(brain, "kept", identity=SYSTEM)
    gone = mc.add_trace(brain, "gone", identity=SYSTEM)
    mc.delete_trace(brain, gone, identity=SYSTEM)
    ids = create(brain, settings, prune(gone), merge(a, gone), prune("mt_missing"), prune(a))
    assert len(ids) == 1
    assert p.get_proposal(brain, settings, ids[0])["traces"][0]["id"] == a


def test_create_drops_a_merge_whose_first_trace_would_not_survive(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    a = mc.add_trace(brain, "rarely used", identity=SYSTEM)
    b = mc.add_trace(brain, "often used", identity=SYSTEM)
    record_retrieval(brain, new_event_id(), [b])
    assert create(brain, settings, merge(a, b)) == []
    assert len(create(brain, settings, merge(b, a))) == 1


def test_drafts_are_validated_when_made() -> None:
    with pytest.raises(mc.InvalidArgument, match="prune, merge, conflict or rewrite"):
        p.ProposalDraft("delete", ["mt_a"], "r", {}, "s")
    with pytest.raises(mc.InvalidArgument, match="two traces"):
        p.ProposalDraft("conflict", ["mt_a", "mt_b", "mt_c"], "r", {}, "s")
    with pytest.raises(mc.InvalidArgument, match="two"):
        merge("mt_a")
    with pytest.raises(mc.InvalidArgument, match="distinct"):
        merge("mt_a", "mt_a")
    with pytest.raises(mc.InvalidArgument, match="summary"):
        p.ProposalDraft("prune", ["mt_a"], "r", {}, "  \n")
    with pytest.raises(mc.InvalidArgument, match="finite"):
        p.ProposalDraft("prune", ["mt_a"], "r", {"s": float("nan")}, "s")


def test_filter_new_drops_pending_subjects_and_repeats_within_a_batch(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    a, b, c = (mc.add_trace(brain, f"trace {i}", identity=SYSTEM) for i in range(3))
    create(brain, settings, merge(a, b))
    drafts = [merge(b, a), prune(c), prune(c), merge(a, c)]
    kept = p.filter_new(brain, settings, drafts, now=T0 + 1)
    assert kept == [drafts[1], drafts[3]]
    assert len(create(brain, settings, *drafts, now=T0 + 1)) == 2  # create filters too


# -- reading -----------------------------------------------------------------


def test_list_is_oldest_first_with_ages_and_show_adds_status(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    a, b = mc.add_trace(brain, "a", identity=SYSTEM), mc.add_trace(brain, "b", identity=SYSTEM)
    [late] = create(brain, settings, prune(b), now=T0 + 60)
    [early] = create(brain, settings, prune(a), now=T0)
    listed = p.list_proposals(brain, settings, now=T0 + 100, identity=SYSTEM)
    assert [(i.id, i.kind, i.age_seconds, i.pass_id) for i in listed] == [
        (early, "prune", 100.0, "pass_1"),
        (late, "prune", 40.0, "pass_1"),
    ]
    shown = p.get_proposal(brain, settings, early)
    assert (shown["status"], shown["edited"], shown["decided_at"]) == ("pending", False, None)
    assert shown["file"] == f"proposals/pending/{early}.json"  # in the data folder
    assert (settings.data_dir / shown["file"]).is_file()
    assert p.list_proposals(brain, settings, "accepted", identity=SYSTEM) == []
    assert len(p.list_proposals(brain, settings, "all", identity=SYSTEM)) == 2


def test_a_caller_pinned_to_scope_ids_lists_only_proposals_all_of_whose_traces_it_sees(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    alice = mc.add_trace(brain, "Alice likes tea.", scope_id="alice", identity=SYSTEM)
    alice_too = mc.add_trace(brain, "Alice likes green tea.", scope_id="alice", identity=SYSTEM)
    bob = mc.add_trace(brain, "Bob likes coffee.", scope_id="bob", identity=SYSTEM)
    unscoped = mc.add_trace(brain, "Someone likes water.", identity=SYSTEM)
    [own, mixed, bobs, nobodys] = create(
        brain, settings, merge(alice, alice_too), merge(alice, bob), prune(bob), prune(unscoped)
    )
    listed = {i.id: i.trace_ids for i in p.list_proposals(brain, settings, identity=SYSTEM)}
    assert listed == {
        own: sorted([alice, alice_too]),
        mixed: sorted([alice, bob]),
        bobs: [bob],
        nobodys: [unscoped],
    }
    assert [
        i.id
        for i in p.list_proposals(brain, settings, identity=SYSTEM.acting_as(frozenset({"alice"})))
    ] == [own]
    both = frozenset({"alice", "bob"})
    assert [i.id for i in p.list_proposals(brain, settings, identity=SYSTEM.acting_as(both))] == [
        own,
        mixed,
        bobs,
    ]
    mc.delete_trace(brain, bob, identity=SYSTEM)  # a stale proposal still names the tenant's trace
    assert [
        i.id
        for i in p.list_proposals(brain, settings, identity=SYSTEM.acting_as(frozenset({"bob"})))
    ] == [bobs]


def test_unknown_ids_and_statuses_are_refused(brain: mc.Brain, settings: mc.Settings) -> None:
    with pytest.raises(mc.NotFound, match="prop_nope"):
        p.get_proposal(brain, settings, "prop_nope")
    with pytest.raises(mc.InvalidArgument, match="status"):
        p.list_proposals(brain, settings, "maybe", identity=SYSTEM)


def test_pending_stats_counts_by_kind_and_ages_the_oldest(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    assert p.pending_stats(brain, now=T0) == {
        "pending": 0,
        "by_kind": {"prune": 0, "merge": 0, "conflict": 0, "rewrite": 0},
        "oldest_age_seconds": None,
    }
    a, b, c = (mc.add_trace(brain, f"t{i}", identity=SYSTEM) for i in range(3))
    create(brain, settings, prune(a), now=T0)
    [decided] = create(brain, settings, prune(b), now=T0 - 500)
    create(brain, settings, merge(a, c), now=T0 + 10)
    p.reject(brain, settings, [decided], now=T0)
    assert p.pending_stats(brain, now=T0 + 100) == {
        "pending": 2,
        "by_kind": {"prune": 1, "merge": 1, "conflict": 0, "rewrite": 0},
        "oldest_age_seconds": 100.0,
    }


# -- accepting ---------------------------------------------------------------


def test_accepting_a_prune_soft_deletes_its_trace_and_files_the_decision(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    a = mc.add_trace(brain, "forgettable", identity=SYSTEM)
    [pid] = create(brain, settings, prune(a))
    [decision] = p.accept(brain, settings, [pid], now=T0 + 5)
    assert (decision.id, decision.outcome) == (pid, "applied")
    trace = mc.get_trace(brain, a, include_deleted=True, identity=SYSTEM)
    assert trace.deleted and pid in (trace.deleted_reason or "")
    assert files(settings) == {"accepted": [f"{pid}.json"], "pending": []}
    row = ledger(brain, pid)
    assert (row.status, row.decided_at) == ("accepted", T0 + 5)
    assert p.get_proposal(brain, settings, pid)["status"] == "accepted"


def test_accepting_a_merge_keeps_the_survivor_with_merged_content_and_all_tags(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    a = mc.add_trace(brain, "User drinks tea.", tags=["drink"], identity=SYSTEM)
    b = mc.add_trace(brain, "User drinks green tea.", tags=["tea", "drink"], identity=SYSTEM)
    [pid] = create(brain, settings, merge(a, b, content="User drinks (green) tea."))
    [decision] = p.accept(brain, settings, [pid])
    assert decision.outcome == "applied" and decision.detail == f"merged {b} into {a}"
    survivor = mc.get_trace(brain, a, identity=SYSTEM)
    assert (survivor.content, survivor.tags) == ("User drinks (green) tea.", ["drink", "tea"])
    assert mc.get_trace(brain, b, include_deleted=True, identity=SYSTEM).deleted
    assert ledger(brain, pid).status == "accepted"


def test_a_merge_without_merged_content_keeps_the_survivors_content(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    a, b = (
        mc.add_trace(brain, "first words", identity=SYSTEM),
        mc.add_trace(brain, "second words", identity=SYSTEM),
    )
    [pid] = create(brain, settings, merge(a, b))
    p.accept(brain, settings, [pid])
    assert mc.get_trace(brain, a, identity=SYSTEM).content == "first words"


def _update_content(brain: mc.Brain, trace_id: str) -> None:
    mc.update_trace(brain, trace_id, content="changed meanwhile", identity=SYSTEM)


def _update_tags(brain: mc.Brain, trace_id: str) -> None:
    mc.update_trace(brain, trace_id, tags=["new"], identity=SYSTEM)


def _delete(brain: mc.Brain, trace_id: str) -> None:
    mc.delete_trace(brain, trace_id, identity=SYSTEM)


def _retrieve(brain: mc.Brain, trace_id: str) -> None:
    record_retrieval(brain, new_event_id(), [trace_id])


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (_update_content, "changed since it was proposed (content hash differs)"),
        (_update_tags, "changed since it was proposed (version 2, was 1)"),
        (_delete, "was deleted since it was proposed"),
        (_retrieve, "was retrieved since it was proposed"),
    ],
)
def test_accepting_a_prune_whose_trace_changed_since_is_stale_and_changes_nothing(
    brain: mc.Brain,
    settings: mc.Settings,
    digest: Digest,
    change: Callable[[mc.Brain, str], None],
    why: str,
) -> None:
    a = mc.add_trace(brain, "original", identity=SYSTEM)
    [pid] = create(brain, settings, prune(a))
    change(brain, a)
    before = digest(brain)
    [decision] = p.accept(brain, settings, [pid])
    assert (decision.outcome, decision.detail) == ("stale", f"trace {a} {why}")
    assert digest(brain) == before
    assert ledger(brain, pid).status == "pending"
    assert files(settings) == {"pending": [f"{pid}.json"]}


def test_accepting_a_merge_whose_other_trace_changed_or_survivor_lost_its_lead_is_stale(
    brain: mc.Brain, settings: mc.Settings, digest: Digest
) -> None:
    a, b = mc.add_trace(brain, "one", identity=SYSTEM), mc.add_trace(brain, "two", identity=SYSTEM)
    [pid] = create(brain, settings, merge(a, b))
    _retrieve(brain, b)
    before = digest(brain)
    [decision] = p.accept(brain, settings, [pid])
    assert decision.outcome == "stale" and "no longer the most retrieved" in decision.detail
    assert digest(brain) == before
    _update_content(brain, b)
    assert p.accept(brain, settings, [pid])[0].detail.startswith(f"trace {b} changed")
    assert mc.get_trace(brain, a, identity=SYSTEM).content == "one"
    assert not mc.get_trace(brain, b, include_deleted=True, identity=SYSTEM).deleted
    assert ledger(brain, pid).status == "pending"


def test_accepting_an_edited_proposal_file_is_refused(
    brain: mc.Brain, settings: mc.Settings, digest: Digest
) -> None:
    a, b = (
        mc.add_trace(brain, "keep me", identity=SYSTEM),
        mc.add_trace(brain, "and me", identity=SYSTEM),
    )
    [pid] = create(brain, settings, merge(a, b, content="merged"))
    path = folder(settings, "pending") / f"{pid}.json"
    path.write_text(path.read_text().replace('"merged"', '"something else"'))
    before = digest(brain)
    [decision] = p.accept(brain, settings, [pid])
    assert decision.outcome == "edited" and f"proposals/pending/{pid}.json" in decision.detail
    assert str(settings.data_dir) not in decision.detail  # never the server's own path
    assert digest(brain) == before and ledger(brain, pid).status == "pending"
    assert p.get_proposal(brain, settings, pid)["edited"] is True
    path.write_text("{not json")
    assert p.get_proposal(brain, settings, pid)["edited"] is True
    assert p.accept(brain, settings, [pid])[0].outcome == "edited"
    path.unlink()
    assert "missing" in p.accept(brain, settings, [pid])[0].detail


def test_an_unknown_id_refuses_the_whole_request_before_deciding_any(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    [pid] = create(brain, settings, prune(mc.add_trace(brain, "x", identity=SYSTEM)))
    with pytest.raises(mc.NotFound, match="prop_nope"):
        p.accept(brain, settings, [pid, "prop_nope"])
    with pytest.raises(mc.NotFound, match="prop_nope"):
        p.reject(brain, settings, ["prop_nope", pid])
    assert ledger(brain, pid).status == "pending"


def test_a_decided_proposal_is_not_pending_any_more(brain: mc.Brain, settings: mc.Settings) -> None:
    [pid] = create(brain, settings, prune(mc.add_trace(brain, "x", identity=SYSTEM)))
    assert p.accept(brain, settings, [pid, pid])[0].outcome == "applied"  # ids deduplicated
    for decide in (p.accept, p.reject):
        [again] = decide(brain, settings, [pid])
        assert (again.outcome, again.detail) == ("not_pending", "already accepted")


def test_accept_all_and_reject_all_take_every_pending_proposal_oldest_first(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    a, b, c = (mc.add_trace(brain, f"t{i}", identity=SYSTEM) for i in range(3))
    [second] = create(brain, settings, prune(a), now=T0 + 1)
    [first] = create(brain, settings, prune(b), now=T0)
    assert [(d.id, d.outcome) for d in p.accept_all(brain, settings)] == [
        (first, "applied"),
        (second, "applied"),
    ]
    [third] = create(brain, settings, prune(c))
    assert [(d.id, d.outcome) for d in p.reject_all(brain, settings)] == [(third, "rejected")]
    assert p.accept_all(brain, settings) == []


# -- rejecting ---------------------------------------------------------------


def test_a_rejection_pins_its_trace_until_the_trace_changes(
    brain: mc.Brain, settings: mc.Settings, digest: Digest
) -> None:
    a = mc.add_trace(brain, "keep me", identity=SYSTEM)
    [pid] = create(brain, settings, prune(a))
    before = digest(brain)
    [decision] = p.reject(brain, settings, [pid], now=T0 + 10)
    assert decision.outcome == "rejected" and digest(brain) == before
    assert files(settings) == {"pending": [], "rejected": [f"{pid}.json"]}
    assert (ledger(brain, pid).status, ledger(brain, pid).decided_at) == ("rejected", T0 + 10)
    for days in (29, 31, 400):
        later = T0 + 10 + days * DAY
        assert p.filter_new(brain, settings, [prune(a)], now=later) == []
        assert create(brain, settings, prune(a), now=later) == []
    # Once the trace changes, the rejection no longer speaks for it (after the cooldown).
    mc.update_trace(brain, a, content="keep me, changed", now=T0 + 20, identity=SYSTEM)
    assert p.filter_new(brain, settings, [prune(a)], now=T0 + 20 + 29 * DAY) == []
    assert p.filter_new(brain, settings, [prune(a)], now=T0 + 20 + 31 * DAY) == [prune(a)]


# -- crash safety ------------------------------------------------------------


def test_recover_removes_a_temporary_file_whose_ledger_row_never_committed(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    pending = folder(settings, "pending")
    pending.mkdir(parents=True)
    (pending / ".prop_crashed.json.tmp").write_text("{}")
    assert p.list_proposals(brain, settings, identity=SYSTEM) == []
    assert files(settings) == {"pending": []}


def test_recover_renames_a_temporary_file_whose_ledger_row_committed(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    [pid] = create(brain, settings, prune(mc.add_trace(brain, "x", identity=SYSTEM)))
    pending = folder(settings, "pending")
    (pending / f"{pid}.json").rename(pending / f".{pid}.json.tmp")  # crashed before the rename
    assert p.recover(brain, settings).renamed == [pid]
    assert files(settings) == {"pending": [f"{pid}.json"]}
    assert p.get_proposal(brain, settings, pid)["edited"] is False


def test_recover_moves_a_decided_proposal_still_in_pending(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    a, b = mc.add_trace(brain, "a", identity=SYSTEM), mc.add_trace(brain, "b", identity=SYSTEM)
    [accepted, rejected] = create(brain, settings, prune(a), prune(b))
    p.accept(brain, settings, [accepted])
    p.reject(brain, settings, [rejected])
    for status, pid in (("accepted", accepted), ("rejected", rejected)):  # crashed before the move
        (folder(settings, status) / f"{pid}.json").rename(
            folder(settings, "pending") / f"{pid}.json"
        )
    assert [i.id for i in p.list_proposals(brain, settings, "all", identity=SYSTEM)] == [
        accepted,
        rejected,
    ]
    assert files(settings) == {
        "accepted": [f"{accepted}.json"],
        "pending": [],
        "rejected": [f"{rejected}.json"],
    }


def test_create_inside_a_rolled_back_transaction_leaves_no_proposal_behind(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    a = mc.add_trace(brain, "x", identity=SYSTEM)
    with pytest.raises(RuntimeError), brain.transaction():
        [pid] = create(brain, settings, prune(a))
        assert files(settings) == {"pending": [f".{pid}.json.tmp"]}  # no final name yet
        raise RuntimeError("the pass died")
    assert p.list_proposals(brain, settings, "all", identity=SYSTEM) == []
    assert files(settings) == {"pending": []}


def test_create_inside_a_committed_transaction_is_finished_by_recover(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    a = mc.add_trace(brain, "x", identity=SYSTEM)
    with brain.transaction():
        [pid] = create(brain, settings, prune(a))
    assert [i.id for i in p.list_proposals(brain, settings, identity=SYSTEM)] == [pid]
    assert files(settings) == {"pending": [f"{pid}.json"]}
    assert p.accept(brain, settings, [pid])[0].outcome == "applied"
