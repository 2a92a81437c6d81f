"""ops/prometheus.yml and ops/alerts.yml: promtool accepts them; jobs, ports, annotations."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

import memory_core as mc

OPS = Path(__file__).resolve().parents[2] / "ops"
JOBS = {"reverie-api", "reverie-workers", "reverie-scheduler"}
# Series Prometheus makes itself for every target.
SYNTHETIC = {"up"}


def run_promtool(promtool: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [promtool, *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_promtool_accepts_the_scrape_config(promtool: str) -> None:
    result = run_promtool(promtool, "check", "config", str(OPS / "prometheus.yml"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 rule files found" in result.stdout + result.stderr


def test_promtool_accepts_the_alert_rules(promtool: str, rules: list[dict[str, Any]]) -> None:
    result = run_promtool(promtool, "check", "rules", str(OPS / "alerts.yml"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(rules)} rules found" in result.stdout + result.stderr


def scrape_configs() -> dict[str, dict[str, Any]]:
    doc = yaml.safe_load((OPS / "prometheus.yml").read_text(encoding="utf-8"))
    return {job["job_name"]: job for job in doc["scrape_configs"]}


def test_the_scrape_config_has_one_job_per_process_on_its_default_port() -> None:
    jobs = scrape_configs()
    assert set(jobs) == JOBS
    settings = mc.load_settings()
    ports = {
        "reverie-api": settings.api_port,
        "reverie-workers": settings.metrics_port,
        "reverie-scheduler": settings.scheduler_metrics_port,
    }
    for name, job in jobs.items():
        assert job["metrics_path"] == "/metrics"
        [static] = job["static_configs"]
        assert [t.rsplit(":", 1)[1] for t in static["targets"]] == [str(ports[name])]


def test_the_scrape_config_loads_the_alert_rules() -> None:
    doc = yaml.safe_load((OPS / "prometheus.yml").read_text(encoding="utf-8"))
    assert doc["rule_files"] == ["alerts.yml"]


def test_the_alerts_cover_lag_inbox_dream_passes_and_proposals(
    rules: list[dict[str, Any]],
) -> None:
    names = {rule["alert"] for rule in rules}
    assert {
        "ReverieIngestLagHigh",
        "ReverieInboxBacklogGrowing",
        "ReverieInboxTurnsFailed",
        "ReverieDreamPassFailing",
        "ReverieDreamPassStale",
        "ReverieProposalsBacklogOld",
    } <= names
    assert len(names) == len(rules)


def test_every_alert_has_a_summary_a_description_and_a_severity(
    rules: list[dict[str, Any]],
) -> None:
    for rule in rules:
        assert rule["annotations"]["summary"].strip(), rule["alert"]
        assert len(rule["annotations"]["description"]) > 80, rule["alert"]
        assert rule["labels"]["severity"] in {"info", "warning", "critical"}, rule["alert"]


def test_every_metric_an_alert_reads_is_one_reverie_exposes(
    exposed_names: set[str], alert_exprs: list[Any], names_in: Callable[[str], set[str]]
) -> None:
    unknown = {
        (query.where, name)
        for query in alert_exprs
        for name in names_in(query.expr)
        if name not in exposed_names | SYNTHETIC
    }
    assert unknown == set()


def test_the_readme_says_what_every_alert_means(rules: list[dict[str, Any]]) -> None:
    readme = (OPS.parent / "README.md").read_text(encoding="utf-8")
    operating = readme.split("## Operating Reverie", 1)[1].split("\n## ", 1)[0]
    for rule in rules:
        assert f"| `{rule['alert']}` |" in operating, rule["alert"]
