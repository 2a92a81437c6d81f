"""What each tool does: one handler per tool, and what it leaves to the workers.

A handler gets arguments already checked against the tool's schema and a
caller already checked for the tool's capabilities (:func:`memory_core.tools.call_tool`);
it acts for ``ctx.identity`` and answers a JSON-ready result.  A follow-up
runs after a call succeeded and queues what the workers do next (vectors for
new content, a search's retrieval feedback): it never fails the call.
"""

from __future__ import annotations

from typing import Any

from memory_core.auth import DREAM, brain_wide
from memory_core.consolidation.hints import duplicates_of
from memory_core.errors import Conflict, Forbidden, InvalidArgument, NotEnabled, NotFound
from memory_core.inbox.turns import Turn, accept_turn
from memory_core.jobs import Jobs
from memory_core.retrieval import feedback
from memory_core.retrieval.context import context as context_block
from memory_core.retrieval.context import read_at
from memory_core.retrieval.search import search as search_traces
from memory_core.timeref import iso, parse_time
from memory_core.tools.context import ToolContext
from memory_core.traces import levels, supersession
from memory_core.traces import store as traces
from memory_core.traces.merge import merge_traces


def add(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    scope = args.get("scope", "user")
    if ctx.scope_ids and scope not in ctx.scope_ids:
        raise Forbidden(
            f"a {scope} memory needs the {scope} id it belongs to, and this call names none "
            f"(X-Reverie-{scope.title()} over HTTP, --{scope} for memctl mcp)"
        )
    scope_id = ctx.identity.scope_id_for(ctx.scope_ids.get(scope), scope)
    # An agent saying it again: the memory it already has, this occurrence noted.
    again = traces.said_again(
        ctx.brain,
        args["content"],
        scope=scope,
        scope_id=scope_id,
        identity=ctx.identity,
        tags=args.get("tags", []),
    )
    if again is not None:
        return {"traceId": again.id, "existing": True}
    trace_id = traces.add_trace(
        ctx.brain,
        args["content"],
        type=args.get("type", "episodic"),
        scope=scope,
        scope_id=scope_id,
        tags=args.get("tags", []),
        identity=ctx.identity,
    )
    repeated = duplicates_of(
        ctx.brain,
        trace_id,
        args["content"],
        scope=scope,
        scope_id=scope_id,
        identity=ctx.identity,
        embedder=ctx.embedder,
    )
    if not repeated:
        return {"traceId": trace_id}
    return {"traceId": trace_id, "duplicates": [d.to_dict() for d in repeated]}


def update(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """``{"updated": false}`` for an id naming no active trace of the caller's, or when
    nothing is given to change (as the reference tools answer)."""
    if "content" not in args and "tags" not in args:
        return {"updated": False}
    try:
        traces.update_trace(
            ctx.brain,
            args["traceId"],
            content=args.get("content"),
            tags=args.get("tags"),
            identity=ctx.identity,
        )
    except NotFound:
        return {"updated": False}
    return {"updated": True}


def undo_supersession(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """``{"undone": false}`` with the reason for an id naming no active trace of the
    caller's, or one that is current."""
    try:
        supersession.undo_supersession(ctx.brain, args["traceId"], identity=ctx.identity)
    except NotFound:
        return {"undone": False, "reason": "no such memory"}
    except Conflict as e:
        return {"undone": False, "reason": str(e)}
    return {"undone": True}


def delete(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """``{"deleted": false}`` for an id naming no active trace of the caller's."""
    try:
        traces.delete_trace(ctx.brain, args["traceId"], identity=ctx.identity)
    except NotFound:
        return {"deleted": False}
    return {"deleted": True}


def merge(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    result = merge_traces(
        ctx.brain,
        args["traceIds"],
        merged_content=args.get("mergedContent"),
        identity=ctx.identity,
    )
    return {"survivorId": result.survivor_id, "deletedIds": result.deleted_ids}


def search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    scope = args.get("scope")
    response = search_traces(
        ctx.brain,
        args["query"],
        type=args.get("type"),
        scope=scope,
        scope_id=ctx.scope_ids.get(scope) if scope else None,
        tags=args.get("tags"),
        limit=int(args.get("limit", 10)),  # JSON counts 90.0 as an integer
        as_of=parse_time(args.get("asOf"), "asOf"),
        identity=ctx.identity,
        min_score=args.get("minScore"),
        embedder=ctx.embedder,
        reranker=ctx.reranker,
        tags_expr=args.get("tagsExpr"),
    )
    results = [
        {
            "id": h.trace.id,
            "content": h.trace.content,
            "abstract": levels.abstract(h.trace),
            "snippet": h.snippet,
            "type": h.trace.type,
            "scope": h.trace.scope,
            "strength": round(h.strength, 4),
            "tags": h.trace.tags,
            "score": round(h.score, 4),
            "relevance": round(h.relevance, 4),
            "occurred_at": iso(h.trace.occurred_at),
            "created_at": iso(h.trace.created_at),
            **h.validity(),
            "attached": h.attached_view(),
        }
        for h in response.results
    ]
    out: dict[str, Any] = {"results": results}
    if response.degraded:
        out["degraded"] = response.degraded
    return out


def reflect(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """A pass spans the whole brain: an identity confined to scope ids is refused."""
    brain_wide(ctx.identity, DREAM, act="a dream pass")
    if ctx.reflect is None:
        raise NotEnabled("dream passes are not available to this caller")
    return ctx.reflect()


def post_turn(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    scope = args.get("scope", "user")
    scope_id = ctx.identity.scope_id_for(args.get("scope_id") or ctx.scope_ids.get(scope), scope)
    if scope_id is None:  # a turn is someone's
        raise InvalidArgument(
            f"scope_id: required (or the caller's {scope} id: the X-Reverie-{scope.title()} "
            f"header, memctl mcp --{scope})"
        )
    fields: dict[str, Any] = {
        "scope": scope,
        "scope_id": scope_id,
        "conversation_id": args.get("conversation_id"),
        "timestamp": parse_time(args.get("timestamp"), "timestamp"),
        "metadata": args.get("metadata", {}),
        "idempotency_key": args.get("idempotency_key"),
    }
    turn = Turn.posted(args.get("user"), args.get("assistant"), args.get("messages"), **fields)
    if ctx.submit_turn is not None:
        accepted, enqueued = ctx.submit_turn(turn)
    else:
        accepted, enqueued = accept_turn(ctx.brain, turn, identity=ctx.identity), False
    return {"turn_id": accepted.turn_id, "duplicate": accepted.duplicate, "enqueued": enqueued}


def read(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return read_at(ctx.brain, args["traceId"], args.get("level", "full"), identity=ctx.identity)


def context(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    scope = args.get("scope")
    return context_block(
        ctx.brain,
        args["query"],
        identity=ctx.identity,
        budget_tokens=int(args.get("budgetTokens", 1000)),  # JSON counts 90.0 as an integer
        scope=scope,
        scope_id=ctx.scope_ids.get(scope) if scope else None,
        embedder=ctx.embedder,
        reranker=ctx.reranker,
    )


# -- follow-ups: what a successful call leaves to the workers -----------------


def record_read(args: dict[str, Any], result: dict[str, Any], jobs: Jobs) -> None:
    # A memory read in full, or down to its sources, was used: once, however often it is
    # read in the window.  Its one line or outline is a look, not a use.
    if args.get("level", "full") in ("full", "sources"):
        jobs.retrieved([result["id"]], query_key=feedback.query_key("read", result["id"]))


def record_context(args: dict[str, Any], result: dict[str, Any], jobs: Jobs) -> None:
    # What went into the prompt was used, as a search's results are.
    ids = [m["id"] for m in result["memories"]]
    asked = feedback.query_key("context", *(f"{k}={v!r}" for k, v in sorted(args.items())), *ids)
    jobs.retrieved(ids, query_key=asked)


def embed_added(args: dict[str, Any], result: dict[str, Any], jobs: Jobs) -> None:
    jobs.embed([result["traceId"]])


def embed_updated(args: dict[str, Any], result: dict[str, Any], jobs: Jobs) -> None:
    if "content" in args and result["updated"]:
        jobs.embed([args["traceId"]])


def embed_merged(args: dict[str, Any], result: dict[str, Any], jobs: Jobs) -> None:
    jobs.embed([result["survivorId"]])


def record_retrieval(args: dict[str, Any], result: dict[str, Any], jobs: Jobs) -> None:
    # The same search asked again within the feedback window, finding the same
    # memories, counts once.
    ids = [r["id"] for r in result["results"]]
    asked = feedback.query_key("tool", *(f"{k}={v!r}" for k, v in sorted(args.items())), *ids)
    jobs.retrieved(ids, query_key=asked)
