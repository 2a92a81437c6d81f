"""/v1/proposals: review and decide what dream passes propose, over HTTP.

The same acts as ``memctl proposals``: identities with ``read`` see the queue,
those with ``dream`` (or ``admin``) decide.  A pinned identity sees and decides
only proposals all of whose traces are its own; another's is not found.  A refused decision (stale,
edited, expired, not pending) answers 409 with the reason and changes nothing.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request

import memory_core as mc
from memory_core import auth, proposals
from reverie import types as out
from reverie.api.auth import needs
from reverie.api.schemas import refusals

router = APIRouter(tags=["proposals"])
CanRead = Annotated[mc.Identity, Depends(needs(auth.READ))]
CanDream = Annotated[mc.Identity, Depends(needs(auth.DREAM))]
_DONE = ("applied", "rejected", "undone")


def _brain(request: Request) -> mc.Brain:
    brain: mc.Brain = request.app.state.brain
    return brain


@router.get("/v1/proposals", response_model=out.ProposalsOut)
def list_proposals(
    request: Request,
    caller: CanRead,
    status: Annotated[
        Literal["pending", "accepted", "rejected", "undone", "expired", "all"], Query()
    ] = "pending",
    kind: Annotated[Literal["prune", "merge", "conflict", "rewrite"] | None, Query()] = None,
) -> dict[str, Any]:
    """Proposals with their texts: a merge's two texts and exact result, a prune's
    trace, a conflict's two statements (accepting supersedes the earlier)."""
    found = proposals.review(
        _brain(request), request.app.state.settings, status, kind=kind, identity=caller
    )
    return {"proposals": found}


def _decide(request: Request, caller: mc.Identity, proposal_id: str, act: Any) -> dict[str, Any]:
    brain, settings = _brain(request), request.app.state.settings
    if caller.within is not None:
        mine = proposals.list_proposals(brain, settings, "all", identity=caller)
        if proposal_id not in {p.id for p in mine}:
            raise mc.NotFound(f"no proposal {proposal_id}")
    [decision] = act(brain, settings, [proposal_id])
    if decision.outcome not in _DONE:
        raise mc.Conflict(
            f"{proposal_id} is {decision.outcome.replace('_', ' ')}: {decision.detail}"
        )
    return {"decision": decision.to_dict()}


@router.post(
    "/v1/proposals/{proposal_id}/accept",
    response_model=out.DecisionOut,
    responses=refusals(404, 409),
)
def accept(proposal_id: str, request: Request, caller: CanDream) -> dict[str, Any]:
    """Apply one proposal with compare-and-set; refused (409) when its traces changed."""
    return _decide(request, caller, proposal_id, proposals.accept)


@router.post(
    "/v1/proposals/{proposal_id}/reject",
    response_model=out.DecisionOut,
    responses=refusals(404, 409),
)
def reject(proposal_id: str, request: Request, caller: CanDream) -> dict[str, Any]:
    """Record a rejection: not proposed again while its traces are unchanged."""
    return _decide(request, caller, proposal_id, proposals.reject)


@router.post(
    "/v1/proposals/{proposal_id}/undo",
    response_model=out.DecisionOut,
    responses=refusals(404, 409),
)
def undo(proposal_id: str, request: Request, caller: CanDream) -> dict[str, Any]:
    """Reverse an accepted proposal; refused (409) when a trace changed since."""
    return _decide(request, caller, proposal_id, proposals.undo)
