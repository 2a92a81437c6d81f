"""What the ops tests share: ops/ paths, the dashboard's and the rules' PromQL,
and Prometheus's binaries (missing: skip locally, fail in CI, like Redis)."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

import memory_core as mc
from reverie.compose import app as api_app
from reverie.compose import embedded
from tests.conftest import LOCAL

OPS = Path(__file__).resolve().parents[2] / "ops"
DASHBOARD = OPS / "grafana" / "reverie.json"
PROMETHEUS_CONFIG = OPS / "prometheus.yml"
ALERTS = OPS / "alerts.yml"
DATASOURCE_REF = {"type": "prometheus", "uid": "${datasource}"}
JOBS = {"reverie-api", "reverie-workers", "reverie-scheduler"}

# Grafana's built-in variables, as the integration test resolves them: windows
# long enough to hold the whole short run.
GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$__range": "5m", "$__interval": "15s"}

# Series names each family type exposes.
_SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "gauge": ("",),
}
_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset"}
_KEYWORDS |= {"and", "or", "unless", "inf", "nan"}


@dataclass(frozen=True)
class Query:
    """One PromQL expression and where it comes from (a panel or an alert)."""

    where: str
    expr: str


def metric_names(expr: str) -> set[str]:
    """The metric names an expression selects (functions and keywords left out)."""
    s = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # label values
    s = re.sub(r"\{[^}]*\}", " ", s)  # label matchers
    s = re.sub(r"\[[^\]]*\]", " ", s)  # ranges and subqueries
    s = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)
    names = set()
    for m in re.finditer(r"(?<![\w.$])[A-Za-z_:][A-Za-z0-9_:]*", s):
        if s[m.end() :].lstrip().startswith("(") or m.group().lower() in _KEYWORDS:
            continue  # a function call or a keyword
        names.add(m.group())
    return names


def resolve(expr: str) -> str:
    """``expr`` with Grafana's built-in variables replaced by concrete windows."""
    for variable, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(variable, value)
    return expr


def load_dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return data


def dashboard_queries(dashboard: dict[str, Any]) -> list[Query]:
    return [
        Query(f"panel {panel['id']} {panel['title']!r} {target['refId']}", target["expr"])
        for panel in dashboard["panels"]
        for target in panel.get("targets", [])
    ]


def alert_rules() -> list[dict[str, Any]]:
    doc = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    return [rule for group in doc["groups"] for rule in group["rules"]]


def alert_queries() -> list[Query]:
    return [Query(f"alert {rule['alert']}", rule["expr"]) for rule in alert_rules()]


def _binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is required in CI and is not installed (Debian: prometheus)")
        pytest.skip(f"{name} not installed (Debian package prometheus)")
    return path


@pytest.fixture
def promtool() -> str:
    return _binary("promtool")


@pytest.fixture
def prometheus() -> str:
    return _binary("prometheus")


@pytest.fixture
def dashboard() -> dict[str, Any]:
    return load_dashboard()


@pytest.fixture
def dashboard_exprs(dashboard: dict[str, Any]) -> list[Query]:
    return dashboard_queries(dashboard)


@pytest.fixture
def rules() -> list[dict[str, Any]]:
    return alert_rules()


@pytest.fixture
def alert_exprs() -> list[Query]:
    return alert_queries()


@pytest.fixture
def names_in() -> Callable[[str], set[str]]:
    """``names_in(expr)``: the metric names a PromQL expression selects."""
    return metric_names


@pytest.fixture
def resolved() -> Callable[[str], str]:
    """``resolved(expr)``: Grafana's built-in variables replaced by concrete windows."""
    return resolve


@pytest.fixture
def exposed_names(tmp_path: Path) -> Iterator[set[str]]:
    """Every series name GET /metrics of an embedded API may carry: Reverie's,
    the brain's and dramatiq's families, counted even before their first sample."""
    settings = mc.load_settings(
        brain_url=f"sqlite:///{tmp_path / 'brain.sqlite'}",
        data_dir=tmp_path / "data",
        embedder="stub",
    )
    workers = embedded(settings, threads=1)
    try:
        with TestClient(api_app(workers), base_url=LOCAL) as client:
            text = client.get("/metrics").text
    finally:
        workers.stop()
    yield {
        family.name + suffix
        for family in text_string_to_metric_families(text)
        for suffix in _SUFFIXES.get(family.type, ("",))
    }
