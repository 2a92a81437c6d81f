"""Consolidation never loses a memory: verified merges, salience, occurrences, pins, undo.

Each test drives real passes (``dream``) on a real brain file with a clock
that moves, and accepts what they propose, the way a person who trusts the
passes would.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core import inbox, ingest, proposals
from memory_core.auth import SYSTEM
from memory_core.consolidation.dream import dream, undo_pass
from memory_core.embedders.stub import StubEmbedder
from memory_core.embeddings import embed_missing, to_blob
from memory_core.extraction.base import Extraction, Fact
from memory_core.io import import_into
from memory_core.traces.decay import DAY
from memory_core.traces.undo import restore_trace
from tests.backends import index_finds
from tests.conftest import brain_digest

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC).timestamp()


@pytest.fixture
def stub() -> StubEmbedder:
    return StubEmbedder()


def add(brain: mc.Brain, content: str, *, at: float = T0, **kw: Any) -> str:
    return mc.add_trace(
        brain, content, now=at, occurred_at=kw.pop("occurred_at", at), **kw, identity=SYSTEM
    )


def step(report: Any, name: str) -> Any:
    return next(s for s in report.steps if s.name == name)


def pending(brain: mc.Brain, settings: mc.Settings, kind: str | None = None) -> list[Any]:
    return [
        p
        for p in proposals.list_proposals(brain, settings, identity=SYSTEM)
        if kind in (None, p.kind)
    ]


def accept_everything(brain: mc.Brain, settings: mc.Settings, now: float) -> None:
    decisions = proposals.accept_all(brain, settings, now=now)
    assert all(d.outcome == "applied" for d in decisions), decisions


def undo_digest(brain: mc.Brain) -> str:
    """Traces (every column, tags included), vectors, full-text entries, and what the
    index finds for each trace's first word."""
    h = hashlib.sha256(brain_digest(brain).encode())
    with brain.read() as conn:
        for (content,) in conn.execute(text("SELECT content FROM memory_traces ORDER BY seq")):
            word = content.split()[0].strip(".,!?'\"")
            h.update(repr(index_finds(conn, word)).encode())
        conn.execute(
            text(
                "INSERT INTO memory_traces_fts(memory_traces_fts, rank) "
                "VALUES ('integrity-check', 1)"
            )
        )
    return h.hexdigest()


# -- merges are verified ------------------------------------------------------


def test_doses_that_differ_are_never_merged(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder
) -> None:
    a = add(brain, "I take 20 mg of lisinopril daily.")
    b = add(brain, "I take 40 mg of lisinopril daily.", at=T0 + DAY)
    embed_missing(brain, stub)
    merge = step(dream(brain, settings, embedder=stub, now=T0 + 2 * DAY), "merge")
    assert merge.counts["proposed"] == 0
    [apart] = [i for i in merge.items if "kept_apart" in i]
    assert set(apart["kept_apart"]) == {a, b} and apart["kind"] == "number"
    assert pending(brain, settings) == []


def test_a_changed_year_is_never_resolved_to_the_older(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder
) -> None:
    old = add(brain, "I moved to Berlin in 2019.")
    new = add(brain, "I moved to Berlin in 2021.", at=T0 + 30 * DAY)
    embed_missing(brain, stub)
    for day in (31, 32, 40):
        dream(brain, settings, embedder=stub, now=T0 + day * DAY)
        accept_everything(brain, settings, T0 + day * DAY)
    assert (
        not mc.get_trace(brain, old, identity=SYSTEM).deleted
        and not mc.get_trace(brain, new, identity=SYSTEM).deleted
    )
    hits = mc.search(brain, "I moved to Berlin in 2021.", embedder=stub, identity=SYSTEM).results
    assert hits[0].trace.id == new


