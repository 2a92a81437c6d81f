"""What one process holds, built once at its entry point and handed down.

A :class:`Runtime` owns the settings, the open brain (with the in-memory
state derived from it: vector indexes, term counts), the one embedder of the
process -- shared by embedding jobs and query embedding, so a process loads a
model once -- the fact extractor, the group commit of posted turns and where
follow-up work goes (:class:`~memory_core.jobs.Jobs`).  Nothing of it lives
in a module: two runtimes in one process (two brains, or one brain with other
settings) share nothing but the file.

Each run mode builds its runtime in one place (``reverie.compose``); library
functions take what they need of it (a brain, an embedder) as arguments.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from memory_core.brain.db import Brain, open_brain
from memory_core.embedders import make_embedder
from memory_core.embedders.base import Embedder
from memory_core.errors import ReverieError
from memory_core.jobs import Jobs, JobSender, NoQueue
from memory_core.retrieval.query_embedding import QueryEmbedder, Unusable, query_embedder_for
from memory_core.retrieval.rerank import Reranker
from memory_core.settings import Settings

if TYPE_CHECKING:
    from memory_core.extraction import ExtractionOutcome, ExtractTurn
    from memory_core.inbox.group_commit import TurnBatcher
    from memory_core.inbox.turns import Accepted, Turn

log = logging.getLogger(__name__)


class Runtime:
    """Settings, brain, embedder, extractor and job sender of one process."""

    def __init__(self, settings: Settings, brain: Brain, sender: JobSender | None = None) -> None:
        self.settings = settings
        self.brain = brain
        self.jobs = Jobs(sender if sender is not None else NoQueue(), settings)
        self._lock = threading.Lock()
        self._embedder: Embedder | None = None
        self._embedder_error: ReverieError | None = None
        self._embedder_made = False
        self._query_embedder: QueryEmbedder | None = None
        self._extract: ExtractTurn | None = None
        self._batcher: TurnBatcher | None = None
        self._reranker: Reranker | None = None

    @classmethod
    def open(
        cls, settings: Settings, *, create: bool = True, sender: JobSender | None = None
    ) -> Runtime:
        """A runtime over the brain ``settings`` name (created unless ``create`` is False)."""
        return cls(settings, open_brain(settings, create=create), sender)

    def send_jobs_to(self, sender: JobSender) -> None:
        """Where follow-up work goes from now on (a queue built after the runtime, whose
        workers run against it)."""
        self.jobs.sender = sender

    def embedder(self) -> Embedder | None:
        """The process's embedder, made on first use (None: no embedder configured).

        Raises the :class:`~memory_core.errors.ReverieError` that made it unusable.
        """
        if not self._embedder_made:
            with self._lock:
                if not self._embedder_made:
                    try:
                        self._embedder = make_embedder(self.settings)
                    except ReverieError as e:
                        self._embedder_error = e
                    self._embedder_made = True
        if self._embedder_error is not None:
            raise self._embedder_error
        return self._embedder

    def warm_up(self) -> threading.Thread:
        """Load the embedding model in the background, so the first embedding job or
        search does not wait for it (a local model takes a second or two to load).
        Failures are only logged: the job or search that needs the model reports them."""

        def load() -> None:
            try:
                embedder = self.embedder()
                if embedder is not None:
                    embedder.embed(["warm-up"])
            except Exception as e:
                log.warning("the embedding model could not be loaded ahead: %s", e)

        thread = threading.Thread(target=load, name="embedder-warm-up", daemon=True)
        thread.start()
        return thread

    @property
    def query_embedder(self) -> QueryEmbedder | Unusable | None:
        """What this process's searches embed their queries with: its embedder, cached,
        timed out and paused after a failure; or why it has none (searches then answer
        from BM25 alone and say so)."""
        try:
            embedder = self.embedder()
        except ReverieError as e:
            return Unusable(str(e))
        if embedder is None:
            return None
        with self._lock:
            if self._query_embedder is None:
                self._query_embedder = query_embedder_for(self.settings, embedder)
            return self._query_embedder

    def extract(self, user: str, assistant: str, *, when: float | None = None) -> ExtractionOutcome:
        """One turn's facts, by the configured extractor (made on first use)."""
        if self._extract is None:
            from memory_core.extraction import make_extract

            with self._lock:
                if self._extract is None:
                    self._extract = make_extract(self.settings)
        return self._extract(user, assistant, when=when)

    def submit_turn(self, turn: Turn) -> tuple[Accepted, bool]:
        """Commit a posted turn to the inbox (concurrent posts share one commit), then
        queue its ingestion; answers it and whether it was queued."""
        if self._batcher is None:
            from memory_core.inbox.group_commit import TurnBatcher

            with self._lock:
                if self._batcher is None:
                    self._batcher = TurnBatcher(self.brain, self.jobs.ingest)
        return self._batcher.submit(turn)

    def reranker(self) -> Reranker | None:
        """This process's client of the rerank endpoints (made on first use); None when
        none is configured (``REVERIE_RERANK_ENDPOINTS``)."""
        if not self.settings.rerank_endpoints:
            return None
        with self._lock:
            if self._reranker is None:
                self._reranker = Reranker(self.settings)
            return self._reranker

    def close(self) -> None:
        """Stop the group commit and the query embedding threads; close the brain."""
        with self._lock:
            batcher, self._batcher = self._batcher, None
            query, self._query_embedder = self._query_embedder, None
            reranker, self._reranker = self._reranker, None
        if reranker is not None:
            reranker.close()
        if batcher is not None:
            batcher.close()
        if query is not None:
            query.close()
        self.brain.close()
