"""/v1/tokens: managing tokens over HTTP, for admins confined to no scope id only.

The token itself is in the answer of create and reset, and nowhere else.  An
admin pinned to scope ids, or acting for someone through X-Reverie-* headers,
is refused (403): tokens span the whole brain (memory_core decides).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

import memory_core as mc
from memory_core import auth
from reverie import types as out
from reverie.api.auth import needs
from reverie.api.models import TokenIn
from reverie.api.schemas import refusals

router = APIRouter(tags=["tokens"])
Admin = Annotated[mc.Identity, Depends(needs(auth.ADMIN))]


def _brain(request: Request) -> mc.Brain:
    brain: mc.Brain = request.app.state.brain
    return brain


@router.get("/v1/tokens", response_model=out.TokensOut)
def list_tokens(request: Request, caller: Admin) -> dict[str, Any]:
    """Every token, revoked ones too; never a secret (none is kept)."""
    return {"tokens": [t.to_dict() for t in auth.list_tokens(_brain(request), identity=caller)]}


@router.post(
    "/v1/tokens", status_code=201, response_model=out.TokenSecretOut, responses=refusals(409)
)
def create_token(body: TokenIn, request: Request, caller: Admin) -> dict[str, Any]:
    """Make a token; the answer holds it, once."""
    info, token = auth.create_token(
        _brain(request), body.name, body.can, body.scope_ids, identity=caller
    )
    return {**info.to_dict(), "token": token}


@router.post("/v1/tokens/{name}/revoke", response_model=out.TokenOut, responses=refusals(404, 409))
def revoke_token(name: str, request: Request, caller: Admin) -> dict[str, Any]:
    """Revoke a token: it never works again, and cannot be reset.  The last admin token
    may not revoke itself (409)."""
    return auth.revoke_token(_brain(request), name, identity=caller).to_dict()


@router.post(
    "/v1/tokens/{name}/reset", response_model=out.TokenSecretOut, responses=refusals(404, 409)
)
def reset_token(name: str, request: Request, caller: Admin) -> dict[str, Any]:
    """A new secret for an active token; the old one stops working.  A revoked token is
    refused (409): revocation is final."""
    info, token = auth.reset_token(_brain(request), name, identity=caller)
    return {**info.to_dict(), "token": token}
