"""Scoring LoCoMo questions, and comparing two runs question by question.

Pure functions over :class:`QuestionResult`; no brain, no search.  A run's mean
recall says how good a configuration is; the paired comparison says whether it
is better than another one on the same questions by more than chance.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bench.stats import bootstrap_mean

RECALL_KS = (1, 5, 10, 20)
MULTI_HOP = 1  # LoCoMo category of questions whose answer spans several turns


@dataclass(frozen=True)
class QuestionResult:
    """How search did on one question."""

    conversation: str
    question: int  # position in the conversation file's "qa" list
    category: int
    evidence: tuple[str, ...]
    recall: dict[int, float]
    reciprocal_rank: float
    all_at_10: float
    latency_ms: float
    mode: str
    n_results: int


class Asked(Protocol):
    """What scoring reads of a question."""

    @property
    def index(self) -> int: ...
    @property
    def category(self) -> int: ...
    @property
    def evidence(self) -> tuple[str, ...]: ...


def scored(
    conversation: str,
    question: Asked,
    hit_ids: Sequence[str],
    latency_ms: float,
    mode: str,
) -> QuestionResult:
    """How search did on ``question`` (its ``index``, ``category`` and ``evidence``),
    given the dia_ids of its hits, best first."""
    figures = score_question(hit_ids, question.evidence)
    return _result(conversation, question, latency_ms, mode, len(hit_ids), figures)


def scored_hits(
    conversation: str,
    question: Asked,
    covered: Sequence[set[str]],
    latency_ms: float,
    mode: str,
) -> QuestionResult:
    """How search did on ``question``, given the dia_ids each hit stands for, best first:
    a rank is a hit, however many turns it stands for."""
    figures = score_hits(covered, question.evidence)
    return _result(conversation, question, latency_ms, mode, len(covered), figures)


def _result(
    conversation: str,
    question: Asked,
    latency_ms: float,
    mode: str,
    n_results: int,
    figures: dict[str, Any],
) -> QuestionResult:
    return QuestionResult(
        conversation=conversation,
        question=question.index,
        category=question.category,
        evidence=question.evidence,
        latency_ms=latency_ms,
        mode=mode,
        n_results=n_results,
        **figures,
    )


def score_hits(covered: Sequence[set[str]], evidence: Sequence[str]) -> dict[str, Any]:
    """Recall@k, reciprocal rank and All@10 of ranked hits, each standing for a set of
    dia_ids, against evidence."""
    wanted = set(evidence)
    seen: set[str] = set()
    within: dict[int, set[str]] = {}
    first = None
    for rank, dias in enumerate(covered, start=1):
        if first is None and dias & wanted:
            first = rank
        seen |= dias
        if rank in RECALL_KS:
            within[rank] = seen & wanted
    last = seen & wanted
    reach = {k: within.get(k, last) for k in RECALL_KS}
    return {
        "recall": {k: len(reach[k]) / len(wanted) for k in RECALL_KS},
        "reciprocal_rank": 1.0 / first if first else 0.0,
        "all_at_10": 1.0 if wanted <= within.get(10, last) else 0.0,
    }


def score_question(hit_ids: Sequence[str], evidence: Sequence[str]) -> dict[str, Any]:
    """Recall@k, reciprocal rank and All@10 of a ranked list of dia_ids against evidence."""
    wanted = set(evidence)
    recall = {k: len(wanted & set(hit_ids[:k])) / len(wanted) for k in RECALL_KS}
    first = next((rank for rank, d in enumerate(hit_ids, start=1) if d in wanted), None)
    return {
        "recall": recall,
        "reciprocal_rank": 1.0 / first if first else 0.0,
        "all_at_10": 1.0 if wanted <= set(hit_ids[:10]) else 0.0,
    }


def _pct(total: float, n: int) -> float:
    return round(100.0 * total / n, 1) if n else 0.0


def summarise_group(results: Sequence[QuestionResult]) -> dict[str, Any]:
    """Mean metrics of a group of questions, as percentages with one decimal."""
    n = len(results)
    summary: dict[str, Any] = {"n": n}
    for k in RECALL_KS:
        summary[f"R@{k}"] = _pct(sum(r.recall[k] for r in results), n)
    summary["MRR"] = _pct(sum(r.reciprocal_rank for r in results), n)
    summary["All@10"] = _pct(sum(r.all_at_10 for r in results), n)
    return summary


# -- pairing two runs --------------------------------------------------------


def _every(result: QuestionResult) -> bool:
    return True


@dataclass(frozen=True)
class PairedMetric:
    """A per-question figure compared between runs, and the questions it covers."""

    name: str
    value: Callable[[QuestionResult], float]
    covers: Callable[[QuestionResult], bool] = _every


def _recall_at(k: int) -> Callable[[QuestionResult], float]:
    return lambda r: r.recall[k]


PAIRED_METRICS = (
    *(PairedMetric(f"R@{k}", _recall_at(k)) for k in RECALL_KS),
    PairedMetric("MRR", lambda r: r.reciprocal_rank),
    PairedMetric("multi-hop All@10", lambda r: r.all_at_10, lambda r: r.category == MULTI_HOP),
)


def question_key(result: QuestionResult) -> tuple[str, int]:
    """A question's identity across runs: its conversation and its place in the file."""
    return (result.conversation, result.question)


def pair_results(
    baseline: Sequence[QuestionResult], other: Sequence[QuestionResult]
) -> list[tuple[QuestionResult, QuestionResult]]:
    """The two runs' results on the same questions, in the baseline's order.

    Questions are matched by identity, not by position, so a question one run
    skipped cannot shift the rest out of step; one asked by one side only is
    left out.
    """
    by_key = {question_key(r): r for r in other}
    return [(b, by_key[key]) for b in baseline if (key := question_key(b)) in by_key]


def paired_differences(
    pairs: Sequence[tuple[QuestionResult, QuestionResult]],
) -> dict[str, list[float]]:
    """Per-question differences (other minus baseline) of each paired metric, in points."""
    return {
        m.name: [
            100.0 * (m.value(other) - m.value(base)) for base, other in pairs if m.covers(base)
        ]
        for m in PAIRED_METRICS
    }


def _interval_figures(differences: Sequence[float]) -> dict[str, Any]:
    interval = bootstrap_mean(differences)
    if interval is None:
        return {"n": 0, "mean_diff": None, "ci95": None, "excludes_zero": False}
    return {
        "n": interval.n,
        "mean_diff": round(interval.mean, 2),
        "ci95": [round(interval.low, 2), round(interval.high, 2)],
        "excludes_zero": interval.excludes_zero,
    }


def compare_results(
    baseline: Sequence[QuestionResult], other: Sequence[QuestionResult]
) -> dict[str, Any]:
    """Mean paired difference and bootstrap interval of each metric, other against baseline."""
    pairs = pair_results(baseline, other)
    return {
        "paired": len(pairs),
        "unpaired": len(baseline) + len(other) - 2 * len(pairs),
        "metrics": {
            name: _interval_figures(diffs) for name, diffs in paired_differences(pairs).items()
        },
    }
