"""Group commit for the inbox: concurrent posts share one transaction.

Each accepted turn must be durable before the API answers, and with
``synchronous=FULL`` every commit is an fsync: one commit per request makes
the disk, not the server, the limit.  Callers hand their turn to a
:class:`TurnBatcher` and wait; its thread commits whatever has queued up
meanwhile in one transaction, hands the committed ids to ``on_commit`` (the
API enqueues one ingest job for the batch), then answers every caller.  An
idle batcher commits a lone turn at once: batching adds no waiting, it only
collects what arrived while the previous commit was on disk.  A batch whose
commit fails is committed again turn by turn, so that a turn that cannot be
written fails its own request alone and every other turn is kept.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future

from memory_core.auth import SYSTEM
from memory_core.brain.db import Brain
from memory_core.inbox.turns import Accepted, Turn, accept_turns, check_turn

log = logging.getLogger(__name__)

MAX_BATCH = 128
_STOP = object()

OnCommit = Callable[[list[str]], bool]


class TurnBatcher:
    """Accepts turns from many threads, committing them in shared transactions."""

    def __init__(self, brain: Brain, on_commit: OnCommit, max_batch: int = MAX_BATCH) -> None:
        self._brain = brain
        self._on_commit = on_commit
        self._max_batch = max_batch
        self._queue: queue.Queue[object] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="turn-batcher", daemon=True)
        self._thread.start()

    def submit(self, turn: Turn) -> tuple[Accepted, bool]:
        """Block until the turn is committed; returns it and whether it was enqueued."""
        check_turn(turn)  # refuse bad input in the caller's thread, before queueing
        future: Future[tuple[Accepted, bool]] = Future()
        self._queue.put((turn, future))
        return future.result()

    @property
    def waiting(self) -> int:
        """Turns queued for the next commit."""
        return self._queue.qsize()

    def close(self) -> None:
        self._queue.put(_STOP)
        self._thread.join(10)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            batch = [item]
            while len(batch) < self._max_batch:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is _STOP:
                    self._queue.put(_STOP)
                    break
                batch.append(more)
            self._commit(batch)  # type: ignore[arg-type]

    def _commit(self, batch: list[tuple[Turn, Future[tuple[Accepted, bool]]]]) -> None:
        turns = [turn for turn, _ in batch]
        outcomes: list[Accepted | BaseException]
        try:
            outcomes = list(accept_turns(self._brain, turns, identity=SYSTEM))
        except Exception as e:
            if len(batch) == 1:
                outcomes = [e]
            else:  # one turn's failure must not be everyone's: each commits on its own
                log.warning(
                    "a group commit of %d turns failed (%s); committing each alone", len(batch), e
                )
                outcomes = [self._alone(turn) for turn in turns]
        new = [a.turn_id for a in outcomes if isinstance(a, Accepted) and not a.duplicate]
        enqueued = False
        if new:
            try:
                enqueued = self._on_commit(new)
            except Exception:  # the turns are durable; reconcile enqueues them later
                log.exception("could not enqueue %d committed turns", len(new))
        for (_, future), outcome in zip(batch, outcomes, strict=True):
            if isinstance(outcome, Accepted):
                future.set_result((outcome, enqueued and not outcome.duplicate))
            else:
                future.set_exception(outcome)

    def _alone(self, turn: Turn) -> Accepted | BaseException:
        """One turn committed in a transaction of its own, or what it failed with."""
        try:
            return accept_turns(self._brain, [turn], identity=SYSTEM)[0]
        except Exception as e:
            return e
