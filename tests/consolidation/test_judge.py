"""A pass's judge is the configured reasoner -- here the host's command line, a fake
``claude`` first on PATH -- asked at most REVERIE_DREAM_MAX_JUDGE_CALLS times a pass,
never twice for one question (the judgement cache answers it), and what it spent is
in the pass's report and metrics."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from sqlalchemy import text

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.consolidation.dream import dream, render_markdown
from memory_core.embedders.stub import StubEmbedder
from memory_core.embeddings import embed_missing
from memory_core.forget import forget_scope_id
from memory_core.traces.decay import DAY
from reverie.observability.metrics import Metrics
from tests.fakes import FakeHostCli

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC).timestamp()
CATS = ("Miso", "Tofu", "Pixel")


@pytest.fixture
def claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeHostCli:
    fake = FakeHostCli(tmp_path / "claude", "claude")
    fake.on_path(monkeypatch)
    return fake


@pytest.fixture
def stub() -> StubEmbedder:
    return StubEmbedder()


def host(settings: mc.Settings, **more: Any) -> mc.Settings:
    """The brain's settings, its passes judged by claude (and writing no insight, unless
    ``more`` says otherwise: merge alone asks)."""
    values = {
        "reasoner": "host",
        "host_cli": "claude",
        "host_timeout_s": 10.0,
        "dream_derive_max": 0,
        **more,
    }
    return mc.load_settings(brain_url=settings.brain_url, data_dir=settings.data_dir, **values)


def near_pairs(brain: mc.Brain, stub: StubEmbedder, cats: tuple[str, ...], who: str) -> None:
    """A pair the verifier takes for one fact, for each cat, in ``who``'s memory."""
    for cat in cats:
        for at, said in (
            (T0, f"Our cat {cat} hates the vacuum cleaner."),
            (T0 + DAY, f"our cat {cat.lower()} hates the vacuum cleaner"),
        ):
            mc.add_trace(
                brain, said, type="semantic", scope="user", scope_id=who,
                now=at, occurred_at=at, identity=SYSTEM,
            )  # fmt: skip
    embed_missing(brain, stub)


def merge_of(report: Any) -> Any:
    return next(s for s in report.steps if s.name == "merge")


def test_a_passes_judge_calls_stop_at_the_bound_and_the_report_says_so(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder, claude: FakeHostCli
) -> None:
    near_pairs(brain, stub, CATS, "alice")
    report = dream(brain, host(settings, dream_max_judge_calls=1), embedder=stub, now=T0 + 2 * DAY)
    assert len(claude.calls()) == 1
    spent = report.judge
    assert spent is not None
    assert (spent["reasoner"], spent["calls"], spent["over_budget"]) == ("host:claude", 1, 2)
    assert (spent["tokens"], spent["cached"], spent["failed"]) == (120, 0, 0)
    assert spent["seconds"] > 0
    merge = merge_of(report)
    assert merge.counts["proposed"] == 2  # the two not asked keep the verifier's verdict
    assert [i["kind"] for i in merge.items if i.get("kind") == "llm"] == ["llm"]
    assert "2 not asked past the bound" in render_markdown(report.to_dict())
    metrics = Metrics(CollectorRegistry())
    metrics.observe_dream(report)
    assert metrics.judge_calls._value.get() == 1
    assert metrics.judge_tokens._value.get() == 120
    assert metrics.judge_unasked.labels("over_budget")._value.get() == 2


def test_a_repeated_judgement_is_answered_from_the_cache(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder, claude: FakeHostCli
) -> None:
    near_pairs(brain, stub, CATS[:1], "alice")
    claude.set("good", same={"same": True, "reason": "the same cat"})
    # No room for proposals: the verified pair is carried to the next pass, judged again.
    s = host(settings, dream_max_proposals=0)
    first = dream(brain, s, embedder=stub, now=T0 + 2 * DAY)
    second = dream(brain, s, embedder=stub, now=T0 + 3 * DAY)
    assert first.judge is not None and second.judge is not None
    assert (first.judge["calls"], first.judge["cached"]) == (1, 0)
    assert (second.judge["calls"], second.judge["cached"]) == (0, 1)
    assert len(claude.calls()) == 1
    # Past its age the judgement is asked again, and the re-index step trims it.
    later = dream(brain, host(settings, dream_max_proposals=0, judge_cache_days=1),
                  embedder=stub, now=T0 + 5 * DAY)  # fmt: skip
    assert later.judge is not None and later.judge["calls"] == 1
    assert len(claude.calls()) == 2
    reindex = next(s for s in later.steps if s.name == "reindex")
    assert reindex.counts["judgements_trimmed"] == 0  # the fresh answer replaced the old


def test_the_cache_keeps_to_its_size(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder, claude: FakeHostCli
) -> None:
    near_pairs(brain, stub, CATS, "alice")
    report = dream(brain, host(settings, judge_cache_max=2), embedder=stub, now=T0 + 2 * DAY)
    assert report.judge is not None and report.judge["calls"] == 3
    reindex = next(s for s in report.steps if s.name == "reindex")
    assert reindex.counts["judgements_trimmed"] == 1
    assert len(cached(brain, rows=True)) == 2


def test_forgetting_a_user_takes_what_was_judged_of_their_words(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder, claude: FakeHostCli
) -> None:
    near_pairs(brain, stub, CATS[:2], "alice")
    near_pairs(brain, stub, CATS[2:], "bob")
    claude.set("good", same={"same": False, "reason": "qzvormian and the other cat"})
    dream(brain, host(settings), embedder=stub, now=T0 + 2 * DAY)
    assert cached(brain) == {("alice",), ("bob",)}
    forget_scope_id(brain, settings, "alice", scope="user", identity=SYSTEM)
    assert cached(brain) == {("bob",)}


def cached(brain: mc.Brain, *, rows: bool = False) -> Any:
    with brain.read() as conn:
        found = conn.execute(text("SELECT scope_id, answer FROM judgement_cache")).all()
    return found if rows else {(r.scope_id,) for r in found}


def test_an_insight_is_written_by_the_host_and_counted(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder, claude: FakeHostCli
) -> None:
    near_pairs(brain, stub, CATS[:2], "alice")
    digest = "The user — their cat Miso hates the vacuum cleaner; Tofu hates the vacuum cleaner"
    claude.set("good", same={"same": True, "reason": "same"}, insight={"insight": digest})
    report = dream(brain, host(settings, dream_derive_max=5), embedder=stub, now=T0 + 2 * DAY)
    derive = next(s for s in report.steps if s.name == "derive")
    assert [(i["content"], i["written_by"]) for i in derive.items] == [(digest, "llm")]
    asked = [c for c in claude.calls() if "You consolidate" in c["argv"][4]]
    assert len(asked) == 1 and "tofu" in asked[0]["stdin"].lower()
    assert report.judge is not None and report.judge["calls"] == 3  # two pairs, one digest


def test_a_dry_run_asks_nothing(
    brain: mc.Brain, settings: mc.Settings, stub: StubEmbedder, claude: FakeHostCli
) -> None:
    near_pairs(brain, stub, CATS[:1], "alice")
    report = dream(brain, host(settings), embedder=stub, dry_run=True, now=T0 + 2 * DAY)
    assert claude.calls() == [] and report.judge is None
