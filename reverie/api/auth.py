"""Who is calling the API, and whether they may: the bearer token of each request.

Routes declare what they need with ``Depends(needs(...))``; a missing,
malformed, unknown or revoked token answers 401, a valid one lacking the
capability 403.  With no working token in the brain, a server bound to
loopback answers without auth (open mode); bound to any other address it
never does, and refuses to start without a token.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping

from fastapi import Request

import memory_core as mc
from memory_core import auth


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback name or address (only then may the API run open)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(brain: mc.Brain, host: str) -> None:
    """Refuse to serve on a non-loopback address while no token would be asked for."""
    if not is_loopback(host) and not auth.any_active_token(brain):
        raise mc.ConfigError(
            f"refusing to listen on {host} without auth: anyone who can reach it could read "
            "and change memory. Create a token first (memctl token create NAME --can ...) "
            "or listen on 127.0.0.1"
        )


def token_works(brain: mc.Brain, authorization: str) -> bool:
    """Whether a non-blank ``Authorization`` value names a working token."""
    try:
        auth.identify(brain, authorization, open_allowed=False)
    except mc.Unauthorized:
        return False
    return True


# The headers by which a request names the scope ids it acts for.
SCOPE_HEADERS = {
    "user": "x-reverie-user",
    "thread": "x-reverie-thread",
    "persona": "x-reverie-persona",
    "organization": "x-reverie-organization",
}


def _utf8(header: str, value: str) -> str:
    """A header's value read as UTF-8 (the server hands over its bytes as latin-1)."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        raise mc.InvalidIdentity(f"{header}: not UTF-8") from None


def scope_ids(headers: Mapping[str, str]) -> dict[str, str]:
    """The scope ids a request names in its X-Reverie-* headers, by scope; a blank one
    or one that is not UTF-8 is refused (:class:`~memory_core.InvalidIdentity`, 400)."""
    named = {
        scope: _utf8(name, value)
        for scope, name in SCOPE_HEADERS.items()
        if (value := headers.get(name)) is not None
    }
    return auth.named_scopes(named)


def identity(request: Request) -> mc.Identity:
    """The caller of this request (computed once per request): its token's identity, or
    the open one, confined to the scope ids its X-Reverie-* headers name."""
    found: mc.Identity | None = getattr(request.state, "identity", None)
    if found is None:
        found = auth.identify(
            request.app.state.brain,
            request.headers.get("authorization"),
            open_allowed=request.app.state.open_allowed,
        ).acting_as(scope_ids(request.headers))
        request.state.identity = found
    return found


def needs(*capabilities: str) -> Callable[[Request], mc.Identity]:
    """A dependency: the caller, once checked to have every one of ``capabilities``."""

    def dependency(request: Request) -> mc.Identity:
        caller = identity(request)
        caller.require(*capabilities)
        return caller

    return dependency
