"""The actors: thin shells that parse a message and call memory_core.

Every actor is idempotent (the brain decides whether there is work left), so
a redelivered message is harmless.  Each sets its queue, retries and time
limit explicitly; ingest, embedding and maintenance have their own queues so
a slow embedding backlog never starves ingestion.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import dramatiq
from dramatiq.middleware import CurrentMessage

from memory_core import feedback, ingest, reconcile
from memory_core.logs import log_context
from memory_core.reconcile import JobSender
from memory_core.settings import Settings
from reverie.workers.broker import queue_depth
from reverie.workers.runtime import Runtime

log = logging.getLogger(__name__)

SECOND = 1_000  # dramatiq takes milliseconds


@dataclass(frozen=True)
class Actors:
    """The actors declared on one broker."""

    ingest_turn: dramatiq.Actor[Any, Any]
    ingest_batch: dramatiq.Actor[Any, Any]
    embed_traces: dramatiq.Actor[Any, Any]
    record_retrieval: dramatiq.Actor[Any, Any]
    reconcile: dramatiq.Actor[Any, Any]
    dream: dramatiq.Actor[Any, Any]
    runtime: Runtime

    def send_embed(self, trace_ids: Sequence[str], batch: int) -> None:
        for start in range(0, len(trace_ids), batch):
            self.embed_traces.send(list(trace_ids[start : start + batch]))

    def queue_reflect(self) -> dict[str, Any]:
        """memory_reflect for an adapter: the pass queued for the workers, off the
        request's thread; answers its id (its report: ``memctl dreams``)."""
        from memory_core.consolidation.dream import new_pass_id

        pass_id = new_pass_id()
        self.dream.send("reflect", pass_id)
        return {"passId": pass_id, "status": "queued"}

    def sender(self) -> JobSender:
        """These actors as where :func:`memory_core.reconcile.dispatch` sends work."""
        return _Sender(self)


@dataclass(frozen=True)
class _Sender:
    actors: Actors

    def ingest(self, turn_ids: Sequence[str]) -> None:
        self.actors.ingest_batch.send(list(turn_ids))

    def embed(self, trace_ids: Sequence[str]) -> None:
        self.actors.send_embed(trace_ids, self.actors.runtime.settings.embed_batch_size)

    def embed_backlog(self) -> int:
        return queue_depth(self.actors.embed_traces.broker, "embed")


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


def declare(broker: dramatiq.Broker, settings: Settings) -> Actors:
    """Declare the actors on ``broker``; they run against ``settings``' brain."""
    runtime = Runtime(settings)
    actors: Actors

    def ingest_ids(turn_ids: list[str]) -> None:
        brain = runtime.brain()
        try:
            report = ingest.ingest_turns(
                brain, turn_ids, runtime.extract, batch_extra=settings.ingest_batch
            )
        except Exception as e:
            log.warning("ingest of %d turn(s) failed: %s", len(turn_ids), e)
            ingest.record_failure(
                brain, turn_ids, repr(e), max_attempts=settings.ingest_max_attempts
            )
            raise
        runtime.observe_ingest(report)
        if report.ingested:
            with log_context(turn_ids=report.ingested, trace_ids=report.new_trace_ids):
                log.info(
                    "ingested %d turn(s) into %d trace(s)",
                    len(report.ingested),
                    len(report.new_trace_ids),
                )
        if report.new_trace_ids and runtime.embedder() is not None:
            actors.send_embed(report.new_trace_ids, settings.embed_batch_size)

    def ingest_turn(turn_id: str) -> None:
        ingest_ids([turn_id])

    def ingest_batch(turn_ids: list[str]) -> None:
        ingest_ids(turn_ids)

    def embed_traces(trace_ids: list[str]) -> None:
        embedder = runtime.embedder()
        if embedder is None:
            return
        from memory_core import embeddings

        runtime.observe_embed(embeddings.embed_traces(runtime.brain(), embedder, trace_ids))

    def record_retrieval(event_id: str, trace_ids: list[str], at: float) -> None:
        feedback.record_retrieval(runtime.brain(), event_id, trace_ids, at=at)

    def reconcile_(limit: int = 10_000) -> None:
        plan = reconcile.plan(runtime.brain(), settings, runtime.embedder(), limit=limit)
        reconcile.dispatch(plan, actors.sender())
        if plan.turn_ids or plan.unembedded_ids:
            log.info(
                "reconcile: %d turns, %d traces to embed",
                len(plan.turn_ids),
                len(plan.unembedded_ids),
            )

    def dream(reason: str = "manual", pass_id: str | None = None) -> None:
        from memory_core.consolidation.dream import dream as run_pass

        report = run_pass(
            runtime.brain(), settings, embedder=runtime.embedder(), reason=reason, pass_id=pass_id
        )
        runtime.observe_dream(report)

    actors = Actors(
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
        runtime=runtime,
    )
    return actors
