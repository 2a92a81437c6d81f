"""The actors: thin shells that parse a message and call memory_core.

Every actor is idempotent (the brain decides whether there is work left), so
a redelivered message is harmless.  Each sets its queue, retries and time
limit explicitly; ingest, embedding and maintenance have their own queues so
a slow embedding backlog never starves ingestion.  They run against the
process's :class:`~memory_core.runtime.Runtime` (its brain, embedder and
extractor), and :meth:`Actors.sender` is where that runtime's jobs go.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import dramatiq
from dramatiq.middleware import CurrentMessage

from memory_core import inbox, ingest, jobs
from memory_core.consolidation.dream import DreamReport
from memory_core.ingest import IngestReport
from memory_core.jobs import JobSender
from memory_core.logs import log_context
from memory_core.retrieval import feedback
from memory_core.runtime import Runtime
from reverie.observability.metrics import Metrics
from reverie.workers.broker import queue_depth

log = logging.getLogger(__name__)

SECOND = 1_000  # dramatiq takes milliseconds
PING_TIMEOUT_S = 2.0  # a readiness probe of Redis answers within this
# A worker runs the messages it holds lowest priority first: traces' vectors (0)
# before their supersession.
FOLLOW_PRIORITY = 10


@dataclass
class Actors:
    """The actors declared on one broker, and what they did in this process."""

    ingest_turn: dramatiq.Actor[Any, Any]
    ingest_batch: dramatiq.Actor[Any, Any]
    embed_traces: dramatiq.Actor[Any, Any]
    follow_traces: dramatiq.Actor[Any, Any]
    record_retrieval: dramatiq.Actor[Any, Any]
    reconcile: dramatiq.Actor[Any, Any]
    dream: dramatiq.Actor[Any, Any]
    stats: Counter[str] = field(default_factory=Counter)

    def sender(self) -> JobSender:
        """These actors as where a runtime's jobs go."""
        return _Sender(self)


@dataclass(frozen=True)
class _Sender:
    actors: Actors

    def ingest(self, turn_ids: Sequence[str]) -> None:
        self.actors.ingest_batch.send(list(turn_ids))

    def embed(self, trace_ids: Sequence[str]) -> None:
        self.actors.embed_traces.send(list(trace_ids))

    def follow(self, trace_ids: Sequence[str]) -> None:
        self.actors.follow_traces.send(list(trace_ids))

    def record_retrieval(
        self, event_id: str, trace_ids: Sequence[str], at: float, query_key: str | None = None
    ) -> None:
        self.actors.record_retrieval.send(event_id, list(trace_ids), at, query_key)

    def dream(self, reason: str, pass_id: str | None) -> None:
        self.actors.dream.send(reason, pass_id)

    def reconcile(self) -> None:
        self.actors.reconcile.send()

    def depth(self, queue: str) -> int:
        return queue_depth(self.actors.dream.broker, queue)

    def ping(self) -> None:
        """Whether Redis answers at once: on a connection of its own with a short
        timeout, as the broker's own wait out a busy moment."""
        client = getattr(self.actors.dream.broker, "client", None)
        if client is None:  # the in-process broker is always there
            return
        pool = client.connection_pool
        probe = pool.connection_class(
            **{
                **pool.connection_kwargs,
                "socket_timeout": PING_TIMEOUT_S,
                "socket_connect_timeout": PING_TIMEOUT_S,
            }
        )
        try:
            probe.send_command("PING")
            probe.read_response()
        finally:
            probe.disconnect()


class _Observer:
    """Counts what the jobs did: in ``stats`` always, in the metrics when they are on."""

    def __init__(self, stats: Counter[str], metrics: Metrics | None) -> None:
        self.stats = stats
        self.metrics = metrics
        self._lock = threading.Lock()

    def ingest(self, report: IngestReport) -> None:
        with self._lock:
            self.stats["turns_ingested"] += len(report.ingested)
            self.stats["duplicates_skipped"] += report.duplicates_skipped
            for category, n in report.facts_by_category.items():
                self.stats[f"facts_{category}"] += n
            self.stats["turn_failures"] += len(report.failed)
            for extraction in report.extractions:
                self.stats["llm_tokens"] += extraction.tokens
                if getattr(extraction, "fell_back", False):
                    self.stats["extractor_fallbacks"] += 1
                    skipped = getattr(extraction, "skipped", False)
                    self.stats["llm_skipped" if skipped else "llm_failures"] += 1
        if self.metrics is not None:
            self.metrics.observe_ingest(report)

    def retried(self, turns: int) -> None:
        with self._lock:
            self.stats["turns_retried"] += turns
        if self.metrics is not None:
            self.metrics.turns_retried.inc(turns)

    def embed(self, stored: int) -> None:
        with self._lock:
            self.stats["embeddings_computed"] += stored
        if self.metrics is not None:
            self.metrics.embeddings_computed.inc(stored)

    def dream(self, report: DreamReport) -> None:
        with self._lock:
            self.stats[f"dream_{report.status}"] += 1
        if self.metrics is not None:
            self.metrics.observe_dream(report)


def _actor(fn: Any, **options: Any) -> dramatiq.Actor[Any, Any]:
    name = options["actor_name"]

    @functools.wraps(fn)
    def logged(*args: Any, **kwargs: Any) -> Any:
        message = CurrentMessage.get_current_message()
        job = f"{name}:{message.message_id}" if message is not None else name
        with log_context(job=job):
            return fn(*args, **kwargs)

    actor: dramatiq.Actor[Any, Any] = dramatiq.actor(**options)(logged)
    return actor


