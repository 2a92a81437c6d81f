"""GET /metrics of an embedded API: every family, bounded labels, cached brain gauges."""

from __future__ import annotations

import time
import uuid

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import event

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.brain.schema import SCOPES, TRACE_TYPES
from memory_core.extraction.base import CATEGORIES
from memory_core.jobs import QUEUES
from memory_core.proposals import KINDS
from reverie.api import dream_routes, proposal_routes, token_routes
from reverie.api import routes as api_routes
from reverie.compose import Process
from reverie.observability.brain import BrainCollector
from reverie.observability.http import UNMATCHED_ROUTE
from reverie.observability.metrics import (
    DREAM_ACTIONS,
    DREAM_OUTCOMES,
    DREAM_STATUSES,
    DREAM_STEPS,
    HTTP_METHODS,
    INBOX_STATUSES,
    JUDGE_UNASKED,
    OTHER,
)
from reverie.scheduler import build_scheduler
from reverie.scheduler.jobs import DREAM_CRON, DREAM_DUE, LEASE, RECONCILE

Sample = tuple[str, frozenset[tuple[str, str]]]

REVERIE_FAMILIES = {
    # workers
    "reverie_turns_ingested",
    "reverie_facts_extracted",
    "reverie_duplicates_skipped",
    "reverie_extractor_fallbacks",
    "reverie_llm_failures",
    "reverie_llm_skipped",
    "reverie_llm_breaker_open",
    "reverie_llm_tokens",
    "reverie_embeddings_computed",
    "reverie_ingest_lag_seconds",
    "reverie_turn_failures",
    "reverie_turns_retried",
    # brain gauges
    "reverie_brain_up",
    "reverie_traces",
    "reverie_traces_deleted",
    "reverie_inbox_turns",
    "reverie_traces_missing_embeddings",
    "reverie_proposals_pending",
    "reverie_proposals_oldest_pending_age_seconds",
    "reverie_brain_size_bytes",
    "reverie_dream_last_finished_timestamp_seconds",
    "reverie_queue_messages",
    # api
    "reverie_http_requests",
    "reverie_http_request_duration_seconds",
    "reverie_search_duration_seconds",
    "reverie_search_degraded",
    # dream passes
    "reverie_dream_passes",
    "reverie_dream_duration_seconds",
    "reverie_dream_step_duration_seconds",
    "reverie_dream_items",
    "reverie_dream_last_success_timestamp_seconds",
    "reverie_dream_lease_contention",
    "reverie_dream_judge_calls",
    "reverie_dream_judge_cache_hits",
    "reverie_dream_judge_failures",
    "reverie_dream_judge_unasked",
    "reverie_dream_judge_tokens",
    "reverie_dream_judge_seconds",
    # scheduler
    "reverie_scheduler_job_runs",
    "reverie_scheduler_messages_sent",
    "reverie_scheduler_job_last_run_timestamp_seconds",
}
DRAMATIQ_FAMILIES = {
    "dramatiq_messages",
    "dramatiq_message_errors",
    "dramatiq_message_retries",
    "dramatiq_message_rejects",
    "dramatiq_messages_inprogress",
    "dramatiq_delayed_messages_inprogress",
    "dramatiq_message_duration_milliseconds",
}
ACTORS = {
    "ingest_turn",
    "ingest_batch",
    "embed_traces",
    "follow_traces",
    "record_retrieval",
    "reconcile",
    "dream",
}


def scrape(client: TestClient) -> str:
    r = client.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    return r.text


def families(exposition: str) -> set[str]:
    return {f.name for f in text_string_to_metric_families(exposition)}


def samples(exposition: str) -> dict[Sample, float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for f in text_string_to_metric_families(exposition)
        for s in f.samples
    }


def value(table: dict[Sample, float], name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in table.items() if n == name and wanted <= ls)


def post_turns(client: TestClient, n: int, prefix: str = "turn") -> None:
    for i in range(n):
        r = client.post(
            "/v1/turns",
            json={
                "user": f"I prefer green tea in the morning, {prefix} {i}",
                "assistant": "Noted: green tea.",
                "scope": "user",
                "scope_id": "u1",
            },
        )
        assert r.status_code == 202, r.text


def run_scheduler_once(settings: mc.Settings, workers: Process) -> None:
    """Start a real scheduler (its start-time jobs run), then stop it."""
    scheduler = build_scheduler(workers.runtime, background=True, metrics=workers.metrics)
    scheduler.start()
    try:
        deadline = time.monotonic() + 10
        while sum(s.fired for s in scheduler.stats.snapshot().values()) < 2:
            assert time.monotonic() < deadline, "the start-time jobs never ran"
            time.sleep(0.05)
    finally:
        scheduler.shutdown()


