"""The LoCoMo benchmark report as text, from the same dict ``--json`` writes.

Working from the JSON-ready report keeps the printed tables and the written
figures from drifting apart; nothing here measures or recomputes anything.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

_METRICS = ("n", "R@1", "R@5", "R@10", "R@20", "MRR", "All@10")


def _table(rows: Sequence[Sequence[Any]], left: int = 1) -> list[str]:
    """Rows as aligned lines: the first ``left`` columns left-aligned, the others right-aligned."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    return [
        "  ".join(
            c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in cells
    ]


def _metric_rows(summaries: dict[str, dict[str, Any]]) -> list[list[Any]]:
    """One row per question group and config; configs of a group sit next to each other."""
    names = list(summaries)
    rows: list[list[Any]] = [["group" if len(names) == 1 else "group / config", *_METRICS]]
    groups = ["overall", *summaries[names[0]]["by_category"]]
    for group in groups:
        for name in names:
            s = summaries[name]
            figures = s["overall"] if group == "overall" else s["by_category"][group]
            label = group if len(names) == 1 else f"{group} / {name}"
            rows.append(
                [label, *(f"{figures[m]:.1f}" if m != "n" else figures[m] for m in _METRICS)]
            )
    return rows


def _extra_rows(summaries: dict[str, dict[str, Any]]) -> list[list[Any]]:
    """Per-config figures beyond the main table, one column per config."""
    names = list(summaries)
    first = summaries[names[0]]["multi_hop_all_at_10"]
    picks: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
        (
            f"multi-hop All@10, over category 1 (n={first['category_1']['n']})",
            lambda s: f"{s['multi_hop_all_at_10']['category_1']['All@10']:.1f}",
        ),
        (
            f"multi-hop All@10, over 2+ evidence ids (n={first['evidence_2_plus']['n']})",
            lambda s: f"{s['multi_hop_all_at_10']['evidence_2_plus']['All@10']:.1f}",
        ),
        ("search latency p50 (ms)", lambda s: f"{s['latency_ms']['p50']:.2f}"),
        ("search latency p95 (ms)", lambda s: f"{s['latency_ms']['p95']:.2f}"),
        ("questions used", lambda s: s["questions"]),
        ("skipped (evidence matches no turn)", lambda s: s["skipped_no_matching_evidence"]),
        ("partial evidence (unknown ids dropped)", lambda s: s["partial_evidence"]),
        ("no evidence listed (not asked)", lambda s: s["no_evidence"]),
        ("search modes", lambda s: " ".join(f"{k}={v}" for k, v in s["search_modes"].items())),
        ("mean hits per search", lambda s: s["mean_results"]),
        ("ingest time (s)", lambda s: f"{s['ingest_seconds']:.2f}"),
        ("search time (s)", lambda s: f"{s['search_seconds']:.2f}"),
    ]
    if any("multi_hop_first_hit" in s for s in summaries.values()):
        picks[2:2] = [
            (
                "multi-hop first hit an insight / covering 2+ evidence turns (%)",
                lambda s: _first_hit(s.get("multi_hop_first_hit")),
            )
        ]
    rows: list[list[Any]] = [["", *names]]
    rows += [[label, *(pick(summaries[n]) for n in names)] for label, pick in picks]
    return rows


def _first_hit(figures: dict[str, int] | None) -> str:
    if not figures or not figures["n"]:
        return "-"
    n = figures["n"]
    return f"{100 * figures['insight'] / n:.1f} / {100 * figures['covers_2'] / n:.1f}"


def _signed(value: float) -> str:
    return f"{value:+.1f}"


def _paired_rows(paired: dict[str, Any]) -> list[list[Any]]:
    """One row per compared config and metric: n, mean difference, interval, verdict."""
    rows: list[list[Any]] = [["config", "metric", "n", "diff", "95% interval", "excludes 0"]]
    for name, comparison in paired["configs"].items():
        for metric, figures in comparison["metrics"].items():
            if figures["n"] == 0:
                rows.append([name, metric, 0, "-", "-", "-"])
                continue
            low, high = figures["ci95"]
            rows.append(
                [
                    name,
                    metric,
                    figures["n"],
                    _signed(figures["mean_diff"]),
                    f"[{_signed(low)}, {_signed(high)}]",
                    "yes" if figures["excludes_zero"] else "no",
                ]
            )
    return rows


def _paired_section(paired: dict[str, Any]) -> list[str]:
    """The paired-difference table, or one line saying there was nothing to compare."""
    baseline = paired["baseline"]
    if not paired["configs"]:
        return [f"paired differences: only the baseline {baseline} was run"]
    lines = [
        f"paired difference vs {baseline}, same questions, in percentage points;",
        f"{paired['confidence']:.0%} percentile bootstrap interval over questions "
        f"({paired['resamples']:,} resamples, seed {paired['seed']})",
        "",
    ]
    unpaired = {n: c["unpaired"] for n, c in paired["configs"].items() if c["unpaired"]}
    lines += _table(_paired_rows(paired), left=2)
    lines += [
        f"{n}: {count} question(s) asked by only one side, left out"
        for n, count in unpaired.items()
    ]
    return lines


def format_report(report: dict[str, Any]) -> str:
    """The report as text: recall per group, per-config figures, then paired differences."""
    summaries = report["configs"]
    lines = [
        f"LoCoMo retrieval ({report['data']}: {', '.join(report['conversations'])}), "
        f"search limit {report['search_limit']}, figures in %",
        "",
    ]
    lines += _table(_metric_rows(summaries))
    lines.append("")
    lines += _table(_extra_rows(summaries))
    lines.append("")
    lines += _paired_section(report["paired"])
    if "real_vs_direct" in report:
        lines += ["", "the real path vs direct adds (default), same questions:", ""]
        lines += _table(_paired_rows({"configs": {"real": report["real_vs_direct"]}}), left=2)
    lines += ["", f"total run {report['elapsed_seconds']:.1f} s"]
    return "\n".join(lines)
