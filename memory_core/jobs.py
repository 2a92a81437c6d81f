"""What the library leaves to a queue, and how it finds work the queue lost.

The brain is the truth and the queue only an accelerator.  The library never
imports a queue: it names its jobs in the :class:`JobSender` protocol, which a
process's composition root fills (dramatiq actors, or nothing at all for a
one-shot command).  :class:`Jobs` sends through it so that a broker that is
down never fails the call that left the work: the brain already holds it, and
reconcile (:func:`plan`, :func:`dispatch`) finds turns still pending after a
timeout and traces lacking embeddings and sends them again.  Losing Redis (a
flush, a restart, a worker killed with -9) therefore loses no turn.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from memory_core.brain.db import Brain
from memory_core.embedders.base import Embedder
from memory_core.inbox.turns import due_again, stale_pending
from memory_core.retrieval.feedback import new_event_id
from memory_core.settings import Settings

log = logging.getLogger(__name__)

# The queues the jobs go to: ingestion, embedding and maintenance apart, so an
# embedding backlog never delays ingestion.
QUEUES = ("ingest", "embed", "maintenance")


class JobSender(Protocol):
    """Where the library's follow-up work goes: one message per job, run by workers.

    Every job is idempotent (the brain decides whether work is left), so a
    message sent twice is harmless.  A method raises when the queue is down.
    """

    def ingest(self, turn_ids: Sequence[str]) -> None:
        """Ingest these inbox turns."""

    def embed(self, trace_ids: Sequence[str]) -> None:
        """Embed these traces (one batch)."""

    def follow(self, trace_ids: Sequence[str]) -> None:
        """Let these embedded traces supersede what they restate (after any embedding
        waiting: a trace's vector comes before its supersession)."""

    def record_retrieval(
        self, event_id: str, trace_ids: Sequence[str], at: float, query_key: str | None = None
    ) -> None:
        """Apply one search's retrieval feedback."""

    def dream(self, reason: str, pass_id: str | None) -> None:
        """Run one dream pass (under ``pass_id`` when given)."""

    def reconcile(self) -> None:
        """Find and re-send the work the queue lost."""

    def depth(self, queue: str) -> int:
        """Messages of ``queue`` not yet acknowledged."""

    def ping(self) -> None:
        """Raise when the queue cannot be reached."""


class NoQueue:
    """No queue: a one-shot command's work stays in the brain, where reconcile finds it."""

    def ingest(self, turn_ids: Sequence[str]) -> None:
        raise _not_queued("ingest")

    def embed(self, trace_ids: Sequence[str]) -> None:
        raise _not_queued("embed")

    def follow(self, trace_ids: Sequence[str]) -> None:
        raise _not_queued("follow")

    def record_retrieval(
        self, event_id: str, trace_ids: Sequence[str], at: float, query_key: str | None = None
    ) -> None:
        raise _not_queued("record_retrieval")

    def dream(self, reason: str, pass_id: str | None) -> None:
        raise _not_queued("dream")

    def reconcile(self) -> None:
        raise _not_queued("reconcile")

    def depth(self, queue: str) -> int:
        return 0

    def ping(self) -> None:
        return None


class NotQueued(RuntimeError):
    """Raised when work is sent where no queue runs (a one-shot command)."""


def _not_queued(job: str) -> NotQueued:
    return NotQueued(f"{job}: no queue in this process")


class Jobs:
    """The follow-up work of a call, sent so that a queue that is down never fails it.

    Each method answers whether the message went out; a refusal is logged
    (reconcile sends it later), except where no queue runs at all.
    """

    def __init__(self, sender: JobSender, settings: Settings) -> None:
        self.sender = sender
        self.settings = settings

    @property
    def queued(self) -> bool:
        """Whether a queue takes the work (False in a one-shot command)."""
        return not isinstance(self.sender, NoQueue)

    def ingest(self, turn_ids: Sequence[str]) -> bool:
        """Queue the ingestion of committed inbox turns."""
        return bool(turn_ids) and self._send("ingest", self.sender.ingest, list(turn_ids))

    def embed(self, trace_ids: Sequence[str]) -> bool:
        """Queue vectors for traces whose content is new, in batches."""
        if self.settings.embedder == "none" or not trace_ids:
            return False
        size = self.settings.embed_batch_size
        ids = list(trace_ids)
        return all(
            self._send("embed", self.sender.embed, ids[lo : lo + size])
            for lo in range(0, len(ids), size)
        )

    def follow(self, trace_ids: Sequence[str]) -> bool:
        """Queue the supersession by meaning of traces just embedded (one batch)."""
        return bool(trace_ids) and self._send("follow", self.sender.follow, list(trace_ids))

    def retrieved(
        self,
        trace_ids: Sequence[str],
        at: float | None = None,
        *,
        query_key: str | None = None,
        event_id: str | None = None,
    ) -> bool:
        """Queue the retrieval feedback of a search that returned ``trace_ids`` (or of
        results reported used): ``query_key`` says what was asked, so a repeat within
        the feedback window counts once; ``event_id`` keys it (a new one by default)."""
        if not trace_ids:
            return False
        at = time.time() if at is None else at
        event = event_id or new_event_id()
        return self._send(
            "record_retrieval", self.sender.record_retrieval, event, trace_ids, at, query_key
        )

    def dream(self, reason: str, pass_id: str | None = None) -> bool:
        """Queue one dream pass."""
        return self._send("dream", self.sender.dream, reason, pass_id)

    def reconcile(self) -> bool:
        """Queue a reconcile sweep."""
        return self._send("reconcile", self.sender.reconcile)

    def _send(self, what: str, send: Callable[..., None], *args: Any) -> bool:
        try:
            send(*args)
            return True
        except NotQueued:
            return False
        except Exception as e:  # the broker is foreign code; the brain holds the work
            log.warning("could not enqueue %s: %s", what, e)
            return False


@dataclass(frozen=True)
class ReconcilePlan:
    """What reconcile found: turns still pending, failed turns due for another try
    (made pending again), traces without vectors and traces embedded whose
    supersession has not run."""

    turn_ids: list[str] = field(default_factory=list)
    unembedded_ids: list[str] = field(default_factory=list)
    unfollowed_ids: list[str] = field(default_factory=list)
    retried_ids: list[str] = field(default_factory=list)


def plan(
    brain: Brain,
    settings: Settings,
    embedder: Embedder | None,
    *,
    limit: int = 10_000,
    older_than: float | None = None,
) -> ReconcilePlan:
    """Pending turns and traces waiting for supersession, both older than
    ``reconcile_after_s``, traces without vectors, and failed turns whose back-off
    has passed (:func:`~memory_core.inbox.turns.due_again`: these are made pending
    again here, so the plan is sent)."""
    after = settings.reconcile_after_s if older_than is None else older_than
    retried = due_again(
        brain,
        max_attempts=settings.ingest_max_attempts,
        tries=settings.ingest_failed_retries,
        after_s=settings.ingest_failed_retry_s,
        limit=limit,
    )
    turns = [t for t in stale_pending(brain, older_than=after, limit=limit) if t not in retried]
    missing: list[str] = []
    unfollowed: list[str] = []
    if embedder is not None:
        from memory_core.embeddings import traces_missing_embeddings
        from memory_core.supersession.pending import overdue

        missing = traces_missing_embeddings(brain, embedder.name, limit)
        unfollowed = overdue(brain, after, limit=limit)
    return ReconcilePlan(turns, missing, unfollowed, retried)


INGEST_BATCH = 64  # turns an ingest job re-enqueued by reconcile takes


def dispatch(found: ReconcilePlan, jobs: JobSender, embed_batch: int) -> None:
    """Send what :func:`plan` found: its turns in batches and, when no embed job is
    waiting, its traces without vectors and those waiting for supersession (those
    behind a backlog are not lost; only an empty queue with such traces left means
    messages went missing); failed turns tried again, one job each."""
    for start in range(0, len(found.turn_ids), INGEST_BATCH):
        jobs.ingest(found.turn_ids[start : start + INGEST_BATCH])
    for turn_id in found.retried_ids:  # each alone: a failure stays its own
        jobs.ingest([turn_id])
    if (found.unembedded_ids or found.unfollowed_ids) and jobs.depth("embed") == 0:
        for ids, send in ((found.unembedded_ids, jobs.embed), (found.unfollowed_ids, jobs.follow)):
            for start in range(0, len(ids), embed_batch):
                send(ids[start : start + embed_batch])