def test_exposition_after_turns_a_search_and_a_dream_pass_has_every_family(
    client: TestClient, workers: Process, api_settings: mc.Settings
) -> None:
    before = samples(scrape(client))
    post_turns(client, 5)
    workers.join()
    assert client.get("/v1/search", params={"q": "green tea"}).status_code == 200
    workers.actors.dream.send("manual")
    workers.join()
    run_scheduler_once(api_settings, workers)
    client.app.state.brain_metrics.ttl_s = 0  # type: ignore[attr-defined]  # fresh gauges
    text = scrape(client)
    after = samples(text)

    missing = (REVERIE_FAMILIES | DRAMATIQ_FAMILIES) - families(text)
    assert not missing, f"families not exposed: {sorted(missing)}"

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    # workers
    assert delta("reverie_turns_ingested_total") == 5
    assert delta("reverie_ingest_lag_seconds_count") == 5
    assert 0 <= delta("reverie_ingest_lag_seconds_sum") < 60
    assert delta("reverie_facts_extracted_total") >= 1
    assert delta("reverie_embeddings_computed_total") >= 5  # every episode got a vector
    assert delta("reverie_extractor_fallbacks_total") == 0  # offline extractor: no LLM
    assert delta("reverie_llm_tokens_total") == 0
    assert delta("dramatiq_messages_total", actor_name="ingest_batch", queue_name="ingest") >= 1
    assert delta("dramatiq_messages_total", actor_name="dream", queue_name="maintenance") == 1
    assert delta("dramatiq_message_errors_total") == 0
    # brain gauges
    assert value(after, "reverie_brain_up") == 1
    assert value(after, "reverie_traces", type="episodic", scope="user") >= 5
    assert value(after, "reverie_traces") >= 6  # episodes and at least one fact
    assert value(after, "reverie_inbox_turns", status="pending") == 0
    assert value(after, "reverie_inbox_turns", status="failed") == 0
    assert value(after, "reverie_traces_missing_embeddings") == 0
    assert value(after, "reverie_traces_deleted") == 0
    assert {dict(ls)["kind"] for n, ls in after if n == "reverie_proposals_pending"} == set(KINDS)
    assert value(after, "reverie_brain_size_bytes", file="brain") > 0
    assert {dict(ls)["queue"] for n, ls in after if n == "reverie_queue_messages"} == set(QUEUES)
    assert value(after, "reverie_queue_messages") == 0  # every job ran
    # api
    assert delta("reverie_http_requests_total", route="/v1/turns", method="POST", status="202") == 5
    assert delta("reverie_http_request_duration_seconds_count", route="/v1/search") == 1
    assert delta("reverie_search_duration_seconds_count") == 1
    assert delta("reverie_search_degraded_total") == 0
    # dream pass
    assert delta("reverie_dream_passes_total", status="ok") == 1
    for step in DREAM_STEPS:
        assert delta("reverie_dream_step_duration_seconds_count", step=step) == 1
    assert abs(value(after, "reverie_dream_last_success_timestamp_seconds") - time.time()) < 60
    last_ok = value(after, "reverie_dream_last_finished_timestamp_seconds", status="ok")
    assert abs(last_ok - time.time()) < 60
    assert value(after, "reverie_dream_last_finished_timestamp_seconds", status="failed") == 0
    assert delta("reverie_dream_judge_calls_total") == 0  # offline: no reasoner to ask
    # scheduler: the start-time jobs ran once each
    assert delta("reverie_scheduler_job_runs_total", job=RECONCILE, outcome="ok") == 1
    assert delta("reverie_scheduler_messages_sent_total", job=RECONCILE) == 1
    last_run = value(after, "reverie_scheduler_job_last_run_timestamp_seconds", job=RECONCILE)
    assert abs(last_run - time.time()) < 60


def allowed_label_values(client: TestClient) -> dict[str, set[str]]:
    app_routes = [
        *client.app.routes,  # type: ignore[attr-defined]
        *api_routes.router.routes,
        *token_routes.router.routes,
        *proposal_routes.router.routes,
        *dream_routes.router.routes,
    ]
    routes = {r.path for r in app_routes if getattr(r, "path", "")} | {UNMATCHED_ROUTE}
    return {
        "route": routes,
        "method": set(HTTP_METHODS) | {OTHER},
        "status": {
            *DREAM_STATUSES,
            *DREAM_OUTCOMES,
            *INBOX_STATUSES,
            *(str(c) for c in range(100, 600)),
        },
        "category": {*CATEGORIES, OTHER},
        "step": set(DREAM_STEPS),
        "action": {a for _, a in DREAM_ACTIONS},
        "kind": set(KINDS),
        "type": {*TRACE_TYPES, OTHER},
        "scope": {*SCOPES, OTHER},
        "file": {"brain", "wal"},
        "mode": {"fts", "natural", OTHER},
        "job": {DREAM_CRON, DREAM_DUE, RECONCILE, LEASE},
        "outcome": {"ok", "failed", "missed", "skipped"},
        "queue_name": set(QUEUES),
        "queue": set(QUEUES),
        "actor_name": ACTORS,
        "reason": set(JUDGE_UNASKED),
    }


