"""The /v1 routes, /healthz and /readyz."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, Header, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

import memory_core as mc
from memory_core import auth, forget, inbox
from memory_core.brain import health
from memory_core.consolidation import hints
from memory_core.retrieval import context, feedback, tagexpr
from memory_core.runtime import Runtime
from memory_core.tools import TOOL_SCHEMAS, ToolContext, call_tool
from memory_core.traces import history
from memory_core.traces import tags as tags_
from reverie import types as out
from reverie.api.auth import identity, needs
from reverie.api.auth import scope_ids as named_scope_ids
from reverie.api.errors import CODE_STATUS, error_body
from reverie.api.models import (
    ContextIn,
    FeedbackIn,
    MemoryIn,
    MemoryPatch,
    MergeIn,
    PredicateIn,
    TagRenameIn,
    TurnIn,
    WhenQuery,
)
from reverie.api.schemas import refusals
from reverie.observability.metrics import SEARCH_MODES, Metrics, bounded
from reverie.types import Scope, TraceType

log = logging.getLogger(__name__)
router = APIRouter()

# The caller of a route, checked for what the route needs (api.auth).
CanRead = Annotated[mc.Identity, Depends(needs(auth.READ))]
CanWrite = Annotated[mc.Identity, Depends(needs(auth.WRITE))]
CanDelete = Annotated[mc.Identity, Depends(needs(auth.DELETE))]
CanMerge = Annotated[mc.Identity, Depends(needs(auth.WRITE, auth.DELETE))]
CanAdmin = Annotated[mc.Identity, Depends(needs(auth.ADMIN))]
Caller = Annotated[mc.Identity, Depends(identity)]


def _brain(request: Request) -> mc.Brain:
    brain: mc.Brain = request.app.state.brain
    return brain


def _runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


def _epoch(value: datetime | float | None) -> float | None:
    if value is None or isinstance(value, float | int):
        return value
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()


@router.post("/v1/turns", status_code=202, tags=["turns"], response_model=out.TurnAccepted)
def post_turn(body: TurnIn, request: Request, caller: CanWrite) -> dict[str, Any]:
    """Accept a conversation turn: committed to the inbox, then queued for ingest."""
    fields: dict[str, Any] = {
        "scope": body.scope,
        "scope_id": caller.scope_id_for(body.scope_id, body.scope) or "",
        "conversation_id": body.conversation_id,
        "timestamp": _epoch(body.timestamp),
        "metadata": body.metadata,
        "idempotency_key": body.idempotency_key,
    }
    messages = None
    if body.messages is not None:
        messages = [m.model_dump(exclude_none=True) for m in body.messages]
    turn = inbox.Turn.posted(body.user, body.assistant, messages, **fields)
    accepted, enqueued = _runtime(request).submit_turn(turn)  # group commit, then queued
    return {"turn_id": accepted.turn_id, "duplicate": accepted.duplicate, "enqueued": enqueued}


@router.get(
    "/v1/turns/{turn_id}",
    tags=["turns"],
    response_model=out.TurnStatus,
    responses=refusals(404),
)
def get_turn(turn_id: str, request: Request, caller: CanRead) -> dict[str, Any]:
    """A turn's ingestion status: pending, done or failed."""
    return inbox.turn_status(_brain(request), turn_id, identity=caller)


def _send_embed(request: Request, trace_ids: list[str]) -> None:
    _runtime(request).jobs.embed(trace_ids)


