"""/v1/dreams: what the dream passes did, each pass's report, and undoing a pass.

Looking needs ``read``; undoing a pass needs ``dream``.  A pass spans every scope
id, so an identity confined to some is refused (403, memory_core decides), as for
``/metrics``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

import memory_core as mc
from memory_core import auth
from memory_core.consolidation.dream import list_passes, pass_report, undo_pass
from reverie import types as out
from reverie.api.auth import needs
from reverie.api.schemas import refusals

router = APIRouter(tags=["dreams"])
CanRead = Annotated[mc.Identity, Depends(needs(auth.READ))]
CanDream = Annotated[mc.Identity, Depends(needs(auth.DREAM))]


def _brain(request: Request) -> mc.Brain:
    brain: mc.Brain = request.app.state.brain
    return brain


@router.get("/v1/dreams", response_model=out.PassesOut, responses=refusals(403))
def passes(
    request: Request, caller: CanRead, limit: Annotated[int, Query(ge=1, le=500)] = 50
) -> dict[str, Any]:
    """Past passes, newest first: each step's counts and time, its proposals' fate."""
    return {"passes": list_passes(_brain(request), limit, identity=caller)}


@router.get("/v1/dreams/{pass_id}", response_model=out.PassReportOut, responses=refusals(403, 404))
def report(pass_id: str, request: Request, caller: CanRead) -> dict[str, Any]:
    """One pass's report, as written when it ended."""
    return pass_report(_brain(request), pass_id, identity=caller)


@router.post(
    "/v1/dreams/{pass_id}/undo", response_model=out.UndoneOut, responses=refusals(403, 404, 409)
)
def undo(pass_id: str, request: Request, caller: CanDream) -> dict[str, Any]:
    """Reverse what a pass did unattended (exact merges, compaction, insights) as one
    unit; refused (409, changing nothing) when one of those traces changed since."""
    return undo_pass(_brain(request), pass_id, identity=caller).to_dict()
