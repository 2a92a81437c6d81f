"""Dream-pass steps on small brains with known answers, and the pass as a whole."""

from __future__ import annotations

import hashlib
import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core import proposals
from memory_core.auth import SYSTEM
from memory_core.brain.db import tables
from memory_core.brain.leases import acquire_lease
from memory_core.brain.maintenance import doctor
from memory_core.consolidation.dream import dream, list_passes, undo_pass
from memory_core.embedders.stub import StubEmbedder
from memory_core.embeddings import embed_missing
from memory_core.language.days import written_day
from memory_core.retrieval import feedback
from memory_core.traces.decay import DAY
from memory_core.traces.model import FACT_TAG

NOW = time.time()


@pytest.fixture
def stub() -> StubEmbedder:
    return StubEmbedder()


def add(brain: mc.Brain, content: str, *, age_days: float = 0.0, **kw: Any) -> str:
    when = NOW - age_days * DAY
    return mc.add_trace(brain, content, now=when, occurred_at=when, **kw, identity=SYSTEM)


def step(report: Any, name: str) -> Any:
    return next(s for s in report.steps if s.name == name)


def full_digest(brain: mc.Brain) -> str:
    h = hashlib.sha256()
    with brain.read() as conn:
        for table in sorted(tables(conn)):
            for row in conn.execute(text(f'SELECT * FROM "{table}" ORDER BY 1')):
                h.update(repr(tuple(row)).encode())
    return h.hexdigest()


# -- prune ---------------------------------------------------------------------


