"""No cross-site requests: refuse what a web page, not an agent, sent.

A page the user visits can send requests to ``127.0.0.1`` (a simple POST
needs no preflight), and can rebind its own domain name to ``127.0.0.1`` so
that its requests are same-origin to the browser.  Two checks close both:

* **Host.** A request that no token authenticates, to an API listening on
  loopback, must be addressed to loopback (``localhost``, ``127.0.0.1``,
  ``[::1]``): a rebound page's requests carry its own name (``Host:
  evil.example``).  A blank ``Authorization`` is no token, and one that does
  not work is none either, so neither opens the way (nor does the anonymous
  grant: it is a request without a token).
* **Origin.** A request a browser sends from another origin carries that
  ``Origin``; it is refused unless it is the API's own or listed in
  ``REVERIE_API_CORS_ORIGINS`` (for which CORS is then answered).  Agents,
  SDKs and command-line clients send no ``Origin``.

A wrong Host answers 421 (Misdirected Request), a foreign Origin 403, as the
MCP transport's own checks do; neither runs anything behind it.  A request
repeating a header these checks or the caller's identity are read from (Host,
Origin, Authorization, X-Reverie-*) answers 400: the checks here and the routes
behind would otherwise read different copies.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from urllib.parse import urlsplit

import anyio.to_thread
from starlette.types import ASGIApp, Receive, Scope, Send

from reverie.api.auth import SCOPE_HEADERS, is_loopback
from reverie.api.errors import error_body

# Read once by the checks or the routes: a second copy makes a request ambiguous.
SINGLE = ("host", "origin", "authorization", *SCOPE_HEADERS.values())


def _hostname(authority: str) -> str:
    """The name in a ``Host`` value or an origin's authority, without its port."""
    try:
        return (urlsplit(f"//{authority}").hostname or "").lower()
    except ValueError:
        return ""


class SiteGuard:
    """Pure ASGI middleware applying the Host and Origin checks.

    ``authenticates(authorization)`` tells whether a non-blank Authorization value
    names a working token: asked (off the event loop) only for a request to a
    loopback API addressed to another name.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        loopback: bool,
        origins: frozenset[str],
        authenticates: Callable[[str], bool],
    ) -> None:
        self.app = app
        self.loopback = loopback
        self.origins = frozenset(o.rstrip("/").lower() for o in origins)
        self.authenticates = authenticates

    async def refusal(self, headers: dict[str, str]) -> tuple[int, str, str] | None:
        """The status, code and reason this request is refused with, or None."""
        host, origin = headers.get("host"), headers.get("origin")
        if self.loopback and not is_loopback(_hostname(host or "")):
            authorization = headers.get("authorization", "").strip()
            if not authorization or not await anyio.to_thread.run_sync(
                self.authenticates, authorization
            ):
                why = (
                    f"Host {host!r} is not this machine: without a working token the API "
                    "answers only requests addressed to localhost, 127.0.0.1 or [::1]"
                )
                return 421, "misdirected", why
        if origin is None:
            return None
        wanted = origin.rstrip("/").lower()
        if wanted in self.origins:
            return None
        parts = urlsplit(wanted) if wanted != "null" else None
        if parts is not None and parts.netloc and parts.netloc == (host or "").lower():
            return None  # the API's own pages
        why = (
            f"cross-site request from Origin {origin!r} refused: only the API's own pages "
            "and the origins in REVERIE_API_CORS_ORIGINS may call it from a browser"
        )
        return 403, "cross_site", why

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        pairs = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope["headers"]]
        repeated = [k for k, n in Counter(k for k, _ in pairs if k in SINGLE).items() if n > 1]
        if repeated:
            refused: tuple[int, str, str] | None = (
                400,
                "ambiguous_header",
                f"the {repeated[0]} header is sent more than once: send it once",
            )
        else:
            refused = await self.refusal(dict(pairs))
        if refused is None:
            await self.app(scope, receive, send)
            return
        status, code, why = refused
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