@router.post(
    "/v1/memories",
    status_code=201,
    tags=["memories"],
    response_model=out.MemoryAdded,
    responses={
        200: {
            "model": out.MemoryAdded,
            "description": "The same words were already kept in this scope id: that memory, "
            "this occurrence noted (existing).",
        }
    },
)
def post_memory(
    body: MemoryIn, request: Request, response: Response, caller: CanWrite
) -> dict[str, Any]:
    """Store one memory trace; searchable when this answers.  The same words already
    kept in the scope id are that memory, this occurrence noted (200, ``existing``);
    ``duplicates`` names the caller's memories of the same scope id it may repeat (as
    the merge verifier judges), for an agent to read before merging."""
    brain = _brain(request)
    scope_id = caller.scope_id_for(body.scope_id, body.scope)
    again = mc.said_again(
        brain,
        body.content,
        scope=body.scope,
        scope_id=scope_id,
        identity=caller,
        occurred_at=_epoch(body.timestamp),
        tags=body.tags,
    )
    if again is not None:
        response.status_code = 200
        return {**again.to_dict(), "existing": True, "duplicates": []}
    trace_id = mc.add_trace(
        brain,
        body.content,
        type=body.type,
        scope=body.scope,
        scope_id=scope_id,
        tags=body.tags,
        importance=body.importance,
        metadata=body.metadata,
        occurred_at=_epoch(body.timestamp),
        identity=caller,
    )
    _send_embed(request, [trace_id])
    trace = mc.get_trace(brain, trace_id, identity=caller)
    repeated = hints.duplicates_of(
        brain,
        trace_id,
        trace.content,
        scope=trace.scope,
        scope_id=trace.scope_id,
        identity=caller,
        embedder=_runtime(request).query_embedder,
    )
    return {**trace.to_dict(), "duplicates": [d.to_dict() for d in repeated]}


