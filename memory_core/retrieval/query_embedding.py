"""Query embeddings for search: one per process (its runtime's), cached and guarded.

Agents repeat queries, so embeddings are cached.  An embedder that fails --
whatever it raises, save for text it cannot take, which is the query's fault
and pauses nothing -- is left alone for ``search_embed_retry_s``, and one
that does not answer within ``search_embed_timeout_s`` is given up on for
that search: either way the search goes on without its vector channel
instead of failing or waiting.  Embedding runs on a small pool of its own,
so the calling thread can rank BM25 meanwhile.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

import numpy as np
import numpy.typing as npt

from memory_core.embedders.base import Embedder, QueryEmbedding
from memory_core.errors import ChannelUnavailable, InvalidArgument, ReverieError
from memory_core.settings import Settings
from memory_core.wellformed import check_text

log = logging.getLogger(__name__)

_CACHE_SIZE = 512
_EMBED_THREADS = 4
Vector = npt.NDArray[np.float32]


class QueryEmbedder:
    """An embedder for queries: cached, timed out, and paused after a failure."""

    def __init__(self, embedder: Embedder, retry_after_s: float, timeout_s: float) -> None:
        self.embedder = embedder
        # A question is read as one where the model tells the two apart (E5).
        self._embed = (
            embedder.embed_queries if isinstance(embedder, QueryEmbedding) else embedder.embed
        )
        self.retry_after_s = retry_after_s
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, Vector] = OrderedDict()
        self._failed_at: float | None = None
        self._pool: ThreadPoolExecutor | None = None

    @property
    def name(self) -> str:
        return self.embedder.name

    @property
    def dim(self) -> int:
        return int(self.embedder.dim)

    def cached(self, query: str) -> Vector | None:
        with self._lock:
            vector = self._cache.get(query)
            if vector is not None:
                self._cache.move_to_end(query)
            return vector

    def start(self, query: str) -> Future[Vector] | Vector:
        """The cached vector, or the embedding started on the pool.

        :class:`ChannelUnavailable` while paused after a failure.
        """
        check_text(query, "query")  # bad text is the caller's fault, never the embedder's
        vector = self.cached(query)
        if vector is not None:
            return vector
        with self._lock:
            failed_at = self._failed_at
        if failed_at is not None and time.monotonic() - failed_at < self.retry_after_s:
            raise ChannelUnavailable(f"embedder {self.name} failed recently; retrying later")
        with self._lock:
            if self._pool is None:  # made on first use: most processes never search
                self._pool = ThreadPoolExecutor(_EMBED_THREADS, thread_name_prefix="query-embed")
            pool = self._pool
        return pool.submit(self.embed, query)

    def wait(self, pending: Future[Vector] | Vector) -> Vector:
        """The vector :meth:`start` gave, waiting at most ``timeout_s`` for it."""
        if not isinstance(pending, Future):
            return pending
        try:
            return pending.result(timeout=self.timeout_s)
        except FutureTimeout as e:
            log.warning("embedder %s took over %g s on a query", self.name, self.timeout_s)
            self._failed()
            raise ChannelUnavailable(
                f"embedder {self.name} took longer than {self.timeout_s:g} s"
            ) from e

    def embed(self, query: str) -> Vector:
        """Embed now (on the calling thread); :class:`ChannelUnavailable` on any failure."""
        try:
            vectors = self._embed([query])
            vector = np.asarray(vectors, dtype=np.float32).reshape(-1)
            if vector.shape != (self.dim,) or not np.isfinite(vector).all():
                raise ChannelUnavailable(f"embedder {self.name} returned an unusable vector")
        except (InvalidArgument, UnicodeError) as e:  # the query's fault: no pause for anyone
            raise ChannelUnavailable(f"embedder {self.name} cannot take this query: {e}") from e
        except ReverieError as e:
            log.warning("embedder %s failed on a query: %s", self.name, e)
            self._failed()
            raise ChannelUnavailable(str(e)) from e
        except Exception as e:  # the embedder is foreign code: a bug must not fail search
            log.exception("embedder %s failed on a query", self.name)
            self._failed()
            raise ChannelUnavailable(f"embedder {self.name} failed: {e!r}") from e
        with self._lock:
            self._failed_at = None
            self._cache[query] = vector
            if len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return vector

    def close(self) -> None:
        """Stop the embedding threads (a search still waiting gets its answer first)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)

    def _failed(self) -> None:
        with self._lock:
            self._failed_at = time.monotonic()


class Unusable:
    """The configured embedder could not be made; every search says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


# What a search embeds its query with: a process's query embedder, the reason
# its embedder is unusable, a bare embedder (given a query embedder of the
# brain's, below), or None for no vector channel.
SearchEmbedder = QueryEmbedder | Unusable | Embedder | None


def query_embedder_for(settings: Settings, embedder: Embedder | None) -> QueryEmbedder | None:
    """A query embedder over ``embedder`` with the settings' timeout and pause."""
    if embedder is None:
        return None
    return QueryEmbedder(embedder, settings.search_embed_retry_s, settings.search_embed_timeout_s)


class QueryEmbedders:
    """One brain's query embedders for the bare embedders its searches were given (its
    :meth:`~memory_core.brain.db.Brain.state`): one each, so a cache and a pause outlive one
    search.  A process passes its runtime's query embedder instead."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_id: dict[int, QueryEmbedder] = {}

    def wrap(self, embedder: Embedder, settings: Settings) -> QueryEmbedder:
        with self._lock:
            found = self._by_id.get(id(embedder))
            if found is None or found.embedder is not embedder:
                found = QueryEmbedder(
                    embedder, settings.search_embed_retry_s, settings.search_embed_timeout_s
                )
                self._by_id[id(embedder)] = found
            return found

    def close(self) -> None:
        with self._lock:
            held, self._by_id = list(self._by_id.values()), {}
        for query_embedder in held:
            query_embedder.close()