def test_prune_proposes_decayed_traces_and_deletes_nothing(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    old = add(brain, "a note nobody looked at for a year", age_days=365)
    fresh = add(brain, "a note from today")
    # Spaced repetition: fifty uses buy a horizon far past 300 days.
    often_long_ago = add(brain, "retrieved a lot, but long ago", age_days=400)
    with brain.transaction() as conn:
        conn.execute(
            text(
                "UPDATE memory_traces SET retrieval_count = 50, last_accessed = :t WHERE id = :id"
            ),
            {"t": NOW - 300 * DAY, "id": often_long_ago},
        )
    report = dream(brain, settings, now=NOW)
    prune = step(report, "prune")
    assert {i["trace_id"] for i in prune.items} == {old}
    assert prune.counts["proposed"] == 1 and len(prune.proposals) == 1
    assert all(
        not mc.get_trace(brain, t, identity=SYSTEM).deleted for t in (old, fresh, often_long_ago)
    )
    pending = proposals.list_proposals(brain, settings, identity=SYSTEM)
    assert {p.kind for p in pending} == {"prune"}
    again = dream(brain, settings, now=NOW)
    assert step(again, "prune").counts["proposed"] == 0  # already pending


# -- merge -----------------------------------------------------------------------


def test_exact_duplicates_merge_unattended_without_losing_anything(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    a = add(brain, "User likes tea.", tags=["drink"], sources=[{"turn": "t1"}])
    b = add(brain, "User likes tea.", tags=["pref"], sources=[{"turn": "t2"}])
    other_scope = add(brain, "User likes tea.", scope_id="someone-else")
    report = dream(brain, settings, now=NOW)
    merge = step(report, "merge")
    assert merge.counts["merged"] == 1
    assert merge.items[0] == {"survivor": a, "merged": [b]}
    survivor = mc.get_trace(brain, a, identity=SYSTEM)
    assert survivor.content == "User likes tea."
    assert survivor.tags == ["drink", "pref"]
    assert survivor.sources == [{"turn": "t1"}, {"turn": "t2"}]
    gone = mc.get_trace(brain, b, include_deleted=True, identity=SYSTEM)
    assert gone.deleted and gone.content == survivor.content
    assert not mc.get_trace(brain, other_scope, identity=SYSTEM).deleted


def test_near_duplicates_become_merge_proposals_within_a_scope_only(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder
) -> None:
    a = add(brain, "user likes green tea a lot", scope_id="u1")
    b = add(brain, "User likes green tea, a lot!", scope_id="u1")
    add(brain, "user likes green tea a lot.", scope_id="u2")
    add(brain, "the deployment runs on fridays", scope_id="u1")
    embed_missing(brain, stub)
    report = dream(brain, settings, embedder=stub, now=NOW)
    merge = step(report, "merge")
    assert (merge.counts["merged"], merge.counts["proposed"]) == (0, 1)
    doc = proposals.get_proposal(brain, settings, merge.proposals[0])
    assert doc["kind"] == "merge" and {t["id"] for t in doc["traces"]} == {a, b}
    assert (
        not mc.get_trace(brain, a, identity=SYSTEM).deleted
        and not mc.get_trace(brain, b, identity=SYSTEM).deleted
    )


def test_a_pass_without_embeddings_says_so_and_still_runs(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    add(brain, "anything")
    report = dream(brain, settings, now=NOW)
    assert report.status == "ok"
    assert any("no embeddings" in n for n in step(report, "merge").notes)


# -- strengthen --------------------------------------------------------------------


def test_strengthen_learns_edges_and_stability_from_retrievals_once(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    a, b, c = (add(brain, f"trace {x}") for x in "abc")
    for n in range(3):
        feedback.record_retrieval(brain, f"ret_{n}", [a, b], at=NOW)
    feedback.record_retrieval(brain, "ret_x", [c], at=NOW)
    report = dream(brain, settings, now=NOW)
    assert step(report, "strengthen").counts == {"events": 4, "edges": 1, "stabilised": 3}
    with brain.read() as conn:
        edges = conn.execute(text("SELECT a, b, weight, count FROM coactivation_edges")).all()
    assert [tuple(e) for e in edges] == [(min(a, b), max(a, b), 3.0, 3)]
    sa, sc = (
        mc.get_trace(brain, a, identity=SYSTEM).stability,
        mc.get_trace(brain, c, identity=SYSTEM).stability,
    )
    assert sa > sc > 1.0
    again = dream(brain, settings, now=NOW)
    assert step(again, "strengthen").counts["events"] == 0
    assert mc.get_trace(brain, a, identity=SYSTEM).stability == sa


@pytest.mark.parametrize("weight", [0.3, 0.0])
def test_a_memory_used_with_a_strong_hit_gets_a_chance_unless_switched_off(
    brain_url: str, tmp_path: Path, stub: StubEmbedder, weight: float
) -> None:
    settings = mc.load_settings(
        brain_url=brain_url, data_dir=tmp_path / "d", search_coactivation_weight=weight
    )
    brain = mc.open_brain(settings)
    walk = add(brain, "The ridge walk over Pen y Fan in the Brecon Beacons.")
    lunch = add(brain, "Packed cheese rolls and a flask of tea.")  # shares no word
    add(brain, "The quarterly tax return is due in April.")
    embed_missing(brain, stub)
    for n in range(3):  # used together, three times
        feedback.record_retrieval(brain, f"ret_{n}", [walk, lunch], at=NOW)
    dream(brain, settings, embedder=stub, now=NOW)
    hits = mc.search(brain, "Brecon Beacons ridge walk", embedder=stub, identity=SYSTEM).results
    found = {h.trace.id: h for h in hits}
    assert hits[0].trace.id == walk
    if weight:
        assert "coactivation" in found[lunch].adjustments
        assert found[lunch].score == pytest.approx(weight * hits[0].score)
    else:
        assert lunch not in found


def test_results_reported_used_together_are_linked_more_than_results_returned_together(
    brain_url: str, tmp_path: Path, stub: StubEmbedder
) -> None:
    settings = mc.load_settings(brain_url=brain_url, data_dir=tmp_path / "d")
    brain = mc.open_brain(settings)
    walk = add(brain, "The ridge walk over Pen y Fan in the Brecon Beacons.")
    lunch = add(brain, "Packed cheese rolls and a flask of tea.")  # shares no word
    map_ = add(brain, "Bought the OS Explorer map OL12.")  # shares no word either
    embed_missing(brain, stub)
    # One search returned all three near the top; its caller used the walk and the lunch.
    feedback.record_retrieval(brain, "ret_1", [walk, map_, lunch], at=NOW)
    for used in (walk, lunch):
        feedback.record_retrieval(brain, feedback.used_event_id("ret_1", used), [used], at=NOW)
    dream(brain, settings, embedder=stub, now=NOW)
    hits = mc.search(brain, "Brecon Beacons ridge walk", embedder=stub, identity=SYSTEM).results
    found = {h.trace.id: h for h in hits}
    assert hits[0].trace.id == walk
    top, weight = hits[0].score, settings.search_coactivation_weight
    assert found[lunch].score == pytest.approx(weight * top)  # used together: full strength
    assert found[map_].score == pytest.approx(weight * top / 3)  # returned together once


# -- derive ------------------------------------------------------------------------


def test_derive_writes_one_insight_per_cluster_citing_every_source(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder
) -> None:
    hikes = [add(brain, f"we went hiking in the alps near zermatt on day {d}") for d in range(4)]
    add(brain, "the quarterly tax filing is due in april")
    embed_missing(brain, stub)
    report = dream(brain, settings, embedder=stub, now=NOW)
    derive = step(report, "derive")
    assert derive.counts["derived"] == 1
    insight = mc.get_trace(brain, derive.items[0]["insight"], identity=SYSTEM)
    assert insight.type == "semantic" and "derived" in insight.tags
    assert {s["trace"] for s in insight.sources} == set(hikes)
    assert "hiking" in insight.content
    embed_missing(brain, stub)
    assert step(dream(brain, settings, embedder=stub, now=NOW), "derive").counts["derived"] == 0


def test_a_persons_edit_of_an_insight_is_never_overwritten_a_rewrite_is_proposed(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder
) -> None:
    for d in range(3):
        add(brain, f"we went hiking in the alps near zermatt on day {d}")
    embed_missing(brain, stub)
    first = step(dream(brain, settings, embedder=stub, now=NOW), "derive")
    insight_id = first.items[0]["insight"]
    mine = "Our Zermatt hiking trip: three days in the Alps, the best walks we have done."
    mc.update_trace(brain, insight_id, content=mine, identity=SYSTEM)
    add(brain, "we went hiking in the alps near zermatt on day 3")
    embed_missing(brain, stub)
    later = step(dream(brain, settings, embedder=stub, now=NOW + DAY), "derive")
    assert later.counts == {"derived": 0, "updated": 0, "proposed": 1}
    assert mc.get_trace(brain, insight_id, identity=SYSTEM).content == mine
    (asked,) = proposals.list_proposals(brain, settings, identity=SYSTEM)
    assert (asked.kind, asked.trace_ids) == ("rewrite", [insight_id])
    again = step(dream(brain, settings, embedder=stub, now=NOW + 2 * DAY), "derive")
    assert again.counts["proposed"] == 0  # already asked
    proposals.accept(brain, settings, [asked.id], now=NOW + 3 * DAY)
    rewritten = mc.get_trace(brain, insight_id, identity=SYSTEM).content
    assert rewritten != mine and "day 3" in rewritten


def test_thanks_and_greetings_give_no_insight(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder
) -> None:
    for words in ("Thanks so much!", "Thanks so much!!", "thanks so much", "Hi! Thanks so much!"):
        add(brain, words)
    embed_missing(brain, stub)
    assert step(dream(brain, settings, embedder=stub, now=NOW), "derive").items == []


def test_a_cluster_grown_by_one_updates_its_insight_in_place(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder
) -> None:
    hikes = [add(brain, f"we went hiking in the alps near zermatt on day {d}") for d in range(3)]
    embed_missing(brain, stub)
    first = step(dream(brain, settings, embedder=stub, now=NOW), "derive")
    insight_id = first.items[0]["insight"]
    hikes.append(add(brain, "we went hiking in the alps near zermatt on day 3"))
    embed_missing(brain, stub)
    later = step(dream(brain, settings, embedder=stub, now=NOW + DAY), "derive")
    assert later.counts == {"derived": 0, "updated": 1, "proposed": 0}
    insight = mc.get_trace(brain, insight_id, identity=SYSTEM)
    assert insight.version == 2 and "day 3" in insight.content
    assert {s["trace"] for s in insight.sources} == set(hikes)
    with brain.read() as conn:
        derived = conn.execute(
            text(
                "SELECT COUNT(*) FROM memory_traces WHERE deleted = 0 AND EXISTS "
                "(SELECT 1 FROM json_each(tags) WHERE value = 'derived')"
            )
        ).scalar()
    assert derived == 1


def _loose(brain_url: str, tmp_path: Path) -> tuple[mc.Settings, mc.Brain]:
    """A brain whose derive clusters whatever the stub embedder finds at all alike."""
    settings = mc.load_settings(
        brain_url=brain_url, data_dir=tmp_path / "d", dream_derive_similarity=0.1
    )
    return settings, mc.open_brain(settings)


def test_an_insight_is_dated_and_told_of_whom_it_is_about(
    brain_url: str, tmp_path: Path, stub: StubEmbedder
) -> None:
    settings, brain = _loose(brain_url, tmp_path)
    for k, said in enumerate(
        (
            "Caroline: I'm researching adoption agencies for the adoption.",
            "Caroline: I went to an adoption agencies meeting on 7 May 2023.",
            "Caroline: I love the adoption agencies people I met.",
        )
    ):
        add(brain, said, metadata={"speaker": "Caroline"}, age_days=3 - k)
    embed_missing(brain, stub)
    (item,) = step(dream(brain, settings, embedder=stub, now=NOW), "derive").items
    told = _day(NOW - 3 * DAY)
    assert item["content"] == (
        f"Caroline — is researching adoption agencies for the adoption ({told}); "
        "went to an adoption agencies meeting on 7 May 2023; "
        f"loves the adoption agencies people they met ({_day(NOW - DAY)})."
    )


def test_what_two_people_say_of_one_topic_is_two_insights_each_headed_by_its_person(
    brain_url: str, tmp_path: Path, stub: StubEmbedder
) -> None:
    settings, brain = _loose(brain_url, tmp_path)
    said = {
        "Caroline": (
            "I'm researching pottery classes in Leeds.",
            "I went to a pottery class on 7 May 2023.",
            "I love the pottery people I met in Leeds.",
        ),
        "Melanie": (
            "I signed up for a pottery class in York.",
            "I made a pottery bowl on 9 May 2023.",
            "I love the pottery studio in York.",
        ),
    }
    for speaker, lines in said.items():
        for k, line in enumerate(lines):
            add(brain, f"{speaker}: {line}", metadata={"speaker": speaker}, age_days=3 - k)
    embed_missing(brain, stub)
    items = step(dream(brain, settings, embedder=stub, now=NOW), "derive").items
    headings = sorted(item["content"].split(" — ")[0] for item in items)
    assert headings == ["Caroline", "Melanie"]
    for item in items:
        other = "York" if item["content"].startswith("Caroline") else "Leeds"
        assert other not in item["content"]  # no one's claim told of the other


def test_no_insight_is_built_from_what_the_same_pass_proposes_to_prune(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder
) -> None:
    for d in range(3):
        add(brain, f"a note about the alps nobody looked at for a year {d}", age_days=365)
    embed_missing(brain, stub)
    report = dream(brain, settings, embedder=stub, now=NOW)
    assert step(report, "prune").counts["proposed"] == 3
    assert step(report, "derive").items == []


def test_an_insight_does_not_outrank_a_memory_the_query_quotes(
    brain_url: str, tmp_path: Path, stub: StubEmbedder
) -> None:
    settings, brain = _loose(brain_url, tmp_path)
    said = [
        "I adopted a greyhound called Biscuit from the Leeds shelter on 3 May 2023.",
        "Biscuit the greyhound from the Leeds shelter loves the beach at Filey.",
        "Took Biscuit the greyhound back to the Leeds shelter for a check-up.",
    ]
    dogs = [add(brain, s) for s in said]
    embed_missing(brain, stub)
    (item,) = step(dream(brain, settings, embedder=stub, now=NOW), "derive").items
    embed_missing(brain, stub)
    # The words of each: each goes ahead of the insight, which repeats them all.
    quoted = mc.search(brain, "Biscuit greyhound Leeds shelter", embedder=stub, identity=SYSTEM)
    order = [h.trace.id for h in quoted.results]
    assert order[-1] == item["insight"] and set(order[:-1]) == set(dogs), order
    scores = [h.score for h in quoted.results]  # its score says so
    assert (
        scores == sorted(scores, reverse=True) and "after_quoted" in quoted.results[-1].adjustments
    )
    # A word alone quotes nothing, but the statement the insight sums up answers: the
    # insight follows the best of them, its score lowered to say so.
    asked = mc.search(brain, "greyhound", embedder=stub, identity=SYSTEM).results
    assert item["insight"] in [h.trace.id for h in asked][:2]
    # An insight that matches best (its words cut to the query's) still gives first
    # place to the statement it sums up, its score lowered to say so.
    short = "Biscuit the greyhound: adopted, the beach, a check-up."
    mc.update_trace(brain, item["insight"], content=short, identity=SYSTEM)
    embed_missing(brain, stub)
    asked = mc.search(
        brain, "Biscuit greyhound adopted beach check-up", embedder=stub, identity=SYSTEM
    ).results
    order = [h.trace.id for h in asked]
    assert order[0] in dogs and order[1] == item["insight"], order
    assert asked[0].score > asked[1].score and "after_cited" in asked[1].adjustments


def test_an_insight_of_the_older_strung_together_kind_is_proposed_for_pruning(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder
) -> None:
    thanks = [add(brain, "User: Thanks Nate!"), add(brain, "User: See ya Nate!")]
    old = add(
        brain,
        "Recurring theme across 2 memories: User: Thanks Nate! / User: See ya Nate!",
        tags=["derived", "insight"],
        metadata={"derived_by": "extractive"},
        sources=[{"trace": t} for t in thanks],
    )
    embed_missing(brain, stub)
    derive = step(dream(brain, settings, embedder=stub, now=NOW), "derive")
    assert derive.counts["proposed"] == 1
    (pending,) = proposals.list_proposals(brain, settings, identity=SYSTEM)
    assert (pending.kind, pending.trace_ids) == ("prune", [old])
    assert not mc.get_trace(brain, old, identity=SYSTEM).deleted  # a person decides
    again = step(dream(brain, settings, embedder=stub, now=NOW + DAY), "derive")
    assert again.counts["proposed"] == 0  # already pending


def test_derive_makes_at_most_the_configured_number(
    brain_url: str, tmp_path: Path, stub: StubEmbedder
) -> None:
    settings = mc.load_settings(brain_url=brain_url, data_dir=tmp_path / "d", dream_derive_max=1)
    brain = mc.open_brain(settings)
    for topic in ("hiking alps zermatt", "sourdough bread baking", "rust borrow checker"):
        for d in range(3):
            add(brain, f"{topic} notes {d}")
    embed_missing(brain, stub)
    assert step(dream(brain, settings, embedder=stub, now=NOW), "derive").counts["derived"] == 1


# -- compact -----------------------------------------------------------------------


def test_compact_states_what_an_old_often_recalled_episode_told_and_keeps_it(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    ripe = add(
        brain,
        "User: We moved to Porto yesterday. The flat has a balcony over the river.\n\n"
        "Assistant: How exciting!",
        age_days=60,
        sources=[{"turn": "t9"}],
        type="episodic",
    )
    young = add(brain, "User: I had standup this morning.", age_days=1, type="episodic")
    rare = add(brain, "User: We went to Braga in May.", age_days=60, type="episodic")
    with brain.transaction() as conn:
        conn.execute(
            text(
                "UPDATE memory_traces SET retrieval_count = 5, last_accessed = :t "
                "WHERE id IN (:a, :b)"
            ),
            {"t": NOW, "a": ripe, "b": young},
        )
    report = dream(brain, settings, now=NOW)
    compact = step(report, "compact")
    (item,) = compact.items
    moved = _day(NOW - 61 * DAY)
    assert item == {
        "trace_id": ripe,
        "statement": f"User: We moved to Porto on {moved}. The flat has a balcony over the river.",
    }
    episode = mc.get_trace(brain, ripe, identity=SYSTEM)
    assert (episode.type, episode.sources) == ("episodic", [{"turn": "t9"}])
    assert "compacted" in episode.tags and "yesterday" in episode.content
    with brain.read() as conn:
        (stated,) = conn.execute(
            text(
                "SELECT id FROM memory_traces WHERE json_extract(metadata, '$.compacted_from') = :e"
            ),
            {"e": ripe},
        ).all()
    fact = mc.get_trace(brain, stated[0], identity=SYSTEM)
    assert (fact.type, fact.sources, fact.content) == (
        "semantic",
        [{"trace": ripe}],
        item["statement"],
    )
    assert FACT_TAG in fact.tags  # a fact drawn from the episode: it ranks as facts do
    assert "compacted" not in mc.get_trace(brain, young, identity=SYSTEM).tags
    assert "compacted" not in mc.get_trace(brain, rare, identity=SYSTEM).tags
    # Compacted once: the next pass leaves it be.
    assert step(dream(brain, settings, now=NOW + DAY), "compact").items == []
    # Undone with the rest of its pass: the statement goes, the episode is as it was.
    undo_pass(brain, report.pass_id, now=NOW + 2 * DAY, identity=mc.OPEN)
    with brain.read() as conn:
        held = conn.execute(
            text("SELECT count(*) FROM memory_traces WHERE id = :id AND deleted = 0"),
            {"id": fact.id},
        ).scalar_one()
    assert held == 0
    assert "compacted" not in mc.get_trace(brain, ripe, identity=SYSTEM).tags


def test_compact_writes_no_statement_the_episodes_facts_already_make(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    episode = add(brain, "User: I work as a nurse in Leeds.", age_days=60, type="episodic")
    add(brain, "User: I work as a nurse in Leeds.", sources=[{"trace": episode}], age_days=60)
    with brain.transaction() as conn:
        conn.execute(
            text("UPDATE memory_traces SET retrieval_count = 5 WHERE id = :e"), {"e": episode}
        )
    compact = step(dream(brain, settings, now=NOW), "compact")
    assert compact.items == [{"trace_id": episode, "statement": None}]
    assert compact.counts == {"compacted": 1, "stated": 0}


# -- reindex, log, report ------------------------------------------------------------


def test_reindex_rebuilds_an_inconsistent_index_and_logs_the_pass(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    trace_id = add(brain, "indexed words")
    with brain.transaction() as conn:  # change content behind the index's back
        conn.execute(
            text("UPDATE memory_traces SET content = 'other words' WHERE id = :id"),
            {"id": trace_id},
        )
    report = dream(brain, settings, now=NOW)
    assert step(report, "reindex").counts["rebuilt"] == 1
    assert [
        h.trace.id for h in mc.search(brain, "other", embedder=None, identity=SYSTEM).results
    ] == [trace_id]
    assert [p.check for p in doctor(brain)] == ["hashes"]  # the hash was stale too, not the index
    passes = list_passes(brain, identity=mc.OPEN)
    assert passes[0]["pass_id"] == report.pass_id and passes[0]["status"] == "ok"
    assert report.report_path == f"dream-reports/{report.pass_id}.json"
    doc = json.loads((settings.data_dir / report.report_path).read_text())
    assert doc["summary"]["durationMs"] >= 0
    markdown = (settings.data_dir / report.report_path).with_suffix(".md")
    assert markdown.read_text().startswith("# Dream pass")


def test_a_second_pass_while_one_holds_the_lease_says_already_running(
    brain: mc.Brain, settings: mc.Settings, digest: Any
) -> None:
    add(brain, "x", age_days=400)
    assert acquire_lease(brain, "dream", "someone-else", 60)
    before = digest(brain)
    report = dream(brain, settings, now=NOW)
    assert report.status == "already_running"
    assert report.summary() == {
        "pruned": 0,
        "merged": 0,
        "mergeProposed": 0,
        "superseded": 0,
        "conflictsProposed": 0,
        "derived": 0,
        "compacted": 0,
        "durationMs": 0,
    }
    assert digest(brain) == before


def test_a_dry_run_changes_nothing_at_all(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder
) -> None:
    add(brain, "same", tags=["a"])
    add(brain, "same", tags=["b"])
    add(brain, "old", age_days=400)
    for d in range(3):
        add(brain, f"hiking alps zermatt notes {d}")
    embed_missing(brain, stub)
    feedback.record_retrieval(brain, "ret_1", [], at=NOW)
    before = full_digest(brain)
    report = dream(brain, settings, embedder=stub, dry_run=True, now=NOW)
    assert report.status == "dry_run"
    assert report.summary()["pruned"] == 1 and report.summary()["merged"] == 1
    assert report.summary()["derived"] == 1
    assert full_digest(brain) == before
    assert not (Path(settings.data_dir) / "proposals").exists() or not any(
        (Path(settings.data_dir) / "proposals").rglob("*.json")
    )
    assert not (Path(settings.data_dir) / "dream-reports").exists()


def test_passes_never_lose_content_unattended(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder
) -> None:
    """Whatever passes do, a trace is deleted only as an exact duplicate whose
    survivor holds the identical content (listed in the report)."""
    for i in range(60):
        add(
            brain,
            f"memory {i % 5} about topic {i % 3}",
            age_days=(i * 37) % 500,
            scope_id=f"u{i % 2}",
        )
        add(brain, f"memory {i % 5} about topic {i % 3}!", age_days=1, scope_id=f"u{i % 2}")
    embed_missing(brain, stub)
    listed: set[str] = set()
    for _ in range(3):
        report = dream(brain, settings, embedder=stub, now=NOW)
        for item in step(report, "merge").items:
            listed.update(item.get("merged", []))
    with brain.read() as conn:
        deleted = conn.execute(
            text("SELECT id, content, deleted_reason FROM memory_traces WHERE deleted = 1")
        ).all()
    assert deleted, "the fixture should contain exact duplicates"
    for trace_id, content, reason in deleted:
        assert trace_id in listed
        survivor = mc.get_trace(brain, reason.removeprefix("merged into "), identity=SYSTEM)
        assert survivor.content == content


class _FakeChat:
    """A loopback OpenAI-compatible chat endpoint answering one fixed insight."""

    def __init__(self, answer: str | None) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        outer = self
        self.requests: list[dict[str, Any]] = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                if answer is None:
                    self.send_response(400)
                    self.end_headers()
                    return
                reply = json.dumps(
                    {"choices": [{"message": {"content": answer}}], "usage": {"total_tokens": 42}}
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize(
    ("answer", "kept"),
    [
        # Grounded: every word and number of it is the memories'.
        (
            '{"insight": "The user — went hiking in the alps near Zermatt on days 0, 1 and 2."}',
            True,
        ),
        # A claim no memory makes (a number, a place): the offline digest instead.
        ('{"insight": "The user climbed the Matterhorn 3 times in 1998."}', False),
        ('{"insight": ""}', False),  # malformed
        (None, False),  # the endpoint fails
    ],
)
def test_derive_keeps_the_llms_insight_only_when_its_claims_are_the_memories(
    brain_url: str, tmp_path: Path, stub: StubEmbedder, answer: str | None, kept: bool
) -> None:
    brain, derive, requests = _hikes_derived(brain_url, tmp_path, stub, answer)
    insight = mc.get_trace(brain, derive.items[0]["insight"], identity=SYSTEM)
    asked = requests[0]["messages"][1]["content"]
    assert "zermatt" in asked and _day(NOW) in asked  # the statements, dated
    if kept:
        assert insight.content == json.loads(answer or "{}")["insight"]
        assert insight.metadata["derived_by"] == "llm"
    else:
        assert insight.content.startswith("The user — we went hiking in the alps near zermatt")
        assert insight.metadata["derived_by"] == "offline"


def _hikes_derived(
    brain_url: str, tmp_path: Path, stub: StubEmbedder, answer: str | None, dry_run: bool = False
) -> tuple[mc.Brain, Any, list[dict[str, Any]]]:
    """A pass's derive step over three hikes, an LLM answering ``answer`` configured; the
    brain, the step and the requests the LLM got."""
    chat = _FakeChat(answer)
    try:
        settings = mc.load_settings(
            brain_url=brain_url, data_dir=tmp_path / "d", llm_base_url=chat.url, llm_max_retries=0
        )
        brain = mc.open_brain(settings)
        for d in range(3):
            add(brain, f"we went hiking in the alps near zermatt on day {d}")
        embed_missing(brain, stub)
        report = dream(brain, settings, embedder=stub, now=NOW, dry_run=dry_run)
    finally:
        chat.close()
    return brain, step(report, "derive"), chat.requests


def _day(when: float) -> str:
    return written_day(datetime.fromtimestamp(when, UTC).date())


def test_a_dry_run_says_the_llm_would_write_the_insight_without_asking_it(
    brain_url: str, tmp_path: Path, stub: StubEmbedder
) -> None:
    _, derive, requests = _hikes_derived(
        brain_url, tmp_path, stub, '{"insight": "unused"}', dry_run=True
    )
    assert not requests
    (item,) = derive.items
    assert item["written_by"] == "llm" and item["insight"] is None
    assert item["content"].startswith("The user — ")
    assert any("offline digest" in note for note in derive.notes)