def test_a_verified_merge_keeps_every_detail_and_the_newer_survives_a_tie(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder
) -> None:
    old = add(
        brain, "I've been learning Japanese for two years with a weekly tutor.", type="semantic"
    )
    new = add(brain, "I've been learning Japanese for two years.", at=T0 + DAY, type="semantic")
    embed_missing(brain, stub)
    dream(brain, settings, embedder=stub, now=T0 + 2 * DAY)
    [prop] = pending(brain, settings, "merge")
    doc = proposals.get_proposal(brain, settings, prop.id)
    assert doc["survivor_id"] == new
    result = doc["merged_content"]
    assert "weekly tutor" in result and "two years" in result
    accept_everything(brain, settings, T0 + 2 * DAY)
    assert mc.get_trace(brain, new, identity=SYSTEM).content == result
    assert mc.get_trace(brain, old, include_deleted=True, identity=SYSTEM).deleted


def test_two_cli_adds_of_near_duplicates_are_proposed_by_the_first_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As a user would: ``memctl add`` twice (nothing embeds them), then ``memctl dream``."""
    from memctl.cli import main

    monkeypatch.setenv("REVERIE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("REVERIE_EMBEDDER", "stub")
    brain_arg = ["--brain", f"sqlite:///{tmp_path / 'brain.sqlite'}"]

    def memctl(*args: str) -> None:
        with pytest.raises(SystemExit) as done:
            main([*brain_arg, *args])
        assert done.value.code in (0, None), capsys.readouterr()

    memctl("add", "My sister Ana is a nurse in Porto.")
    memctl("add", "my sister ana is a nurse in porto")
    capsys.readouterr()
    memctl("--json", "dream")
    memctl("--json", "proposals", "--kind", "merge")
    assert '"kind": "merge"' in capsys.readouterr().out


# -- every occurrence kept ------------------------------------------------------


def _said_on(brain: mc.Brain, day: float, user: str, conversation: str, extract: Any) -> None:
    """A turn of ``u1`` told on ``day``, ingested with ``extract``."""
    turn = inbox.Turn(
        user=user,
        assistant="",
        scope="user",
        scope_id="u1",
        conversation_id=conversation,
        timestamp=day,
    )
    accepted = inbox.accept_turn(brain, turn, now=day, identity=SYSTEM)
    ingest.ingest_turns(brain, [accepted.turn_id], extract, now=day)


def _fact_of_the_turn(user: str, assistant: str, *, when: float | None = None) -> Extraction:
    return Extraction(
        facts=[Fact(content=user, category="episodic", importance=0.6)], extractor="test"
    )


def test_three_migraine_days_keep_three_occurrence_times(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder
) -> None:
    days = [T0 + k * DAY for k in (0, 3, 9)]
    for k, day in enumerate(days):
        _said_on(brain, day, "I had a migraine again today.", f"c{k}", _fact_of_the_turn)
    embed_missing(brain, stub)
    for k in range(1, 4):
        now = days[-1] + k * DAY
        dream(brain, settings, embedder=stub, now=now)
        accept_everything(brain, settings, now)
    with brain.read() as conn:
        times = sorted(
            r[0]
            for r in conn.execute(
                text(
                    "SELECT occurred_at FROM memory_traces WHERE deleted = 0 "
                    "AND content LIKE '%migraine%' AND type = 'episodic' "
                    "AND tags LIKE '%turn%'"
                )
            )
        )
    assert times == days
    for day in days:  # as_of finds each occurrence by then
        seen = mc.search(
            brain, "migraine", as_of=day + 60, embedder=stub, limit=20, identity=SYSTEM
        ).results
        assert max(h.trace.occurred_at for h in seen) == day
    named = datetime.fromtimestamp(days[1], UTC).strftime("%d %B %Y")
    top = mc.search(
        brain, f"migraine on {named}", embedder=stub, now=days[-1], identity=SYSTEM
    ).results[0]
    assert top.trace.occurred_at == days[1]


def _statement_of_the_turn(user: str, assistant: str, *, when: float | None = None) -> Extraction:
    said = user.removeprefix("Quick update. ")
    return Extraction(
        facts=[Fact(content=f"User: {said}", category="knowledge", importance=0.5)],
        extractor="test",
    )


def test_statements_said_on_different_days_are_never_merged_into_one(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder
) -> None:
    said = ["Still working on my dance studio, it is hard.", "Still working on my dance studio."]
    days = [T0, T0 + 6 * DAY]
    for k, (user, day) in enumerate(zip(said, days, strict=True)):
        _said_on(brain, day, f"Quick update. {user}", f"c{k}", _statement_of_the_turn)
    # The same words written directly as memories are one fact worded twice.
    for text_, day in zip(said, days, strict=True):
        add(brain, f"User: {text_}", at=day, scope_id="u2", type="semantic")
    embed_missing(brain, stub)
    merged: list[list[str]] = []
    for k in range(1, 4):
        now = days[-1] + k * DAY
        dream(brain, settings, embedder=stub, now=now)
        merged += [p.trace_ids for p in pending(brain, settings, "merge")]
        accept_everything(brain, settings, now)
    with brain.read() as conn:
        kept = conn.execute(
            text(
                "SELECT content, occurred_at FROM memory_traces WHERE deleted = 0 "
                "AND scope_id = 'u1' AND type = 'semantic' ORDER BY occurred_at"
            )
        ).all()
        notes = conn.execute(
            text("SELECT count(*) FROM memory_traces WHERE deleted = 0 AND scope_id = 'u2'")
        ).scalar_one()
    assert [(c, t) for c, t in kept] == [(f"User: {s}", d) for s, d in zip(said, days, strict=True)]
    assert len(merged) == 1 and notes == 1


# -- forgetting by salience ---------------------------------------------------------


DURABLE = [
    "My daughter Lily's birthday is on March 14.",
    "I'm severely allergic to penicillin.",
    "My blood type is O negative.",
    "I prefer dark mode in every app.",
    "Please remember that the spare key is under the blue pot.",
]


def test_durable_facts_are_never_proposed_and_small_talk_goes(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    durable = [add(brain, c, type="semantic") for c in DURABLE]
    important = add(brain, "The boiler code is kept in the garage.", importance=1.0)
    chat = [add(brain, t) for t in ("Thanks!", "haha nice", "Good morning!")]
    ordinary = add(brain, "We watched a film about whales on Friday night.")
    first = {
        i["trace_id"]: i["reason"]
        for i in step(dream(brain, settings, dry_run=True, now=T0 + 20 * DAY), "prune").items
    }
    assert set(first) == set(chat)  # small talk first
    proposed: set[str] = set()
    for day in range(0, 730, 30):  # two years, nobody searching
        dream(brain, settings, now=T0 + day * DAY)
        proposed |= {p.trace_ids[0] for p in pending(brain, settings, "prune")}
    assert not proposed & {*durable, important}
    assert set(chat) <= proposed
    assert ordinary in proposed  # an ordinary event does decay, only later
    assert all("small talk" in why for why in first.values())


def test_a_fact_drawn_from_a_durable_turn_keeps_its_protection(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    def second_sentence(user: str, assistant: str, *, when: float | None = None) -> Extraction:
        return Extraction(facts=[Fact("She is mad about horses.", "knowledge", 0.5)], extractor="t")

    turn = inbox.Turn(
        user="My daughter Lily's birthday is on March 14. She is mad about horses.",
        assistant="",
        scope="user",
        scope_id="u1",
        timestamp=T0,
    )
    accepted = inbox.accept_turn(brain, turn, now=T0, identity=SYSTEM)
    ingest.ingest_turns(brain, [accepted.turn_id], second_sentence, now=T0)
    for day in range(30, 730, 60):
        dream(brain, settings, now=T0 + day * DAY)
    assert pending(brain, settings, "prune") == []


def test_forgetting_a_turn_gives_the_next_one_the_turn_before_as_context(
    brain: mc.Brain,
) -> None:
    """Pruned small talk does not cut an answer off from the question it answers."""
    question, chat, answer = mc.add_traces(
        brain,
        [
            mc.NewTrace("Ann: where did you get the sourdough starter?", stream="s"),
            mc.NewTrace("Ben: haha nice", stream="s"),
            mc.NewTrace("Ann: from the bakery on Elm Street", stream="s"),
        ],
        identity=SYSTEM,
    )
    mc.delete_trace(brain, chat, identity=SYSTEM)
    assert (
        mc.get_trace(brain, answer, identity=SYSTEM).context
        == mc.get_trace(brain, question, identity=SYSTEM).content
    )
    assert answer in {
        h.trace.id
        for h in mc.search(brain, "sourdough starter", embedder=None, identity=SYSTEM).results
    }
    restore_trace(brain, chat)
    assert mc.get_trace(brain, answer, identity=SYSTEM).context == "Ben: haha nice"


def test_decay_starts_when_a_trace_was_learnt_not_when_it_happened(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    """A history imported today with 2019 dates is not proposed wholesale."""
    learnt = T0
    old_events = [
        add(
            brain,
            f"We went hiking near the {p} that summer.",
            at=learnt,
            occurred_at=T0 - 2000 * DAY,
        )
        for p in ("lake", "river", "ridge")
    ]
    report = dream(brain, settings, now=learnt + 7 * DAY)
    assert step(report, "prune").counts["proposed"] == 0
    assert all(not mc.get_trace(brain, t, identity=SYSTEM).deleted for t in old_events)


@pytest.mark.parametrize("days_later", [31, 400])
def test_a_rejected_prune_is_not_proposed_again(
    brain: mc.Brain, settings: mc.Settings, days_later: int
) -> None:
    chat = add(brain, "ok cool")
    dream(brain, settings, now=T0 + 30 * DAY)
    [prop] = pending(brain, settings, "prune")
    proposals.reject(brain, settings, [prop.id], now=T0 + 30 * DAY)
    later = T0 + (30 + days_later) * DAY
    report = dream(brain, settings, now=later)
    assert step(report, "prune").counts["proposed"] == 0
    assert pending(brain, settings) == [] and not mc.get_trace(brain, chat, identity=SYSTEM).deleted


def test_a_pruned_fact_is_learnt_again_from_a_new_turn_and_from_an_import(
    brain: mc.Brain, settings: mc.Settings, tmp_path: Path
) -> None:
    said = "ok, thanks for that"

    def ingest_turn(at: float) -> None:
        turn = inbox.Turn(user=said, assistant="", scope="user", scope_id="u1", timestamp=at)
        accepted = inbox.accept_turn(brain, turn, now=at, identity=SYSTEM)
        ingest.ingest_turns(brain, [accepted.turn_id], _fact_of_the_turn, now=at)

    def facts() -> list[mc.Trace]:
        with brain.read() as conn:
            rows = conn.execute(
                text("SELECT * FROM memory_traces WHERE content = :c AND deleted = 0"), {"c": said}
            ).all()
        return [mc.Trace.from_row(r) for r in rows]

    ingest_turn(T0)
    dream(brain, settings, now=T0 + 60 * DAY)
    accept_everything(brain, settings, T0 + 60 * DAY)
    assert facts() == []  # the fact (and its episode) pruned
    ingest_turn(T0 + 61 * DAY)
    assert [t.learnt_at for t in facts()] == [T0 + 61 * DAY]  # learnt again
    dream(brain, settings, now=T0 + 200 * DAY)
    accept_everything(brain, settings, T0 + 200 * DAY)
    assert facts() == []
    csv_file = tmp_path / "notes.csv"
    csv_file.write_text(f'content,scope_id\n"{said}",u1\n')
    result = import_into(brain, "csv", csv_file)
    assert (result.imported, result.skipped) == (1, 0)
    assert len(facts()) == 1


def test_a_trace_a_person_deleted_stays_forgotten_on_import(
    brain: mc.Brain, tmp_path: Path
) -> None:
    gone = add(brain, "An old address I asked to forget.", scope_id="u1")
    mc.delete_trace(brain, gone, identity=SYSTEM)
    csv_file = tmp_path / "notes.csv"
    csv_file.write_text("content,scope_id\nAn old address I asked to forget.,u1\n")
    result = import_into(brain, "csv", csv_file)
    assert (result.imported, result.skipped) == (0, 1)


# -- incremental near-duplicate search ------------------------------------------------


@dataclass
class NamedEmbedder:
    """Names pre-written vectors' model; embeds single words as random unit vectors."""

    name: str = "fixed-64"
    dim: int = 64

    def embed(self, texts: Any) -> npt.NDArray[np.float32]:
        rng = np.random.default_rng(len(texts))
        v = rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def _word(k: int) -> str:
    letters = "bcdfghjklmnpqrstvwxz"
    out = ""
    for _ in range(4):
        out += letters[k % len(letters)]
        k //= len(letters)
    return out


