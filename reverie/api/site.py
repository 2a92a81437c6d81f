"""No cross-site requests: refuse what a web page, not an agent, sent.

A page the user visits can send requests to ``127.0.0.1`` (a simple POST
needs no preflight), and can rebind its own domain name to ``127.0.0.1`` so
that its requests are same-origin to the browser.  Two checks close both:

* **Host.** A request without a token, to an API listening on loopback,
  must be addressed to loopback (``localhost``, ``127.0.0.1``, ``[::1]``):
  a rebound page's requests carry its own name (``Host: evil.example``).
* **Origin.** A request a browser sends from another origin carries that
  ``Origin``; it is refused unless it is the API's own or listed in
  ``REVERIE_API_CORS_ORIGINS`` (for which CORS is then answered).  Agents,
  SDKs and command-line clients send no ``Origin``.

A wrong Host answers 421 (Misdirected Request), a foreign Origin 403, as the
MCP transport's own checks do; neither runs anything behind it.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from reverie.api.auth import is_loopback
from reverie.api.errors import error_body


def _hostname(authority: str) -> str:
    """The name in a ``Host`` value or an origin's authority, without its port."""
    try:
        return (urlsplit(f"//{authority}").hostname or "").lower()
    except ValueError:
        return ""


class SiteGuard:
    """Pure ASGI middleware applying the Host and Origin checks."""

    def __init__(self, app: ASGIApp, *, loopback: bool, origins: frozenset[str]) -> None:
        self.app = app
        self.loopback = loopback
        self.origins = frozenset(o.rstrip("/").lower() for o in origins)

    def refusal(self, host: str | None, origin: str | None, token: bool) -> tuple[int, str] | None:
        """The status and reason this request is refused with, or None."""
        if self.loopback and not token and not is_loopback(_hostname(host or "")):
            return 421, (
                f"Host {host!r} is not this machine: without a token the API answers only "
                "requests addressed to localhost, 127.0.0.1 or [::1]"
            )
        if origin is None:
            return None
        wanted = origin.rstrip("/").lower()
        if wanted in self.origins:
            return None
        parts = urlsplit(wanted) if wanted != "null" else None
        if parts is not None and parts.netloc and parts.netloc == (host or "").lower():
            return None  # the API's own pages
        return 403, (
            f"cross-site request from Origin {origin!r} refused: only the API's own pages "
            "and the origins in REVERIE_API_CORS_ORIGINS may call it from a browser"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refused = self.refusal(
            headers.get("host"), headers.get("origin"), "authorization" in headers
        )
        if refused is None:
            await self.app(scope, receive, send)
            return
        status, why = refused
        code = "misdirected" if status == 421 else "cross_site"
        body = json.dumps(error_body(code, why)).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
