"""Tokens: made, listed, revoked and reset by an admin, and the caller they identify.

A token is ``rvt_<id>_<secret>``: the id finds its row, and the secret is
checked against the SHA-256 stored there with a constant-time comparison.
Only that hash is kept; the token itself is shown once, when it is made (or
reset).  A revoked token stays listed, and never works again: revocation is
final, a revoked token cannot be reset, and its name is not given again.

Managing tokens spans the whole brain: only an admin confined to no scope id
may (:func:`~memory_core.auth.identity.brain_wide`), so a pinned token, or the
open identity acting for a user, can neither make an unpinned token nor lock
others out.  The last working unpinned admin token cannot revoke itself.

Requests without a token are refused once any token works, unless an admin
granted them capabilities (:func:`grant_anonymous`, off by default): they then
act as :data:`ANONYMOUS_NAME`, with those capabilities and scope ids, as any
identity would.  The grant is a row of the tokens table that no secret opens,
listed, revoked and pinned like a token; it never includes ``admin``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Connection

from memory_core.auth.identity import (
    ADMIN,
    CAPABILITIES,
    MAX_SCOPE_ID_LENGTH,
    OPEN,
    Identity,
    brain_wide,
)
from memory_core.brain.db import Brain
from memory_core.errors import Conflict, InvalidArgument, NotFound, Unauthorized

TOKEN_PREFIX = "rvt_"
_TOKEN = re.compile(r"rvt_([0-9a-f]{16})_([A-Za-z0-9_-]{43})")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# The grant to requests without a token: a tokens row whose id no token can name.
ANONYMOUS_NAME = "anonymous"
MANAGING = "managing tokens"


@dataclass(frozen=True)
class TokenInfo:
    """A token as listed: everything but the secret."""

    id: str
    name: str
    capabilities: list[str]
    scope_ids: list[str] | None
    created_at: float
    revoked_at: float | None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def _check_capabilities(capabilities: Iterable[str]) -> list[str]:
    chosen = list(dict.fromkeys(c.strip() for c in capabilities if c.strip()))
    unknown = [c for c in chosen if c not in CAPABILITIES]
    if unknown or not chosen:
        got = ", ".join(unknown) or "none"
        raise InvalidArgument(f"capabilities must be some of {', '.join(CAPABILITIES)}; got {got}")
    return [c for c in CAPABILITIES if c in chosen]


def _check_scope_ids(scope_ids: Iterable[str] | None) -> list[str] | None:
    if scope_ids is None:
        return None
    ids = list(dict.fromkeys(scope_ids))
    if not ids or any(not s.strip() or len(s) > MAX_SCOPE_ID_LENGTH for s in ids):
        raise InvalidArgument(f"scope ids must be 1 to {MAX_SCOPE_ID_LENGTH} characters each")
    return sorted(ids)


def _info(row: Any) -> TokenInfo:
    scope_ids = json.loads(row.scope_ids) if row.scope_ids is not None else None
    return TokenInfo(
        row.id, row.name, json.loads(row.capabilities), scope_ids, row.created_at, row.revoked_at
    )


def _new_secret() -> tuple[str, str, str]:
    token_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    return token_id, secret, f"{TOKEN_PREFIX}{token_id}_{secret}"


def create_token(
    brain: Brain,
    name: str,
    capabilities: Iterable[str],
    scope_ids: Iterable[str] | None = None,
    *,
    identity: Identity,
    now: float | None = None,
) -> tuple[TokenInfo, str]:
    """Make a token, as an admin confined to no scope id (``identity``); returns it as
    listed and the token itself (shown only now)."""
    brain_wide(identity, ADMIN, act=MANAGING)
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidArgument(
            "name: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    if name == ANONYMOUS_NAME:
        raise Conflict(
            f"{name!r} names the grant to requests without a token: memctl token anonymous"
        )
    caps = _check_capabilities(capabilities)
    pinned = _check_scope_ids(scope_ids)
    token_id, secret, token = _new_secret()
    now = time.time() if now is None else now
    with brain.transaction() as conn:
        existing = _row(conn, name)
        if existing is not None and existing.revoked_at is not None:
            raise Conflict(f"a token named {name!r} was revoked, for good: choose another name")
        if existing is not None:
            raise Conflict(f"a token named {name!r} exists (reset it for a new secret)")
        conn.execute(
            text(
                "INSERT INTO tokens (id, name, secret_sha256, capabilities, scope_ids, created_at) "
                "VALUES (:id, :name, :digest, :caps, :scope_ids, :now)"
            ),
            {
                "id": token_id,
                "name": name,
                "digest": _digest(secret),
                "caps": json.dumps(caps),
                "scope_ids": json.dumps(pinned) if pinned is not None else None,
                "now": now,
            },
        )
    return TokenInfo(token_id, name, caps, pinned, now, None), token


def list_tokens(brain: Brain, *, identity: Identity) -> list[TokenInfo]:
    """Every token, revoked ones too, oldest first (no secrets: none are kept)."""
    brain_wide(identity, ADMIN, act=MANAGING)
    with brain.read() as conn:
        rows = conn.execute(text("SELECT * FROM tokens ORDER BY created_at, name")).all()
    return [_info(r) for r in rows]


def _row(conn: Connection, name: str) -> Any:
    return conn.execute(text("SELECT * FROM tokens WHERE name = :n"), {"n": name}).first()


def _unpinned_admin(row: Any) -> bool:
    return ADMIN in json.loads(row.capabilities) and row.scope_ids is None


def _last_admin(conn: Connection, row: Any) -> bool:
    """Whether ``row`` is the one working token left that may manage tokens."""
    if not _unpinned_admin(row):
        return False
    others = conn.execute(
        text("SELECT * FROM tokens WHERE revoked_at IS NULL AND id NOT IN (:id, :anon)"),
        {"id": row.id, "anon": ANONYMOUS_NAME},
    ).all()
    return not any(_unpinned_admin(r) for r in others)


def revoke_token(
    brain: Brain, name: str, *, identity: Identity, now: float | None = None
) -> TokenInfo:
    """Revoke the active token ``name``: it never works again, and cannot be reset.

    The last working unpinned admin token may not revoke itself (:class:`Conflict`):
    nobody could manage tokens over the API any more.
    """
    brain_wide(identity, ADMIN, act=MANAGING)
    now = time.time() if now is None else now
    with brain.transaction() as conn:
        row = _row(conn, name)
        if row is None or row.revoked_at is not None:
            raise NotFound(f"no active token named {name!r}")
        if identity.token_id == row.id and _last_admin(conn, row):
            raise Conflict(
                f"{name} is the last admin token: it may not revoke itself, or nobody could "
                "manage tokens; make another admin token first (or memctl token revoke)"
            )
        conn.execute(
            text("UPDATE tokens SET revoked_at = :now WHERE id = :id"), {"now": now, "id": row.id}
        )
        row = _row(conn, name)
    return _info(row)


def reset_token(
    brain: Brain, name: str, *, identity: Identity, now: float | None = None
) -> tuple[TokenInfo, str]:
    """A new secret for the active token ``name``; the old one stops working.  A revoked
    token is refused (:class:`Conflict`): revocation is final."""
    brain_wide(identity, ADMIN, act=MANAGING)
    if name == ANONYMOUS_NAME:
        raise Conflict("the anonymous grant has no secret to reset: memctl token anonymous --can")
    token_id, secret, token = _new_secret()
    now = time.time() if now is None else now
    with brain.transaction() as conn:
        row = _row(conn, name)
        if row is None:
            raise NotFound(f"no token named {name!r}")
        if row.revoked_at is not None:
            raise Conflict(
                f"token {name!r} was revoked, and revocation is final: make a new token "
                "instead (memctl token create, or POST /v1/tokens)"
            )
        conn.execute(
            text(
                "UPDATE tokens SET id = :id, secret_sha256 = :digest, created_at = :now "
                "WHERE name = :n AND revoked_at IS NULL"
            ),
            {"id": token_id, "digest": _digest(secret), "now": now, "n": name},
        )
        row = _row(conn, name)
    return _info(row), token


def any_active_token(brain: Brain) -> bool:
    """Whether any token works: if none does, a loopback API may run open."""
    with brain.read() as conn:
        row = conn.execute(
            text("SELECT 1 FROM tokens WHERE revoked_at IS NULL AND id != :anon LIMIT 1"),
            {"anon": ANONYMOUS_NAME},
        ).first()
    return row is not None


def grant_anonymous(
    brain: Brain,
    capabilities: Iterable[str],
    scope_ids: Iterable[str] | None = None,
    *,
    identity: Identity,
    now: float | None = None,
) -> TokenInfo:
    """Let requests without a token act with ``capabilities`` (pinned to ``scope_ids``
    when given), replacing any earlier grant; :func:`revoke_token` of
    :data:`ANONYMOUS_NAME` ends it.  ``admin`` is refused: administering takes a token."""
    brain_wide(identity, ADMIN, act=MANAGING)
    caps = _check_capabilities(capabilities)
    if ADMIN in caps:
        raise InvalidArgument("requests without a token may not administer: make a token for that")
    pinned = _check_scope_ids(scope_ids)
    now = time.time() if now is None else now
    values = {
        "id": ANONYMOUS_NAME,
        "caps": json.dumps(caps),
        "scope_ids": json.dumps(pinned) if pinned is not None else None,
        "now": now,
    }
    with brain.transaction() as conn:
        conn.execute(text("DELETE FROM tokens WHERE id = :id OR name = :id"), values)
        conn.execute(
            text(
                "INSERT INTO tokens (id, name, secret_sha256, capabilities, scope_ids, created_at) "
                "VALUES (:id, :id, '', :caps, :scope_ids, :now)"
            ),
            values,
        )
    return TokenInfo(ANONYMOUS_NAME, ANONYMOUS_NAME, caps, pinned, now, None)


def anonymous(brain: Brain) -> Identity | None:
    """The identity of requests without a token, when an admin granted one; else None."""
    with brain.read() as conn:
        row = conn.execute(
            text("SELECT * FROM tokens WHERE id = :id AND revoked_at IS NULL"),
            {"id": ANONYMOUS_NAME},
        ).first()
    if row is None:
        return None
    info = _info(row)
    pinned = frozenset(info.scope_ids) if info.scope_ids is not None else None
    return Identity(ANONYMOUS_NAME, frozenset(info.capabilities), pinned, ANONYMOUS_NAME)


# Compared against when the id is unknown, so that case costs what a wrong secret does.
_NO_DIGEST = _digest("x" * 43)


def authenticate(brain: Brain, token: str | None) -> Identity:
    """The identity of ``token``; :class:`Unauthorized` for none, malformed, unknown or revoked."""
    if not token:
        raise Unauthorized("a token is required: Authorization: Bearer rvt_...")
    match = _TOKEN.fullmatch(token.strip())
    if match is None:
        raise Unauthorized("malformed token")
    token_id, secret = match.groups()
    with brain.read() as conn:
        row = conn.execute(text("SELECT * FROM tokens WHERE id = :id"), {"id": token_id}).first()
    stored = row.secret_sha256 if row is not None else _NO_DIGEST
    matches = hmac.compare_digest(_digest(secret), stored)
    if row is None or not matches or row.revoked_at is not None:
        raise Unauthorized("unknown or revoked token")
    info = _info(row)
    pinned = frozenset(info.scope_ids) if info.scope_ids is not None else None
    return Identity(info.name, frozenset(info.capabilities), pinned, info.id)


def identify(brain: Brain, authorization: str | None, *, open_allowed: bool) -> Identity:
    """The caller behind an ``Authorization`` header value (``Bearer rvt_...``).

    Without one (a blank value is none), the caller is :data:`OPEN` while no token
    works and the server may run open (bound to loopback, answering loopback Host
    names only: ``reverie.api.site``); else the anonymous grant, when an admin made
    one; otherwise :class:`Unauthorized`.
    """
    if authorization is None or not authorization.strip():
        if open_allowed and not any_active_token(brain):
            return OPEN
        granted = anonymous(brain)
        if granted is not None:
            return granted
        raise Unauthorized("a token is required: Authorization: Bearer rvt_...")
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("malformed Authorization header: use Bearer rvt_...")
    return authenticate(brain, token.strip())
