"""A client for OpenAI-compatible ``POST /embeddings`` endpoints, with failover.

Each batch is sent to the endpoints in the order configured, once each, until
one answers with a valid response.  What moves on to the next endpoint:

- no answer: connection refused or reset, DNS failure, any timeout;
- ``408``, ``429`` and every ``5xx``: that endpoint is busy or broken;
- ``401``, ``403``, ``404`` (and other 4xx not listed below): that endpoint is
  misconfigured (a key it does not accept, a wrong base URL, a model it does
  not serve), which another endpoint may not be;
- a ``2xx`` whose body is not a valid answer (not JSON, wrong count, wrong
  dimension, non-finite numbers).

What stops at once, without trying the others: ``400``, ``413`` and ``422``.
They refuse the request itself (an over-long input, a ``dimensions`` the model
does not support), and every endpoint would refuse the same body.

Each endpoint is given ``timeout_s`` for its whole answer, by the wall clock
(:mod:`memory_core.deadline`): one that drips its answer byte by byte is given
up on as one that does not answer.  There is no retry loop here: when every
endpoint failed the batch raises :class:`EmbedderError` naming each failure,
and the caller (a worker with its own retries, or the next backfill) tries
again later.  Within one
:meth:`OpenAIEmbedder.embed` call, later batches start at the endpoint that
last answered, so a dead first endpoint costs one timeout per call, not one
per batch; the next call starts at the first endpoint again.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import httpx
import numpy as np

from memory_core import deadline
from memory_core.embedders.base import Vectors
from memory_core.errors import ConfigError, EmbedderError

if TYPE_CHECKING:
    from memory_core.settings import Settings

log = logging.getLogger(__name__)

#: Native dimensions of well-known models; any other needs ``embed_dim``.
KNOWN_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_FATAL_STATUS = frozenset({400, 413, 422})


class _EndpointFailed(Exception):
    """Raised when one endpoint did not give a usable answer (internal)."""


class OpenAIEmbedder:
    """Embeds through ``{endpoint}/embeddings``; ``name`` is ``openai:{model}``.

    ``dimensions``, when given, is sent with every request and is the
    dimension every answer must have; without it the model must be one of
    :data:`KNOWN_DIMS`.
    """

    def __init__(
        self,
        endpoints: Sequence[str],
        model: str,
        *,
        api_key: str | None = None,
        dimensions: int | None = None,
        timeout_s: float = 30.0,
        batch_size: int = 64,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.endpoints = [_embeddings_url(e) for e in endpoints]
        if not self.endpoints:
            raise ConfigError("the openai embedder needs at least one entry in embed_endpoints")
        dim = dimensions or KNOWN_DIMS.get(model)
        if dim is None:
            raise ConfigError(f"set embed_dim: the dimension of model {model!r} is not known")
        if batch_size < 1:
            raise ConfigError("embed_batch_size must be at least 1")
        self.name = f"openai:{model}"
        self.dim = dim
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.timeout_s = timeout_s
        self._transport = transport
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAIEmbedder:
        return cls(
            settings.embed_endpoints,
            settings.embed_model,
            api_key=settings.embed_api_key,
            dimensions=settings.embed_dim,
            timeout_s=settings.embed_timeout_s,
            batch_size=settings.embed_batch_size,
        )

    def close(self) -> None:
        """Close the pooled connections; a later :meth:`embed` opens new ones."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised float32 row per text, in the order given."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        start = 0
        for lo in range(0, len(texts), self.batch_size):
            batch = list(texts[lo : lo + self.batch_size])
            out[lo : lo + len(batch)], start = self._embed_batch(batch, start)
        return out

    def _embed_batch(self, texts: list[str], first: int) -> tuple[Vectors, int]:
        body: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        client = self._http()
        failures = []
        n = len(self.endpoints)
        for k in range(n):
            i = (first + k) % n
            url = self.endpoints[i]
            try:
                return self._post(client, url, body, len(texts)), i
            except _EndpointFailed as e:
                failures.append(f"{url}: {e}")
                if k + 1 < n:
                    log.warning("embedding endpoint %s failed (%s); trying the next", url, e)
        raise EmbedderError("every embedding endpoint failed: " + "; ".join(failures))

    def _post(self, client: httpx.Client, url: str, body: dict[str, Any], count: int) -> Vectors:
        try:
            with deadline.within(self.timeout_s):  # for the whole answer, not each read
                response = client.post(url, json=body)
        except httpx.TimeoutException as e:
            raise _EndpointFailed(f"timed out ({type(e).__name__})") from e
        except httpx.HTTPError as e:
            raise _EndpointFailed(f"{type(e).__name__}: {e}") from e
        if response.status_code in _FATAL_STATUS:
            raise EmbedderError(
                f"{url} refused the request: HTTP {response.status_code} {_snippet(response)}"
            )
        if not response.is_success:
            raise _EndpointFailed(f"HTTP {response.status_code} {_snippet(response)}")
        try:
            payload = response.json()
        except ValueError as e:
            raise _EndpointFailed(f"answer is not JSON: {_snippet(response)}") from e
        return _parse(payload, count, self.dim)

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = self._new_client()
            return self._client

    def _new_client(self) -> httpx.Client:
        if self._transport is None:
            return deadline.client(timeout=self.timeout_s, headers=self._headers)
        return httpx.Client(
            headers=self._headers,
            timeout=httpx.Timeout(self.timeout_s),
            transport=self._transport,
            follow_redirects=False,
        )


def _embeddings_url(base: str) -> str:
    base = base.strip().rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise ConfigError(f"embedding endpoint {base!r} must be an http(s) URL")
    return base if base.endswith("/embeddings") else base + "/embeddings"


def _snippet(response: httpx.Response) -> str:
    return repr(response.text[:200])


def _parse(payload: Any, count: int, dim: int) -> Vectors:
    """Validate an embeddings answer and return its rows, by index, normalised."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise _EndpointFailed("answer has no 'data' list")
    if len(data) != count:
        raise _EndpointFailed(f"answer has {len(data)} embeddings for {count} inputs")
    out = np.empty((count, dim), dtype=np.float32)
    seen = set()
    for pos, item in enumerate(data):
        if not isinstance(item, dict):
            raise _EndpointFailed("an item of 'data' is not an object")
        index = item.get("index", pos)
        vector = item.get("embedding")
        if not isinstance(index, int) or not 0 <= index < count or index in seen:
            raise _EndpointFailed(f"bad or repeated index {index!r}")
        seen.add(index)
        if not isinstance(vector, list) or len(vector) != dim:
            got = len(vector) if isinstance(vector, list) else type(vector).__name__
            raise _EndpointFailed(f"embedding {index} has dimension {got}, expected {dim}")
        if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in vector):
            raise _EndpointFailed(f"embedding {index} holds a non-number")
        row = np.asarray(vector, dtype=np.float64)
        norm = float(np.linalg.norm(row))
        if not math.isfinite(norm) or norm == 0.0:
            raise _EndpointFailed(f"embedding {index} is zero or not finite")
        out[index] = row / norm
    return out
