"""Reverie's counters and histograms, one set per process.

One process-wide :class:`Metrics` (``get_metrics()``, made on first use, in
prometheus_client's default registry, which is itself one per process) holds
every counter and histogram the API, the workers and the scheduler feed.  A
process's composition root asks :func:`metrics_for` once and hands the
result to its adapters; None when metrics are off.

Every label takes values from a fixed set (route templates, HTTP methods and
statuses, fact categories, step names, proposal kinds, trace types and
scopes, scheduler job ids); a value outside its set is counted as ``other``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from memory_core.extraction.base import CATEGORIES

if TYPE_CHECKING:
    from memory_core.consolidation.dream import DreamReport
    from memory_core.ingest import IngestReport
    from memory_core.settings import Settings

OTHER = "other"
HTTP_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
DREAM_STEPS = ("embed", "prune", "merge", "resolve", "strengthen", "derive", "compact", "reindex")
# (step, count key) pairs of a pass's step results that become counters.
DREAM_ACTIONS = (
    ("prune", "proposed"),
    ("merge", "merged"),
    ("merge", "proposed"),
    ("resolve", "superseded"),
    ("resolve", "proposed"),
    ("derive", "derived"),
    ("compact", "compacted"),
)
DREAM_STATUSES = ("ok", "failed", "already_running", "dry_run")
# How a pass that ran ended, as consolidation_log records it.
DREAM_OUTCOMES = ("ok", "failed", "interrupted")
INBOX_STATUSES = ("pending", "failed")
SEARCH_MODES = ("fts", "natural")
SCHEDULER_OUTCOMES = ("ok", "failed", "missed", "skipped")
# Why a dream pass left a question to its offline verdict without asking.
JUDGE_UNASKED = ("over_budget", "failing")

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
_LAG_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800)
_STEP_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600)


def bounded(value: str, allowed: Iterable[str]) -> str:
    """``value`` when it belongs to ``allowed``, else ``other``: labels stay bounded."""
    return value if value in allowed else OTHER


class Metrics:
    """Every counter and histogram Reverie's processes feed."""

    def __init__(self, registry: CollectorRegistry | None = REGISTRY) -> None:
        def counter(name: str, doc: str, labels: tuple[str, ...] = ()) -> Counter:
            return Counter(name, doc, labels, registry=registry)

        # -- workers: ingest and embedding --
        self.turns_ingested = counter("reverie_turns_ingested_total", "Turns ingested.")
        self.facts_extracted = counter(
            "reverie_facts_extracted_total", "Facts stored, by category.", ("category",)
        )
        self.duplicates_skipped = counter(
            "reverie_duplicates_skipped_total", "Facts not stored: already in the brain."
        )
        self.extractor_fallbacks = counter(
            "reverie_extractor_fallbacks_total", "Turns extracted by the offline fallback."
        )
        self.llm_failures = counter(
            "reverie_llm_failures_total", "Failed LLM extraction calls (after retries)."
        )
        self.llm_skipped = counter(
            "reverie_llm_skipped_total",
            "Turns extracted offline without asking the LLM: its breaker was open.",
        )
        self.llm_breaker_open = Gauge(
            "reverie_llm_breaker_open",
            "1 while the LLM endpoint's breaker is open (turns are extracted offline).",
            multiprocess_mode="max",
            registry=registry,
        )
        self.llm_tokens = counter("reverie_llm_tokens_total", "LLM tokens used by extraction.")
        self.turn_failures = counter(
            "reverie_turn_failures_total",
            "Failed attempts to ingest one turn (the other turns of its job were kept).",
        )
        self.turns_retried = counter(
            "reverie_turns_retried_total",
            "Failed turns reconcile sent to ingest again, each alone, after a back-off.",
        )
        self.embeddings_computed = counter(
            "reverie_embeddings_computed_total", "Trace vectors computed and stored."
        )
        self.ingest_lag = Histogram(
            "reverie_ingest_lag_seconds",
            "From a turn's acceptance by the API to its facts being searchable.",
            buckets=_LAG_BUCKETS,
            registry=registry,
        )
        # -- api --
        self.http_requests = counter(
            "reverie_http_requests_total",
            "HTTP requests, by route template, method and status.",
            ("route", "method", "status"),
        )
        self.http_duration = Histogram(
            "reverie_http_request_duration_seconds",
            "HTTP request latency, by route template, method and status.",
            ("route", "method", "status"),
            buckets=_LATENCY_BUCKETS,
            registry=registry,
        )
        self.search_duration = Histogram(
            "reverie_search_duration_seconds",
            "Search latency inside the API, by query mode (fts or natural).",
            ("mode",),
            buckets=_LATENCY_BUCKETS,
            registry=registry,
        )
        self.search_degraded = counter(
            "reverie_search_degraded_total", "Searches answered without one of their channels."
        )
        # -- dream passes --
        self.dream_passes = counter(
            "reverie_dream_passes_total", "Dream passes, by outcome.", ("status",)
        )
        self.dream_duration = Histogram(
            "reverie_dream_duration_seconds",
            "Dream pass duration (passes that ran).",
            buckets=_STEP_BUCKETS,
            registry=registry,
        )
        self.dream_step_duration = Histogram(
            "reverie_dream_step_duration_seconds",
            "Dream pass step duration, by step.",
            ("step",),
            buckets=_STEP_BUCKETS,
            registry=registry,
        )
        self.dream_items = counter(
            "reverie_dream_items_total",
            "What dream passes did: pruned (proposed), merged, derived, compacted.",
            ("step", "action"),
        )
        self.dream_last_success = Gauge(
            "reverie_dream_last_success_timestamp_seconds",
            "When the last successful dream pass ended (Unix time).",
            multiprocess_mode="max",
            registry=registry,
        )
        self.dream_lease_contention = counter(
            "reverie_dream_lease_contention_total",
            "Dream passes not started because another pass held the brain's lease.",
        )
        # -- the dream pass's judge (the configured reasoner) --
        self.judge_calls = counter(
            "reverie_dream_judge_calls_total", "Questions dream passes asked the reasoner."
        )
        self.judge_cache_hits = counter(
            "reverie_dream_judge_cache_hits_total",
            "Dream pass questions answered from the judgement cache (not asked again).",
        )
        self.judge_failures = counter(
            "reverie_dream_judge_failures_total",
            "Dream pass questions asked without a usable answer (offline verdict kept).",
        )
        self.judge_unasked = counter(
            "reverie_dream_judge_unasked_total",
            "Dream pass questions not asked (offline verdict kept): over_budget (the "
            "pass's REVERIE_DREAM_MAX_JUDGE_CALLS spent) or failing (breaker open, failures).",
            ("reason",),
        )
        self.judge_tokens = counter(
            "reverie_dream_judge_tokens_total", "Reasoner tokens dream passes spent."
        )
        self.judge_seconds = counter(
            "reverie_dream_judge_seconds_total", "Seconds dream passes waited for the reasoner."
        )
        # -- scheduler --
        self.scheduler_jobs = counter(
            "reverie_scheduler_job_runs_total",
            "Scheduler job runs, by job and outcome (ok, failed, missed, skipped).",
            ("job", "outcome"),
        )
        self.scheduler_sent = counter(
            "reverie_scheduler_messages_sent_total",
            "Scheduler runs that enqueued a message, by job.",
            ("job",),
        )
        self.scheduler_last_run = Gauge(
            "reverie_scheduler_job_last_run_timestamp_seconds",
            "When each job's last run (ok or failed) ended (Unix time).",
            ("job",),
            multiprocess_mode="max",
            registry=registry,
        )
        # Every series a dashboard or an alert reads exists from the start, at 0.
        for category in (*CATEGORIES, OTHER):
            self.facts_extracted.labels(category)
        for mode in SEARCH_MODES:
            self.search_duration.labels(mode)
        for status in DREAM_STATUSES:
            self.dream_passes.labels(status)
        for step in DREAM_STEPS:
            self.dream_step_duration.labels(step)
        for step, action in DREAM_ACTIONS:
            self.dream_items.labels(step, action)
        for reason in JUDGE_UNASKED:
            self.judge_unasked.labels(reason)

    def init_scheduler_jobs(self, job_ids: Iterable[str]) -> None:
        """Make each job's run and sent series exist at 0 (every outcome)."""
        for job in job_ids:
            for outcome in SCHEDULER_OUTCOMES:
                self.scheduler_jobs.labels(job, outcome)
            self.scheduler_sent.labels(job)

    def observe_ingest(self, report: IngestReport) -> None:
        """Count what one ingest job did."""
        self.turns_ingested.inc(len(report.ingested))
        self.duplicates_skipped.inc(report.duplicates_skipped)
        for category, n in report.facts_by_category.items():
            self.facts_extracted.labels(bounded(category, CATEGORIES)).inc(n)
        for extraction in report.extractions:
            self.llm_tokens.inc(extraction.tokens)
            if getattr(extraction, "fell_back", False):
                self.extractor_fallbacks.inc()
                if getattr(extraction, "skipped", False):
                    self.llm_skipped.inc()
                else:
                    self.llm_failures.inc()
            breaker_open = getattr(extraction, "breaker_open", None)
            if breaker_open is not None:
                self.llm_breaker_open.set(1 if breaker_open else 0)
        for lag in report.lag_seconds:
            self.ingest_lag.observe(lag)
        self.turn_failures.inc(len(report.failed))

    def observe_dream(self, report: DreamReport) -> None:
        """Count one pass: its outcome and, for a pass that ran, its steps."""
        self.dream_passes.labels(bounded(report.status, DREAM_STATUSES)).inc()
        if report.status == "already_running":
            self.dream_lease_contention.inc()
            return
        if report.status == "dry_run":
            return
        self.dream_duration.observe(report.duration_s)
        for step in report.steps:
            self.dream_step_duration.labels(bounded(step.name, DREAM_STEPS)).observe(
                step.duration_s
            )
        for step_name, action in DREAM_ACTIONS:
            if n := report.count(step_name, action):
                self.dream_items.labels(step_name, action).inc(n)
        if report.judge:
            self.observe_judge(report.judge)
        if report.status == "ok":
            self.dream_last_success.set(time.time())

    def observe_judge(self, spent: dict[str, Any]) -> None:
        """Count what one pass's judge spent (its report's ``judge``)."""
        self.judge_calls.inc(spent.get("calls", 0))
        self.judge_cache_hits.inc(spent.get("cached", 0))
        self.judge_failures.inc(spent.get("failed", 0))
        self.judge_unasked.labels("over_budget").inc(spent.get("over_budget", 0))
        self.judge_unasked.labels("failing").inc(spent.get("not_asked", 0))
        self.judge_tokens.inc(spent.get("tokens", 0))
        self.judge_seconds.inc(spent.get("seconds", 0.0))

    def observe_scheduler_event(self, job: str, outcome: str, sent: bool = False) -> None:
        """Count one scheduler job event (outcome: ok, failed, missed or skipped)."""
        self.scheduler_jobs.labels(job, outcome).inc()
        if sent:
            self.scheduler_sent.labels(job).inc()
        if outcome in ("ok", "failed"):
            self.scheduler_last_run.labels(job).set(time.time())


_metrics: Metrics | None = None
_metrics_lock = threading.Lock()


def get_metrics() -> Metrics:
    """This process's metrics, made (and registered) on first use."""
    global _metrics  # noqa: PLW0603 -- one set of metrics per process
    if _metrics is None:
        with _metrics_lock:
            if _metrics is None:
                _metrics = Metrics()
    return _metrics


def metrics_for(settings: Settings) -> Metrics | None:
    """This process's metrics, or None when ``metrics_enabled`` is off."""
    return get_metrics() if settings.metrics_enabled else None


def metrics_made() -> bool:
    """Whether this process already created its metrics (its value store is fixed)."""
    return _metrics is not None