@router.get("/v1/memories", tags=["memories"], response_model=out.MemoryPage)
def list_memories(
    request: Request,
    caller: CanRead,
    scope: Annotated[Scope | None, Query()] = None,
    scope_id: Annotated[str | None, Query()] = None,
    type: Annotated[TraceType | None, Query()] = None,
    tags: Annotated[str | None, Query(description="Comma-separated; all must match.")] = None,
    cursor: Annotated[
        str | None,
        Query(pattern=r"^[0-9]{1,18}$", description="The next_cursor of the page before."),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> dict[str, Any]:
    """Active memories, newest stored first, a page at a time (stable while others write)."""
    page = mc.list_traces(
        _brain(request),
        scope=scope,
        scope_id=scope_id,
        type=type,
        tags=[t.strip() for t in tags.split(",") if t.strip()] if tags else (),
        cursor=cursor,
        limit=limit,
        identity=caller,
    )
    return {"memories": [t.to_dict() for t in page.traces], "next_cursor": page.next_cursor}


@router.get(
    "/v1/memories/{trace_id}",
    tags=["memories"],
    response_model=out.TraceOut | out.MemoryAtLevel,
    responses=refusals(404),
)
def get_memory(
    trace_id: str,
    request: Request,
    caller: CanRead,
    include_deleted: bool = False,
    level: Annotated[
        Literal["abstract", "outline", "full", "sources"],
        Query(
            description="How deep: one line, a line per paragraph, the whole trace (the "
            "default), or the verbatim turns and traces it came from."
        ),
    ] = "full",
) -> dict[str, Any]:
    """One trace, at the level asked (the whole of it by default)."""
    if level != "full":
        return context.read_at(_brain(request), trace_id, level, identity=caller)
    trace = mc.get_trace(
        _brain(request), trace_id, include_deleted=include_deleted, identity=caller
    )
    return trace.to_dict()


@router.get(
    "/v1/memories/{trace_id}/history",
    tags=["memories"],
    response_model=out.HistoryOut,
    responses=refusals(404),
)
def memory_history(trace_id: str, request: Request, caller: CanRead) -> dict[str, Any]:
    """A memory's story (deleted ones too): the turns and traces it came from, the traces
    citing it, what it superseded and what superseded it, every change with the words
    before (a pass's merge, an accepted proposal, an edit), and the proposals naming it."""
    return history.trace_history(_brain(request), trace_id, identity=caller)


@router.post("/v1/context", tags=["search"], response_model=out.ContextOut)
def context_block(body: ContextIn, request: Request, caller: CanRead) -> dict[str, Any]:
    """The best memories for a query as one block to put in a prompt, dated and with
    their ids, within a token budget (whole while they fit, else each one's abstract)."""
    found = context.context(
        _brain(request),
        body.query,
        identity=caller,
        budget_tokens=body.budget_tokens,
        scope=body.scope,
        scope_id=body.scope_id,
        embedder=_runtime(request).query_embedder,
        reranker=_runtime(request).reranker(),
    )
    ids = [m["id"] for m in found["memories"]]
    asked = feedback.query_key(caller.token_id or caller.name, "context", body.query, *ids)
    _runtime(request).jobs.retrieved(ids, query_key=asked, event_id=feedback.new_event_id())
    return found


@router.get("/v1/tags", tags=["memories"], response_model=out.TagsOut)
def list_tags(request: Request, caller: CanRead) -> dict[str, Any]:
    """Every tag on the caller's active memories, with how many carry it, commonest first."""
    return {"tags": tags_.tag_counts(_brain(request), identity=caller)}


@router.post(
    "/v1/tags/rename",
    tags=["memories"],
    response_model=out.TagRenamed,
    responses=refusals(403, 422),
)
def rename_tag(body: TagRenameIn, request: Request, caller: CanWrite) -> dict[str, Any]:
    """Rename a tag on every memory the caller sees, as one change each memory's history
    keeps; a memory with both names keeps one."""
    return tags_.rename_tag(_brain(request), body.from_, body.to, identity=caller)


@router.get("/v1/tag-predicates", tags=["memories"], response_model=out.PredicatesOut)
def list_predicates(request: Request, caller: CanRead) -> dict[str, Any]:
    """The named tag predicates (``@name`` in a tag expression); to a caller confined to
    scope ids, their names alone (each text null: it may name any tenant's tags)."""
    return {"predicates": tagexpr.list_predicates(_brain(request), identity=caller)}


@router.put(
    "/v1/tag-predicates/{name}",
    tags=["memories"],
    response_model=out.PredicatesOut,
    responses=refusals(404, 422),
)
def save_predicate(
    name: Annotated[str, Path(pattern=tagexpr.NAME_PATTERN)],
    body: PredicateIn,
    request: Request,
    caller: CanAdmin,
) -> dict[str, Any]:
    """Store (or replace) ``@name``: refused when it does not compile or names itself,
    and to a caller confined to scope ids (predicates are the whole brain's)."""
    tagexpr.save_predicate(_brain(request), name, body.expression, identity=caller)
    return {"predicates": tagexpr.list_predicates(_brain(request), identity=caller)}


@router.delete(
    "/v1/tag-predicates/{name}",
    tags=["memories"],
    response_model=out.PredicatesOut,
    responses=refusals(404),
)
def delete_predicate(
    name: Annotated[str, Path(pattern=tagexpr.NAME_PATTERN)], request: Request, caller: CanAdmin
) -> dict[str, Any]:
    """Forget ``@name`` (not for a caller confined to scope ids)."""
    tagexpr.delete_predicate(_brain(request), name, identity=caller)
    return {"predicates": tagexpr.list_predicates(_brain(request), identity=caller)}


@router.get("/v1/me", tags=["tokens"], response_model=out.IdentityOut)
def me(caller: Caller) -> dict[str, Any]:
    """The caller: its token's name, capabilities and pinned scope ids."""
    return {
        "name": caller.name,
        "capabilities": sorted(caller.capabilities),
        "scope_ids": None if caller.scope_ids is None else sorted(caller.scope_ids),
    }


@router.patch(
    "/v1/memories/{trace_id}",
    tags=["memories"],
    response_model=out.TraceOut,
    responses=refusals(404, 409),
)
def patch_memory(
    trace_id: str,
    body: MemoryPatch,
    request: Request,
    caller: CanWrite,
    if_match: Annotated[
        str | None,
        Header(pattern=r'^"?[0-9]+"?$', description="Expected version (compare-and-set)."),
    ] = None,
) -> dict[str, Any]:
    """Replace content and/or tags; with If-Match, only if the version still matches."""
    if body.content is None and body.tags is None:
        raise mc.InvalidArgument("body: give content and/or tags")
    expected = None
    if if_match is not None:
        if not if_match.strip('"').isdigit():
            raise mc.InvalidArgument("If-Match: must be the trace's version number")
        expected = int(if_match.strip('"'))
    trace = mc.update_trace(
        _brain(request),
        trace_id,
        content=body.content,
        tags=body.tags,
        expected_version=expected,
        identity=caller,
    )
    if body.content is not None:
        _send_embed(request, [trace_id])
    return trace.to_dict()


@router.post(
    "/v1/memories/{trace_id}/supersession/undo",
    tags=["memories"],
    response_model=out.TraceOut,
    responses=refusals(404, 409),
)
def undo_supersession(trace_id: str, request: Request, caller: CanWrite) -> dict[str, Any]:
    """A wrong supersession undone: the superseded memory (its turn and facts) holds
    again, and the same later statement never supersedes it again.  409 when the
    memory is current."""
    return mc.undo_supersession(_brain(request), trace_id, identity=caller).to_dict()


@router.delete(
    "/v1/memories/{trace_id}",
    tags=["memories"],
    response_model=out.Deleted,
    responses=refusals(404),
)
def delete_memory(trace_id: str, request: Request, caller: CanDelete) -> dict[str, Any]:
    """Soft-delete: kept for audit, never returned by search."""
    mc.delete_trace(_brain(request), trace_id, identity=caller)
    return {"deleted": True, "id": trace_id}


@router.post(
    "/v1/memories/merge",
    tags=["memories"],
    response_model=out.Merged,
    responses=refusals(404, 409),
)
def merge_memories(body: MergeIn, request: Request, caller: CanMerge) -> dict[str, Any]:
    """Merge traces into the most-retrieved one (it deletes the others: write and delete)."""
    result = mc.merge_traces(
        _brain(request), body.ids, merged_content=body.content, identity=caller
    )
    _send_embed(request, [result.survivor_id])
    return {"survivor_id": result.survivor_id, "deleted_ids": result.deleted_ids}


@router.delete("/v1/scopes/{scope}/{scope_id}", tags=["memories"], response_model=out.Forgotten)
def forget_scope_id(
    scope: Scope, scope_id: str, request: Request, caller: CanDelete
) -> dict[str, Any]:
    """Forget everything of one scope id for good (not undoable): traces, vectors,
    full-text entries, edges, inbox turns, proposals naming them; answers what went."""
    forgotten = forget.forget_scope_id(
        _brain(request), request.app.state.settings, scope_id, scope=scope, identity=caller
    )
    return forgotten.to_dict()


@router.get(
    "/v1/search", tags=["search"], response_model=out.SearchOut, responses=refusals(404, 422)
)
def search(
    request: Request,
    caller: CanRead,
    q: Annotated[str, Query(min_length=1, description="FTS5 syntax or plain words.")],
    type: Annotated[TraceType | None, Query()] = None,
    scope: Annotated[Scope | None, Query()] = None,
    scope_id: Annotated[str | None, Query()] = None,
    tags: Annotated[str | None, Query(description="Comma-separated; all must match.")] = None,
    tags_expr: Annotated[
        str | None,
        Query(
            max_length=tagexpr.MAX_LENGTH,
            pattern=tagexpr.PATTERN,
            description="A tag expression: a & b, a | b, !a, (...), key=value, /regex/, "
            "mutex(a, b), @named (regexes in RE2 syntax); a tag no memory of the caller "
            "carries matches nothing.",
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
    min_score: Annotated[
        float | None,
        Query(
            ge=0,
            le=1,
            description="Leave out hits of lower relevance (default: search_min_score).",
        ),
    ] = None,
    as_of: Annotated[
        WhenQuery | None,
        Query(description="What was valid then: ISO 8601 (naive is UTC) or epoch seconds."),
    ] = None,
    record: Annotated[
        bool,
        Query(
            description="false: a person looking (the console), not an agent using what it "
            "finds: the results' use is not counted, so it does not strengthen them."
        ),
    ] = True,
) -> dict[str, Any]:
    """Search, best first; the read writes nothing (feedback is queued)."""
    tag_list = [t.strip() for t in tags.split(",") if t.strip()] if tags else None
    started = time.perf_counter()
    response = mc.search(
        _brain(request),
        q,
        type=type,
        scope=scope,
        scope_id=scope_id,
        tags=tag_list,
        limit=limit,
        as_of=_epoch(as_of),
        identity=caller,
        min_score=min_score,
        embedder=_runtime(request).query_embedder,
        reranker=_runtime(request).reranker(),
        tags_expr=tags_expr,
    )
    metrics: Metrics | None = request.app.state.metrics
    if metrics is not None:
        metrics.search_duration.labels(bounded(response.mode, SEARCH_MODES)).observe(
            time.perf_counter() - started
        )
        if response.degraded:
            metrics.search_degraded.inc()
    # The same search by the same caller, finding the same memories, within the
    # feedback window counts once.
    ids = [h.trace.id for h in response.results]
    asked = feedback.query_key(
        caller.token_id or caller.name,
        q,
        type,
        scope,
        scope_id,
        tag_list,
        tags_expr,
        limit,
        as_of,
        *ids,
    )
    event = feedback.new_event_id()
    if record:
        _runtime(request).jobs.retrieved(ids, query_key=asked, event_id=event)
    return {**response.to_dict(), "query_id": event}


@router.post(
    "/v1/feedback",
    status_code=202,
    tags=["search"],
    response_model=out.FeedbackAccepted,
    responses=refusals(404),
)
def report_use(body: FeedbackIn, request: Request, caller: CanRead) -> dict[str, Any]:
    """Which results of a search the caller read or cited: each counts as a retrieval
    once per search (a repeated report changes nothing)."""
    brain = _brain(request)
    for trace_id in body.trace_ids:  # each visible to the caller, or 404
        mc.get_trace(brain, trace_id, identity=caller)
    jobs = _runtime(request).jobs
    enqueued = all(
        jobs.retrieved([t], event_id=feedback.used_event_id(body.query_id, t))
        for t in body.trace_ids
    )
    return {"recorded": len(body.trace_ids), "enqueued": enqueued}


@router.get("/v1/tools", tags=["tools"], response_model=out.ToolsOut)
def list_tools(caller: Caller) -> dict[str, Any]:
    """The tools' JSON schemas, usable as LLM function definitions (any caller); the
    same table MCP lists."""
    return {"tools": [{"name": n, **spec} for n, spec in TOOL_SCHEMAS.items()]}


# A scope id a call names in a header: never blank (refused 400, not taken for none).
NamedId = Annotated[str | None, Header(min_length=1, max_length=256, pattern=r"\S")]


def _acting_for(
    request: Request,
    x_reverie_user: NamedId = None,
    x_reverie_thread: NamedId = None,
    x_reverie_persona: NamedId = None,
    x_reverie_organization: NamedId = None,
) -> dict[str, str]:
    """The scope ids a tool call names, from the X-Reverie-* headers (the parameters
    document them; they are read as every route reads them, :func:`~reverie.api.auth.scope_ids`)."""
    return named_scope_ids(request.headers)


ActingFor = Annotated[dict[str, str], Depends(_acting_for)]


def call(
    name: str,
    arguments: Annotated[dict[str, Any], Body()],
    request: Request,
    caller: Caller,
    scope_ids: ActingFor,
) -> Response:
    """An LLM's tool call; the body is its arguments, the answer its result.

    Scope ids for the call come from the X-Reverie-User/-Thread/-Persona/
    -Organization headers.  Each tool checks the capability it needs.
    """
    if name not in TOOL_SCHEMAS:
        return JSONResponse(error_body("not_found", f"no tool {name!r}"), status_code=404)
    result = call_tool(name, arguments, ToolContext.of(_runtime(request), caller, scope_ids))
    if "error" in result:
        return JSONResponse(result, status_code=CODE_STATUS.get(result["error"]["code"], 400))
    return JSONResponse(result)


def _tool_endpoint(name: str) -> Any:
    """The route of one tool: ``call`` with its name fixed, so the document types its body."""

    def endpoint(
        arguments: Annotated[dict[str, Any], Body()],
        request: Request,
        caller: Caller,
        scope_ids: ActingFor,
    ) -> Response:
        return call(name, arguments, request, caller, scope_ids)

    return endpoint


# The tools REST serves as routes of their own are typed there instead.
_SERVED_AS = {"memory_post_turn": "POST /v1/turns", "memory_read": "GET /v1/memories/{id}"}
for _name, _spec in TOOL_SCHEMAS.items():
    if _name in _SERVED_AS:
        continue
    router.add_api_route(
        f"/v1/tools/{_name}",
        _tool_endpoint(_name),
        methods=["POST"],
        tags=["tools"],
        name=_name,
        summary=_name,
        description=_spec["description"] + " Scope ids come from the X-Reverie-* headers.",
        response_model=out.ToolResult,
        responses=refusals(404, 409, 501),
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": _spec["parameters"]}},
            }
        },
    )
# memory_post_turn and memory_read (typed as their REST routes), and any other name:
# 404, "no tool".
router.add_api_route("/v1/tools/{name}", call, methods=["POST"], include_in_schema=False)


@router.get(
    "/metrics",
    tags=["ops"],
    response_class=Response,
    responses={
        200: {"content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}}},
        **refusals(501),
    },
)
def metrics_(request: Request, caller: CanRead) -> Response:
    """Prometheus exposition: this process's metrics and the brain's gauges.

    Counts over the whole brain: not for an identity pinned to scope ids.
    """
    auth.brain_wide(caller, auth.READ, act="metrics")
    registry = request.app.state.metrics_registry
    if registry is None:
        raise mc.NotEnabled("metrics are off (REVERIE_METRICS_ENABLED=false)")
    body = generate_latest(registry)
    return Response(body, media_type=CONTENT_TYPE_LATEST)


@router.get("/healthz", tags=["ops"], response_model=out.HealthOut)
def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@router.get(
    "/readyz",
    tags=["ops"],
    response_model=out.ReadyOut,
    responses={
        503: {
            "model": out.ReadyOut,
            "description": "Brain or broker unreachable, or the brain refusing writes.",
        }
    },
)
def readyz(request: Request) -> JSONResponse:
    """Brain and broker reachable, and the brain taking writes (the last write's outcome,
    or a tiny probe write at most every few seconds; a SQLite brain's free disk)."""
    checks = {"brain": _check_brain(request), "broker": _check_broker(request)}
    ok = all(v == "ok" for v in checks.values())
    return JSONResponse(
        {"status": "ok" if ok else "unavailable", "checks": checks}, status_code=200 if ok else 503
    )


def _check_brain(request: Request) -> str:
    brain = _brain(request)
    try:
        with brain.read() as conn:
            conn.exec_driver_sql("SELECT 1").scalar()
    except mc.ReverieError as e:
        return str(e)
    return health.write_problem(brain) or "ok"


def _check_broker(request: Request) -> str:
    try:
        _runtime(request).jobs.sender.ping()
        return "ok"
    except Exception as e:  # any client failure means not ready
        return f"unreachable: {type(e).__name__}"
