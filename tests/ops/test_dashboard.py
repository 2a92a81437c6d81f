"""ops/grafana/reverie.json: valid, on the datasource variable, over Reverie's metrics only."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

DASHBOARD = Path(__file__).resolve().parents[2] / "ops" / "grafana" / "reverie.json"
DATASOURCE_REF = {"type": "prometheus", "uid": "${datasource}"}


def test_the_dashboard_is_valid_json_with_a_title_and_uid() -> None:
    doc = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    assert doc["uid"] == "reverie"
    assert doc["title"] == "Reverie"
    assert doc["panels"]


def test_the_datasource_variable_is_a_prometheus_data_source(dashboard: dict[str, Any]) -> None:
    [variable] = [v for v in dashboard["templating"]["list"] if v["name"] == "datasource"]
    assert variable["type"] == "datasource"
    assert variable["query"] == "prometheus"


def test_every_panel_and_query_uses_the_datasource_variable(dashboard: dict[str, Any]) -> None:
    queried = [p for p in dashboard["panels"] if p["type"] != "row"]
    assert len(queried) >= 30
    for panel in queried:
        assert panel["datasource"] == DATASOURCE_REF, panel["title"]
        assert panel["targets"], f"{panel['title']}: no query"
        for target in panel["targets"]:
            assert target["datasource"] == DATASOURCE_REF, panel["title"]
            assert target["expr"].strip(), panel["title"]
    for row in (p for p in dashboard["panels"] if p["type"] == "row"):
        assert not row.get("targets"), row["title"]


def test_no_two_panels_share_an_id(dashboard: dict[str, Any]) -> None:
    ids = Counter(p["id"] for p in dashboard["panels"])
    ids.update(p["id"] for row in dashboard["panels"] for p in row.get("panels", []))
    assert [i for i, n in ids.items() if n > 1] == []


def test_every_query_refers_only_to_grafana_builtin_variables(
    dashboard_exprs: list[Any], resolved: Callable[[str], str]
) -> None:
    for query in dashboard_exprs:
        assert "$" not in resolved(query.expr), query.where


def test_the_panels_cover_every_area_an_operator_watches(dashboard: dict[str, Any]) -> None:
    rows = {p["title"] for p in dashboard["panels"] if p["type"] == "row"}
    assert rows == {
        "Write path",
        "Queues and jobs",
        "Brain",
        "Proposals",
        "Dream passes",
        "Search",
        "HTTP API",
        "Scheduler",
    }


def test_every_metric_a_panel_queries_is_one_reverie_exposes(
    exposed_names: set[str], dashboard_exprs: list[Any], names_in: Callable[[str], set[str]]
) -> None:
    unknown = {
        (query.where, name)
        for query in dashboard_exprs
        for name in names_in(query.expr)
        if name not in exposed_names
    }
    assert unknown == set()
    queried = {name for query in dashboard_exprs for name in names_in(query.expr)}
    assert all(name.startswith(("reverie_", "dramatiq_")) for name in queried), queried


def test_the_metric_name_parser_finds_names_and_skips_functions(
    names_in: Callable[[str], set[str]],
) -> None:
    expr = (
        'histogram_quantile(0.95, sum by (le, route) (rate(a_bucket{route=~"x(y)"}[5m]))) '
        "/ on() group_left() (max without (instance) (b) or vector(0)) > 2 * 86400 and time() - c"
    )
    assert names_in(expr) == {"a_bucket", "b", "c"}