def test_pairs_past_the_cap_are_proposed_by_the_next_pass(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    n_pairs, cap = 593, 500
    s = settings.model_copy(update={"dream_max_proposals": cap, "dream_max_pending": 10_000})
    embedder = NamedEmbedder()
    rng = np.random.default_rng(7)
    base = rng.standard_normal((n_pairs, embedder.dim)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    rows = []
    for k in range(n_pairs):
        a = add(brain, f"Note about {_word(k)} and its keeper.", at=T0 - 3600)
        b = add(brain, f"note about {_word(k)} and its keeper!", at=T0 - 3600)
        rows += [(a, base[k]), (b, base[k] * 0.999 + 0.001)]
    with brain.transaction() as conn:
        conn.execute(
            text(
                "INSERT INTO trace_embeddings (trace_id, model, dim, vector, created_at) "
                "VALUES (:t, :m, :d, :v, :c)"
            ),
            [
                {
                    "t": t,
                    "m": embedder.name,
                    "d": embedder.dim,
                    "v": to_blob(v / np.linalg.norm(v)),
                    "c": T0,
                }
                for t, v in rows
            ],
        )
    first = step(dream(brain, s, embedder=embedder, now=T0), "merge")
    assert first.counts["proposed"] == cap and first.counts["carried"] > 0
    second = step(dream(brain, s, embedder=embedder, now=T0 + DAY), "merge")
    assert second.counts["proposed"] == n_pairs - cap
    third = step(dream(brain, s, embedder=embedder, now=T0 + 2 * DAY), "merge")
    assert third.counts["proposed"] == 0
    assert len(pending(brain, s, "merge")) == n_pairs


def test_vectors_written_after_a_pass_are_compared_by_the_next(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder
) -> None:
    """Imported with an old date and embedded late: still compared once."""
    add(brain, "Our cat Miso hates the vacuum cleaner.", type="semantic")
    embed_missing(brain, stub)
    dream(brain, settings, embedder=stub, now=T0 + DAY)
    late = add(brain, "our cat miso hates the vacuum cleaner", at=T0 - 900 * DAY, type="semantic")
    embed_missing(brain, stub)
    merge = step(dream(brain, settings, embedder=stub, now=T0 + 2 * DAY), "merge")
    assert merge.counts["proposed"] == 1
    [prop] = pending(brain, settings, "merge")
    assert late in prop.trace_ids


# -- review: bounded, expiring, undoable ----------------------------------------------


def test_pending_proposals_are_bounded_and_expire(brain: mc.Brain, settings: mc.Settings) -> None:
    s = settings.model_copy(update={"dream_max_pending": 3, "proposal_expire_days": 10})
    for k in range(5):
        add(brain, f"thanks {'!' * (k + 1)}")
    dream(brain, s, now=T0 + 30 * DAY)
    assert len(pending(brain, s)) == 3
    dream(brain, s, now=T0 + 31 * DAY)
    assert len(pending(brain, s)) == 3  # full: nothing more proposed
    first = {p.id for p in pending(brain, s)}
    dream(brain, s, now=T0 + 41 * DAY)  # the first three expired; proposed afresh, bounded
    expired = proposals.list_proposals(brain, s, "expired", identity=SYSTEM)
    assert {p.id for p in expired} == first
    assert len(pending(brain, s)) == 3 and not first & {p.id for p in pending(brain, s)}
    assert all((s.data_dir / "proposals" / "expired" / f"{p.id}.json").exists() for p in expired)
    assert proposals.accept(brain, s, [expired[0].id])[0].outcome == "not_pending"


def test_undo_of_accepted_proposals_restores_traces_vectors_index_and_tags(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder
) -> None:
    add(
        brain,
        "I've been learning Japanese for two years with a tutor.",
        tags=["lang"],
        type="semantic",
    )
    add(
        brain,
        "I've been learning Japanese for two years.",
        at=T0 + DAY,
        tags=["study"],
        type="semantic",
    )
    add(brain, "haha ok", at=T0 + DAY)
    embed_missing(brain, stub)
    now = T0 + 40 * DAY
    dream(brain, settings, embedder=stub, now=now)
    assert {p.kind for p in pending(brain, settings)} == {"merge", "prune"}
    before = undo_digest(brain)
    ids = [p.id for p in pending(brain, settings)]
    accept_everything(brain, settings, now)
    embed_missing(brain, stub)  # the merged survivor gets its new vector
    assert undo_digest(brain) != before
    decisions = proposals.undo(brain, settings, list(reversed(ids)), now=now + 1)
    assert [d.outcome for d in decisions] == ["undone", "undone"]
    assert undo_digest(brain) == before
    assert proposals.undo(brain, settings, ids)[0].outcome == "not_accepted"
    assert all((settings.data_dir / "proposals" / "undone" / f"{i}.json").exists() for i in ids)


def test_undo_is_refused_when_a_survivor_changed_since(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder
) -> None:
    add(brain, "Dinner with Sam is at the Thai place.", type="semantic")
    survivor = add(brain, "dinner with sam is at the thai place", at=T0 + DAY, type="semantic")
    embed_missing(brain, stub)
    dream(brain, settings, embedder=stub, now=T0 + 2 * DAY)
    [prop] = pending(brain, settings, "merge")
    accept_everything(brain, settings, T0 + 2 * DAY)
    mc.update_trace(brain, survivor, tags=["edited-later"], identity=SYSTEM)
    before = undo_digest(brain)
    [decision] = proposals.undo(brain, settings, [prop.id])
    assert decision.outcome == "stale" and "changed since" in decision.detail
    assert undo_digest(brain) == before


def test_dreams_undo_reverses_a_pass_as_one_unit(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder
) -> None:
    s = settings.model_copy(update={"dream_compact_after_days": 1, "dream_derive_min_cluster": 3})
    add(brain, "User likes tea.", tags=["a"])
    add(brain, "User likes tea.", tags=["b"])  # the same occurrence: merged unattended
    old = add(brain, "User: we hiked the ridge trail\n\nAssistant: lovely", at=T0 - 10 * DAY)
    with brain.transaction() as conn:
        conn.execute(text("UPDATE memory_traces SET retrieval_count = 5 WHERE id = :i"), {"i": old})
    for k in range(4):
        add(brain, f"garden tomatoes basil watering plan for plot 7 {'x' * k}")
    embed_missing(brain, stub)
    before = undo_digest(brain)
    report = dream(brain, s, embedder=stub, now=T0 + DAY)
    assert step(report, "merge").counts["merged"] == 1
    assert step(report, "compact").counts["compacted"] == 1
    assert step(report, "derive").counts["derived"] >= 1
    result = undo_pass(brain, report.pass_id, identity=mc.OPEN)
    assert result.removed and result.restored
    assert undo_digest(brain) == before
    with pytest.raises(mc.NotFound):
        undo_pass(brain, report.pass_id, identity=mc.OPEN)


def test_restore_undeletes_one_trace_with_its_vector(brain: mc.Brain, stub: StubEmbedder) -> None:
    t = add(brain, "The spare key is under the blue pot.")
    embed_missing(brain, stub)
    before = undo_digest(brain)
    mc.delete_trace(brain, t, identity=SYSTEM)
    restore_trace(brain, t)
    trace = mc.get_trace(brain, t, identity=SYSTEM)
    assert not trace.deleted
    with brain.read() as conn:
        assert (
            conn.execute(
                text("SELECT count(*) FROM trace_embeddings WHERE trace_id = :t"), {"t": t}
            ).scalar()
            == 1
        )
    assert undo_digest(brain) != before  # the version moved on: a restore is a change
    with pytest.raises(mc.Conflict):
        restore_trace(brain, t)


# -- the LLM's second opinion ------------------------------------------------------------


def _llm_settings(settings: mc.Settings, url: str) -> mc.Settings:
    return settings.model_copy(
        update={"llm_base_url": url, "llm_max_retries": 0, "llm_timeout_s": 2.0}
    )


def _near_pair(brain: mc.Brain, stub: StubEmbedder) -> tuple[str, str]:
    a = add(brain, "Our cat Miso hates the vacuum cleaner.", type="semantic")
    b = add(brain, "our cat miso hates the vacuum cleaner", at=T0 + DAY, type="semantic")
    embed_missing(brain, stub)
    return a, b


def test_an_llm_that_judges_a_pair_different_keeps_it_apart(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder, llm_server: Any
) -> None:
    _near_pair(brain, stub)
    llm_server.answer({"same": False, "reason": "one is about a different cat"})
    s = _llm_settings(settings, llm_server.url)
    merge = step(dream(brain, s, embedder=stub, now=T0 + 2 * DAY), "merge")
    assert merge.counts["proposed"] == 0
    [apart] = [i for i in merge.items if "kept_apart" in i]
    assert apart["kind"] == "llm" and "different cat" in apart["why"]
    assert len(llm_server.requests) == 1 and "Miso" in json_of(llm_server.requests[0])


def json_of(request: dict[str, Any]) -> str:
    return str(request["json"]["messages"][1]["content"])


@pytest.mark.parametrize(
    "reply",
    [
        (500, b"boom"),
        (200, b"{not json"),
        (200, {"choices": [{"message": {"content": '{"same": "maybe"}'}}]}),
    ],
)
def test_a_failing_or_malformed_llm_leaves_the_verifiers_verdict(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder, llm_server: Any, reply: Any
) -> None:
    _near_pair(brain, stub)
    llm_server.reply(*reply)
    s = _llm_settings(settings, llm_server.url)
    merge = step(dream(brain, s, embedder=stub, now=T0 + 2 * DAY), "merge")
    assert merge.counts["proposed"] == 1


def test_the_llm_is_not_asked_about_pairs_the_verifier_refused(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder, llm_server: Any
) -> None:
    add(brain, "I take 20 mg of lisinopril daily.", type="semantic")
    add(brain, "I take 40 mg of lisinopril daily.", type="semantic", at=T0 + DAY)
    embed_missing(brain, stub)
    llm_server.answer({"same": True, "reason": "same drug"})
    s = _llm_settings(settings, llm_server.url)
    merge = step(dream(brain, s, embedder=stub, now=T0 + 2 * DAY), "merge")
    assert merge.counts["proposed"] == 0 and llm_server.requests == []
