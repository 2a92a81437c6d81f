"""The brain's gauges, computed at scrape time: traces, inbox, proposals, files, passes."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector
from sqlalchemy import text

from memory_core.brain.db import Brain
from memory_core.brain.schema import SCOPES, TRACE_TYPES
from memory_core.errors import ReverieError
from memory_core.proposals import KINDS
from reverie.observability.metrics import DREAM_OUTCOMES, INBOX_STATUSES, OTHER, bounded

log = logging.getLogger(__name__)


class BrainCollector(Collector):
    """The brain's gauges, computed at scrape time and cached for ``ttl_s``.

    Register it in a registry of its own per brain (the API app holds one),
    never in the process-wide one: several brains may share a process.
    """

    def __init__(
        self,
        brain: Brain,
        embedder_model: Callable[[], str | None],
        ttl_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.brain = brain
        self.embedder_model = embedder_model
        self.ttl_s = ttl_s
        self.clock = clock
        self._lock = threading.Lock()
        self._cached: list[Metric] = []
        self._cached_at: float | None = None

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            now = self.clock()
            if self._cached_at is None or now - self._cached_at >= self.ttl_s:
                self._cached = self._compute()
                self._cached_at = now
            cached = list(self._cached)
        yield from cached

    def describe(self) -> Iterator[Metric]:
        return iter(())  # computed at scrape time only

    def _compute(self) -> list[Metric]:
        up = GaugeMetricFamily("reverie_brain_up", "1 when the brain answered the last scrape.")
        try:
            families = _brain_families(self.brain, self.embedder_model())
        except ReverieError as e:
            log.warning("metrics: brain gauges unavailable: %s", e)
            up.add_metric([], 0)
            return [up]
        up.add_metric([], 1)
        return [up, *families]


def _gauge(name: str, doc: str, labels: tuple[str, ...] = ()) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, labels=list(labels))


def _brain_families(brain: Brain, model: str | None) -> list[Metric]:
    from memory_core import embeddings, proposals

    traces = _gauge("reverie_traces", "Active traces, by type and scope.", ("type", "scope"))
    deleted = _gauge("reverie_traces_deleted", "Soft-deleted traces (kept for audit).")
    inbox = _gauge("reverie_inbox_turns", "Inbox turns, by status.", ("status",))
    by_cell = {(t, s): 0 for t in (*TRACE_TYPES, OTHER) for s in (*SCOPES, OTHER)}
    n_deleted = 0
    by_status = dict.fromkeys(INBOX_STATUSES, 0)
    with brain.read() as conn:
        rows = conn.execute(
            text("SELECT type, scope, deleted, count(*) FROM memory_traces GROUP BY 1, 2, 3")
        ).all()
        for type_, scope, is_deleted, n in rows:
            if is_deleted:
                n_deleted += int(n)
            else:
                key = (bounded(str(type_), TRACE_TYPES), bounded(str(scope), SCOPES))
                by_cell[key] += int(n)
        for status, n in conn.execute(
            text(
                "SELECT status, count(*) FROM inbox_turns "
                "WHERE status IN ('pending', 'failed') GROUP BY status"
            )
        ).all():
            by_status[str(status)] = int(n)
    for (type_, scope), n in by_cell.items():
        if n or OTHER not in (type_, scope):
            traces.add_metric([type_, scope], n)
    deleted.add_metric([], n_deleted)
    for status, n in by_status.items():
        inbox.add_metric([status], n)

    pending = proposals.pending_stats(brain)
    by_kind = _gauge("reverie_proposals_pending", "Pending proposals, by kind.", ("kind",))
    for kind in KINDS:
        by_kind.add_metric([kind], pending["by_kind"].get(kind, 0))
    oldest = _gauge(
        "reverie_proposals_oldest_pending_age_seconds",
        "Age of the oldest pending proposal (0 when none is pending).",
    )
    oldest.add_metric([], pending["oldest_age_seconds"] or 0.0)

    sizes = brain.file_sizes()
    files = _gauge("reverie_brain_size_bytes", "Bytes on disk, by file (brain, wal).", ("file",))
    for name in ("brain", "wal"):
        files.add_metric([name], sizes.get(name, 0))

    families: list[Metric] = [traces, deleted, inbox, by_kind, oldest, files, _last_passes(brain)]
    if model is not None:
        missing = _gauge(
            "reverie_traces_missing_embeddings",
            "Active traces without a vector for the configured embedder.",
        )
        missing.add_metric([], embeddings.count_missing_embeddings(brain, model))
        families.append(missing)
    return families


def _last_passes(brain: Brain) -> Metric:
    """When the last pass of each outcome finished, from ``consolidation_log``.

    Read from the brain rather than kept by a process, so a restarted worker
    forgets nothing and alerts on stale or failing passes can rely on it.
    """
    finished = dict.fromkeys(DREAM_OUTCOMES, 0.0)
    with brain.read() as conn:
        rows = conn.execute(
            text(
                "SELECT status, max(finished_at) FROM consolidation_log "
                "WHERE dry_run = 0 AND finished_at IS NOT NULL GROUP BY status"
            )
        ).all()
    for status, finished_at in rows:
        if status in finished:
            finished[str(status)] = float(finished_at)
    family = _gauge(
        "reverie_dream_last_finished_timestamp_seconds",
        "When the brain's last dream pass with each outcome finished (Unix time; 0: none yet).",
        ("status",),
    )
    for status, at in finished.items():
        family.add_metric([status], at)
    return family
