"""A second ranking stage: a cross-encoder behind a ``/rerank`` endpoint reorders the
fused candidates (off unless ``REVERIE_RERANK_ENDPOINTS`` names one).

The request is the Cohere-style one most rerank servers take (``{"model", "query",
"documents", "top_n"}``, answered ``{"results": [{"index", "relevance_score"}]}``).
Endpoints are tried in order within one wall-clock deadline (``rerank_timeout_s``,
:mod:`memory_core.deadline`), each given an equal share of what is left; a slow,
hung, dripping, failing or malformed one passes the search to the next, and when
none answers the search keeps the fused order and says ``degraded: ["rerank"]``, as
it does for the vector channel.  The reranked order is merged with the fused one by
``rerank_weight``: each hit's final score is that share of its rerank score and the
rest of its fused score, both scaled to the best of the candidates.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from typing import Any

import httpx

from memory_core import deadline
from memory_core.settings import RerankEndpoint, Settings

log = logging.getLogger(__name__)


class Reranker:
    """One process's client of the rerank endpoints (a connection pool, made once)."""

    def __init__(self, settings: Settings, client: httpx.Client | None = None) -> None:
        self.endpoints = list(settings.rerank_endpoints)
        self.timeout_s = settings.rerank_timeout_s
        self.weight = settings.rerank_weight
        self.candidates = settings.rerank_candidates
        self._client = client or deadline.client()

    def scores(self, query: str, documents: Sequence[str]) -> list[float] | None:
        """Each document's relevance to ``query`` by the first endpoint that answers in
        time; None when none did (the caller keeps its own order)."""
        deadline = time.monotonic() + self.timeout_s
        for k, endpoint in enumerate(self.endpoints):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            # A hung endpoint may take its share of what is left, not the next ones' too.
            share = left / (len(self.endpoints) - k)
            try:
                return self._ask(endpoint, query, documents, share)
            except (httpx.HTTPError, ValueError, KeyError, TypeError, IndexError) as e:
                log.warning("rerank endpoint %s failed: %s", endpoint.url, e)
        return None

    def _ask(
        self, endpoint: RerankEndpoint, query: str, documents: Sequence[str], timeout: float
    ) -> list[float]:
        body: dict[str, Any] = {"query": query, "documents": list(documents)}
        body["top_n"] = len(documents)
        if endpoint.model:
            body["model"] = endpoint.model
        headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
        with deadline.within(timeout):  # the whole answer, not each read
            answer = self._client.post(endpoint.url, json=body, headers=headers, timeout=timeout)
        answer.raise_for_status()
        results = answer.json()["results"]
        scores: list[float | None] = [None] * len(documents)
        for r in results:
            index, score = int(r["index"]), float(r["relevance_score"])
            if not 0 <= index < len(documents) or not math.isfinite(score):
                raise ValueError(f"result {r!r} names no document")
            scores[index] = score
        if any(s is None for s in scores):
            raise ValueError("the answer leaves documents unscored")
        return [float(s) for s in scores if s is not None]

    def close(self) -> None:
        self._client.close()


def merged(fused: Sequence[float], reranked: Sequence[float], weight: float) -> list[float]:
    """Each candidate's final score: ``weight`` of its rerank score and the rest of its
    fused score, each scaled to [0, 1] over the candidates (min to max)."""

    def scaled(values: Sequence[float]) -> list[float]:
        low, high = min(values), max(values)
        span = high - low
        return [1.0 if span == 0 else (v - low) / span for v in values]

    return [
        (1 - weight) * f + weight * r for f, r in zip(scaled(fused), scaled(reranked), strict=True)
    ]
