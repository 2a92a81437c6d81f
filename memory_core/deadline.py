"""HTTP calls to the endpoints Reverie asks (the LLM, embeddings, rerank) under one
wall-clock deadline.

httpx's timeouts bound each network operation, not a call: an endpoint that sends
its headers and then a byte every few seconds never trips a read timeout, and holds
the caller for as long as it likes.  :func:`client` makes an httpx client whose
connections take every connect, read and write's timeout from what is left of the
deadline that :func:`within` set on the calling thread, so that a call made inside
``with within(seconds):`` ends by then, whatever the server does (an
``httpx.TimeoutException`` when it has not answered in full).  Outside ``within``
the client is an ordinary one.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import httpcore
import httpx

_DEADLINE: ContextVar[float | None] = ContextVar("reverie_http_deadline", default=None)


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """Network calls of this thread in the block end ``seconds`` from now at the latest
    (an enclosing, earlier deadline stands)."""
    end = time.monotonic() + seconds
    outer = _DEADLINE.get()
    token = _DEADLINE.set(end if outer is None else min(outer, end))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def client(
    *,
    timeout: float | None = None,
    headers: dict[str, str] | None = None,
    follow_redirects: bool = False,
) -> httpx.Client:
    """An httpx client whose calls keep to the deadline :func:`within` sets (and each
    network operation to ``timeout``, as httpx's own)."""
    transport = httpx.HTTPTransport()
    # httpx offers no way to hand its pool a network backend: its pool is replaced by
    # one as it would make it, over the deadline-keeping backend.
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(),
        max_connections=100,
        max_keepalive_connections=20,
        keepalive_expiry=5.0,
        network_backend=_Backend(),
    )
    return httpx.Client(
        transport=transport,
        timeout=httpx.Timeout(timeout),
        headers=headers,
        follow_redirects=follow_redirects,
    )


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` cut to what is left of the deadline; ``error`` once it has passed."""
    end = _DEADLINE.get()
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise error("the call's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """A connection whose every operation keeps to the deadline."""

    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        wait = _left(timeout, httpcore.ConnectTimeout)
        return _Stream(self._stream.start_tls(ssl_context, server_hostname, wait))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's own network backend, its connections keeping to the deadline."""

    def __init__(self) -> None:
        self._backend = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        wait = _left(timeout, httpcore.ConnectTimeout)
        return _Stream(self._backend.connect_tcp(host, port, wait, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        wait = _left(timeout, httpcore.ConnectTimeout)
        return _Stream(self._backend.connect_unix_socket(path, wait, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)