def declare(broker: dramatiq.Broker, runtime: Runtime, metrics: Metrics | None) -> Actors:
    """Declare the actors on ``broker``; they run against ``runtime`` and count what they
    did in ``metrics`` (None: metrics off)."""
    settings = runtime.settings
    stats: Counter[str] = Counter()
    observe = _Observer(stats, metrics)

    def ingest_ids(turn_ids: list[str]) -> None:
        brain = runtime.brain
        try:  # a turn that fails alone is counted by the ingest, and the rest kept
            report = ingest.ingest_turns(
                brain, turn_ids, runtime.extract, batch_extra=settings.ingest_batch
            )
        except Exception as e:  # the brain failed the job as a whole
            log.warning("ingest of %d turn(s) failed: %s", len(turn_ids), e)
            inbox.record_failure(
                brain, turn_ids, repr(e), max_attempts=settings.ingest_max_attempts
            )
            raise
        observe.ingest(report)
        if report.ingested:
            with log_context(turn_ids=report.ingested, trace_ids=report.new_trace_ids):
                log.info(
                    "ingested %d turn(s) into %d trace(s)",
                    len(report.ingested),
                    len(report.new_trace_ids),
                )
        runtime.jobs.embed(report.new_trace_ids)  # when an embedder is configured

    def ingest_turn(turn_id: str) -> None:
        ingest_ids([turn_id])

    def ingest_batch(turn_ids: list[str]) -> None:
        ingest_ids(turn_ids)

    def embed_traces(trace_ids: list[str]) -> None:
        embedder = runtime.embedder()
        if embedder is None:
            return
        from memory_core import embeddings
        from memory_core.supersession import pending

        # Noted before the vectors are stored, so that no failure between the two
        # leaves a trace embedded that nothing will follow; the follow job runs after
        # the embedding waiting (a lower priority, and the model's later turn).
        pending.note(runtime.brain, trace_ids)
        observe.embed(embeddings.embed_traces(runtime.brain, embedder, trace_ids))
        runtime.jobs.follow(trace_ids)

    def follow_traces(trace_ids: list[str]) -> None:
        from memory_core.supersession import pending

        pending.follow_noted(runtime.brain, runtime.embedder(), trace_ids)

    def record_retrieval(
        event_id: str, trace_ids: list[str], at: float, query_key: str | None = None
    ) -> None:
        feedback.record_retrieval(
            runtime.brain,
            event_id,
            trace_ids,
            at=at,
            query_key=query_key,
            window_s=settings.feedback_window_s,
        )

    def reconcile_(limit: int = 10_000) -> None:
        plan = jobs.plan(runtime.brain, settings, runtime.embedder(), limit=limit)
        jobs.dispatch(plan, runtime.jobs.sender, settings.embed_batch_size)
        observe.retried(len(plan.retried_ids))
        if plan.turn_ids or plan.unembedded_ids or plan.retried_ids:
            log.info(
                "reconcile: %d turns, %d failed turns tried again, %d traces to embed",
                len(plan.turn_ids),
                len(plan.retried_ids),
                len(plan.unembedded_ids),
            )

    def dream(reason: str = "manual", pass_id: str | None = None) -> None:
        from memory_core.consolidation.dream import dream as run_pass

        report = run_pass(
            runtime.brain, settings, embedder=runtime.embedder(), reason=reason, pass_id=pass_id
        )
        observe.dream(report)

    return Actors(
        ingest_turn=_actor(
            ingest_turn,
            broker=broker,
            actor_name="ingest_turn",
            queue_name="ingest",
            max_retries=settings.ingest_max_attempts,
            min_backoff=500,
            max_backoff=60 * SECOND,
            time_limit=120 * SECOND,
        ),
        ingest_batch=_actor(
            ingest_batch,
            broker=broker,
            actor_name="ingest_batch",
            queue_name="ingest",
            max_retries=settings.ingest_max_attempts,
            min_backoff=500,
            max_backoff=60 * SECOND,
            time_limit=300 * SECOND,
        ),
        embed_traces=_actor(
            embed_traces,
            broker=broker,
            actor_name="embed_traces",
            queue_name="embed",
            max_retries=8,
            min_backoff=SECOND,
            max_backoff=300 * SECOND,
            time_limit=300 * SECOND,
        ),
        follow_traces=_actor(
            follow_traces,
            broker=broker,
            actor_name="follow_traces",
            queue_name="embed",  # it embeds too, and waits behind the embedding queued
            priority=FOLLOW_PRIORITY,
            max_retries=8,
            min_backoff=SECOND,
            max_backoff=300 * SECOND,
            time_limit=300 * SECOND,
        ),
        record_retrieval=_actor(
            record_retrieval,
            broker=broker,
            actor_name="record_retrieval",
            queue_name="maintenance",
            max_retries=5,
            min_backoff=SECOND,
            max_backoff=60 * SECOND,
            time_limit=30 * SECOND,
        ),
        reconcile=_actor(
            reconcile_,
            broker=broker,
            actor_name="reconcile",
            queue_name="maintenance",
            max_retries=0,
            time_limit=300 * SECOND,
        ),
        dream=_actor(
            dream,
            broker=broker,
            actor_name="dream",
            queue_name="maintenance",
            max_retries=1,
            min_backoff=60 * SECOND,
            time_limit=3_600 * SECOND,
        ),
        stats=stats,
    )
