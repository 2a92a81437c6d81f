"""What every request must keep to: a body within the configured size (413 before it
is all read), and well-formed text in its path and query string (422)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memory_core.wellformed import check_text


class BodyTooLarge(HTTPException):
    """Raised inside receive when a streamed body passes the limit.

    An HTTPException, so the framework's body parsing lets it through as 413
    instead of turning it into a generic 400.
    """

    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, f"body: larger than the limit of {max_bytes} bytes")


class BodyLimit:
    """Pure ASGI middleware: checks Content-Length, then counts streamed bytes."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_bytes):
            await self._refuse(send)
            return
        seen = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except BodyTooLarge:
            if not started:
                await self._refuse(send)

    async def _refuse(self, send: Send) -> None:
        body: dict[str, Any] = {
            "error": {
                "code": "too_large",
                "message": f"body: larger than the limit of {self.max_bytes} bytes",
            }
        }
        data = json.dumps(body).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(data)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": data})


def wellformed_url(request: Request) -> None:
    """Every path parameter and query string value of a request is well-formed text
    (no NUL: a decoded ``%00``), by memory_core's one check; bodies are checked by
    their models (:class:`reverie.api.models.Body`)."""
    check_text(dict(request.path_params))
    for key, value in request.query_params.multi_items():
        check_text({key: value})