def hammer(client: TestClient, n: int) -> None:
    """Requests whose paths, ids, names and methods are all new."""
    for _ in range(n):
        token = uuid.uuid4().hex
        client.get(f"/v1/memories/tr_{token}")
        client.delete(f"/v1/memories/tr_{token}")
        client.get(f"/v1/turns/turn_{token}")
        client.post(f"/v1/tools/tool_{token}", json={})
        client.get(f"/nowhere/{token}")
        client.request(f"X{token[:8].upper()}", "/v1/search")
        client.get("/v1/search", params={"q": f"word{token}", "scope": "user", "scope_id": token})


def test_no_label_takes_an_unbounded_value(client: TestClient, workers: Process) -> None:
    post_turns(client, 3)
    workers.join()
    hammer(client, 20)
    workers.join()
    scrape(client)  # the scrape's own request is counted from the next exposition on
    first = samples(scrape(client))
    hammer(client, 20)
    workers.join()
    second = samples(scrape(client))

    allowed = allowed_label_values(client)
    ours = ("reverie_", "dramatiq_")
    for name, labels in second:
        if not name.startswith(ours):
            continue  # prometheus_client's own process and GC metrics
        for label, label_value in labels:
            if label == "le":  # histogram buckets: fixed per histogram
                continue
            assert label in allowed, f"{name}: unexpected label {label}"
            assert label_value in allowed[label], f"{name}: {label}={label_value!r}"
    # New paths, ids and methods made no new series.
    assert {s for s in second if s[0].startswith(ours)} == {
        s for s in first if s[0].startswith(ours)
    }
    routes = {dict(ls).get("route") for n, ls in second if n == "reverie_http_requests_total"}
    assert {"/v1/memories/{trace_id}", "/v1/tools/{name}", UNMATCHED_ROUTE} <= routes
    methods = {dict(ls).get("method") for n, ls in second if n == "reverie_http_requests_total"}
    assert OTHER in methods


def test_a_second_scrape_within_the_ttl_does_not_query_the_brain(
    client: TestClient, workers: Process
) -> None:
    post_turns(client, 2)
    workers.join()
    brain: mc.Brain = client.app.state.brain  # type: ignore[attr-defined]
    statements: list[str] = []

    def count(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        statements.append(statement)

    event.listen(brain.engine, "before_cursor_execute", count)
    try:
        scrape(client)
        assert any("memory_traces" in s for s in statements)  # the first scrape computes
        statements.clear()
        text = scrape(client)
        # Only the request's own auth check reads the brain, not the gauges.
        assert [s for s in statements if "FROM tokens" not in s and "BEGIN" not in s] == []
        assert value(samples(text), "reverie_traces", type="episodic", scope="user") == 2
    finally:
        event.remove(brain.engine, "before_cursor_execute", count)


def test_brain_gauges_are_computed_again_once_the_ttl_passed(brain: mc.Brain) -> None:
    now = [1_000.0]
    collector = BrainCollector(brain, lambda: None, ttl_s=5.0, clock=lambda: now[0])
    statements: list[str] = []

    def count(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        statements.append(statement)

    event.listen(brain.engine, "before_cursor_execute", count)
    try:
        list(collector.collect())
        computed = len(statements)
        assert computed > 0
        now[0] += 4.9
        list(collector.collect())
        assert len(statements) == computed
        now[0] += 0.2
        mc.add_trace(
            brain, "a new fact", type="semantic", scope="user", scope_id="u1", identity=SYSTEM
        )
        statements.clear()
        fams = {f.name: f for f in collector.collect()}
        assert statements
        active = sum(s.value for s in fams["reverie_traces"].samples)
        assert active == 1
        assert "reverie_traces_missing_embeddings" not in fams  # no embedder configured
    finally:
        event.remove(brain.engine, "before_cursor_execute", count)


def test_families_parse_as_prometheus_text(client: TestClient) -> None:
    names = [f.name for f in text_string_to_metric_families(scrape(client))]
    assert len(names) == len(set(names))  # no family exposed twice
