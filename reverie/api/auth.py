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


# The headers by which a request names the scope ids it acts for.
SCOPE_HEADERS = {
    "user": "x-reverie-user",
    "thread": "x-reverie-thread",
    "persona": "x-reverie-persona",
    "organization": "x-reverie-organization",
}


def scope_ids(headers: Mapping[str, str]) -> dict[str, str]:
    """The scope ids a request names in its X-Reverie-* headers."""
    return {scope: v for scope, name in SCOPE_HEADERS.items() if (v := headers.get(name))}


def identity(request: Request) -> mc.Identity:
    """The caller of this request (computed once per request): its token's identity, or
    the open one, confined to the scope ids its X-Reverie-* headers name."""
    found: mc.Identity | None = getattr(request.state, "identity", None)
    if found is None:
        found = auth.identify(
            request.app.state.brain,
            request.headers.get("authorization"),
            open_allowed=request.app.state.open_allowed,
        ).acting_as(scope_ids(request.headers).values())
        request.state.identity = found
    return found


def needs(*capabilities: str) -> Callable[[Request], mc.Identity]:
    """A dependency: the caller, once checked to have every one of ``capabilities``."""

    def dependency(request: Request) -> mc.Identity:
        caller = identity(request)
        caller.require(*capabilities)
        return caller

    return dependency
