"""The LoCoMo bench: bootstrap intervals, question pairing, and the side-by-side report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import memory_core
from bench import locomo, locomo_month
from bench.locomo_scoring import QuestionResult, pair_results, paired_differences, score_hits
from bench.stats import bootstrap_mean
from memory_core.auth import SYSTEM


def _result(
    conversation: str, question: int, hit: float, category: int = 4, all_at_10: float = 0.0
) -> QuestionResult:
    """A scored question whose every recall figure and reciprocal rank is ``hit``."""
    return QuestionResult(
        conversation=conversation,
        question=question,
        category=category,
        evidence=("D1:1",),
        recall=dict.fromkeys((1, 5, 10, 20), hit),
        reciprocal_rank=hit,
        all_at_10=all_at_10,
        latency_ms=1.0,
        mode="fts",
        n_results=10,
    )


# -- bootstrap ---------------------------------------------------------------


def test_bootstrap_interval_of_identical_differences_is_that_point() -> None:
    interval = bootstrap_mean([2.5] * 40)
    assert interval is not None
    assert interval.mean == pytest.approx(2.5)
    assert interval.low == pytest.approx(2.5)
    assert interval.high == pytest.approx(2.5)
    assert interval.excludes_zero


def test_bootstrap_interval_of_all_zero_differences_does_not_exclude_zero() -> None:
    interval = bootstrap_mean([0.0] * 40)
    assert interval is not None
    assert (interval.low, interval.high) == (0.0, 0.0)
    assert not interval.excludes_zero


def test_bootstrap_interval_of_sample_symmetric_around_zero_includes_zero() -> None:
    interval = bootstrap_mean([-100.0, 100.0] * 50 + [0.0] * 20)
    assert interval is not None
    assert interval.mean == pytest.approx(0.0)
    assert interval.low < 0.0 < interval.high
    assert not interval.excludes_zero


def test_bootstrap_interval_of_clearly_positive_sample_excludes_zero() -> None:
    # 80 questions gained a hit, 10 lost one, 30 unchanged: mean +58.3 points.
    interval = bootstrap_mean([100.0] * 80 + [-100.0] * 10 + [0.0] * 30)
    assert interval is not None
    assert interval.mean == pytest.approx(175.0 / 3.0)
    assert 0.0 < interval.low < interval.mean < interval.high
    assert interval.excludes_zero


def test_bootstrap_interval_is_the_same_on_every_run_and_brackets_a_normal_interval() -> None:
    sample = [float(v) for v in range(-30, 61)]
    first, again = bootstrap_mean(sample), bootstrap_mean(sample)
    assert first == again
    assert first is not None
    # The normal-theory 95% half-width is 1.96 * sd / sqrt(n), about 5.4 here.
    assert first.high - first.low == pytest.approx(2 * 5.4, rel=0.1)


def test_bootstrap_of_no_differences_is_none() -> None:
    assert bootstrap_mean([]) is None


# -- pairing -----------------------------------------------------------------


def test_pairing_matches_questions_by_identity_not_by_position() -> None:
    baseline = [_result("26", 0, 0.0), _result("26", 1, 0.0), _result("26", 2, 1.0)]
    # The other run did not ask question 1, and has a question 0 of another conversation.
    other = [_result("30", 0, 1.0), _result("26", 2, 1.0), _result("26", 0, 1.0)]
    pairs = pair_results(baseline, other)
    assert [(b.conversation, b.question, o.conversation, o.question) for b, o in pairs] == [
        ("26", 0, "26", 0),
        ("26", 2, "26", 2),
    ]
    # Question 0 gained a hit, question 2 kept one; by position the second would look lost.
    assert paired_differences(pairs)["R@10"] == [100.0, 0.0]


def test_paired_multi_hop_all_at_10_counts_only_category_1_questions() -> None:
    baseline = [_result("26", 0, 0.0, category=1), _result("26", 1, 0.0, category=2)]
    other = [
        _result("26", 0, 0.0, category=1, all_at_10=1.0),
        _result("26", 1, 0.0, category=2, all_at_10=1.0),
    ]
    differences = paired_differences(pair_results(baseline, other))
    assert differences["multi-hop All@10"] == [100.0]
    assert len(differences["MRR"]) == 2


# -- configurations and the report -------------------------------------------


def test_baseline_is_run_first_even_when_not_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    configs = {
        name: locomo.SearchConfig(name, f"config {name}") for name in ("bm25", "default", "other")
    }
    monkeypatch.setattr(locomo, "CONFIGS", configs)
    assert locomo.select_configs(["other"]) == ["bm25", "other"]
    assert locomo.select_configs(["other", "bm25", "other"]) == ["bm25", "other"]
    assert locomo.select_configs(["all"]) == ["bm25", "default", "other"]
    assert locomo.select_configs(None) == ["bm25", "default"]


def _conversation(texts: list[str], questions: list[dict[str, Any]]) -> dict[str, Any]:
    """A one-session LoCoMo conversation, turns D1:1, D1:2, ... alternating speakers."""
    turns = [
        {"speaker": "Bob" if i % 2 else "Ann", "dia_id": f"D1:{i}", "text": text}
        for i, text in enumerate(texts, start=1)
    ]
    return {
        "speaker_a": "Bob",
        "speaker_b": "Ann",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": turns,
        "qa": questions,
    }


def _write_data(folder: Path) -> None:
    texts = [
        "I took a pottery class and made a blue bowl.",
        "We went hiking in the mountains near the lake.",
        "My daughter started violin lessons this spring.",
        "The tomatoes in the garden are finally ripe.",
    ]
    questions = [
        {
            "question": "What did Bob make in the pottery class?",
            "evidence": ["D1:1"],
            "category": 4,
        },
        {"question": "Who is this about?", "evidence": ["D9:9"], "category": 4},  # no such turn
        {"question": "Where did they go hiking?", "evidence": ["D1:2"], "category": 2},
        {
            "question": "Which lessons and which vegetables?",
            "evidence": ["D1:3", "D1:4"],
            "category": 1,
        },
        {"question": "What is Ann's favourite opera?", "category": 5},
    ]
    for stem in ("26", "30"):
        (folder / f"{stem}.json").write_text(json.dumps(_conversation(texts, questions)))


def test_report_for_two_configs_contains_both_side_by_side_and_their_paired_difference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_data(tmp_path)
    second = locomo.SearchConfig(
        "episodic", "BM25 limited to episodic traces", search={"type": "episodic"}
    )
    monkeypatch.setitem(locomo.CONFIGS, "episodic", second)
    out = tmp_path / "report.json"

    code = locomo.main(
        [
            "--data",
            str(tmp_path),
            "--config",
            "episodic",
            "--conversations",
            "30",
            "--json",
            str(out),
        ]
    )

    assert code == 0
    text = capsys.readouterr().out
    assert "overall / bm25" in text
    assert "overall / episodic" in text
    assert "paired difference vs bm25" in text
    assert any(line.split()[:2] == ["episodic", "multi-hop"] for line in text.splitlines())
    report = json.loads(out.read_text())
    assert report["conversations"] == ["30"]
    assert list(report["configs"]) == ["bm25", "episodic"]
    assert all(s["questions"] == 3 for s in report["configs"].values())
    assert all(s["skipped_no_matching_evidence"] == 1 for s in report["configs"].values())
    comparison = report["paired"]["configs"]["episodic"]
    assert (comparison["paired"], comparison["unpaired"]) == (3, 0)
    assert comparison["metrics"]["R@1"]["n"] == 3
    assert comparison["metrics"]["multi-hop All@10"]["n"] == 1
    assert set(report["paired"]["configs"]) == {"episodic"}


def test_unknown_conversation_is_one_clean_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_data(tmp_path)
    assert locomo.main(["--data", str(tmp_path), "--conversations", "26,99"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"error: no conversation 99 in {tmp_path}"


def test_the_month_path_scores_the_half_not_used_on_every_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_data(tmp_path)
    out = tmp_path / "report.json"

    code = locomo.main(
        ["--data", str(tmp_path), "--conversations", "30", "--path", "month", "--json", str(out)]
    )

    assert code == 0
    report = json.loads(out.read_text())
    assert list(report["configs"]) == ["bm25", "default", *locomo_month.NAMES]
    # Questions 0 and 2 are use; 1 names no turn; 3 (multi-hop) is the one scored.
    assert {s["questions"] for s in report["configs"].values()} == {1}
    assert report["configs"]["month"]["multi_hop_first_hit"]["n"] == 1
    assert report["paired"]["configs"]["month"]["paired"] == 1
    assert "multi-hop first hit an insight" in capsys.readouterr().out


def test_a_hit_counts_for_the_turns_it_stands_for_and_an_insight_only_when_credited(
    tmp_path: Path,
) -> None:
    settings = memory_core.load_settings(brain_url=f"sqlite:///{tmp_path / 'b.sqlite'}")
    brain = memory_core.open_brain(settings)
    turn, fact, insight = "turn-1", "fact-1", "insight-1"
    memory_core.add_traces(
        brain,
        [
            memory_core.NewTrace(content="Ann: I made a bowl", id=turn, metadata={"turn_id": turn}),
            memory_core.NewTrace(
                content="Ann made a bowl", id=fact, metadata={"turn_id": turn}, type="semantic"
            ),
            memory_core.NewTrace(
                content="Ann — made a bowl",
                id=insight,
                tags=["derived", "insight"],
                sources=[{"trace": fact}],
                type="semantic",
            ),
        ],
        identity=SYSTEM,
    )
    turns = locomo_month.Turns(brain, {turn: "D1:1"})
    brain.close()

    assert turns.of(fact) == ["D1:1"]
    assert turns.of(insight) == ["D1:1"]
    assert turns.of(insight, credit_insights=False) == []
    assert turns.insights == {insight}


def test_a_rank_is_a_hit_however_many_turns_it_stands_for() -> None:
    covered = [{"D1:9"}, {"D1:1", "D1:2", "D1:7"}, set(), {"D1:3"}]
    figures = score_hits(covered, ["D1:1", "D1:2", "D1:3"])
    assert figures["reciprocal_rank"] == 0.5
    assert figures["recall"][1] == 0.0
    assert figures["recall"][5] == figures["recall"][20] == 1.0
    assert figures["all_at_10"] == 1.0
    assert score_hits([{"D1:1"}] * 12, ["D1:1", "D1:2"])["all_at_10"] == 0.0


def test_an_insight_stands_for_the_statements_its_text_tells() -> None:
    insight = "Ann — made a blue bowl at pottery (8 May 2023); started violin (9 May 2023)."
    assert locomo_month.tells(insight, "I made a blue bowl at pottery class")
    assert not locomo_month.tells(insight, "We went hiking in the mountains near the lake")
