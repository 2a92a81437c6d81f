"""The six agent-facing memory tools, as JSON-schema'd functions.

:data:`TOOL_SCHEMAS` holds one definition per tool (name, description, JSON
Schema of the arguments) usable as an OpenAI ``function`` or an Anthropic
``tool``.  :func:`call_tool` is the single entry point: it validates the
arguments against the schema itself -- callers that skip validation still
cannot store a bad trace -- runs the tool and answers a JSON-ready result.
A refused call answers ``{"error": {"code", "message"}}`` and changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

from memory_core import traces
from memory_core.auth import DELETE, DREAM, OPEN, READ, WRITE, Identity
from memory_core.db import Brain
from memory_core.errors import Forbidden, InvalidArgument, NotEnabled, ReverieError
from memory_core.ingest import MAX_ID_LENGTH, ROLES, Accepted, Turn, accept_turn
from memory_core.schema import NOT_BLANK, SCOPES, TRACE_TYPES
from memory_core.search import DEFAULT_EMBEDDER
from memory_core.search import search as search_traces
from memory_core.timeref import EPOCH_RANGE, iso, parse_time
from memory_core.trace_merge import merge_traces
from memory_core.traces import MAX_TAG_LENGTH, MAX_TAGS

log = logging.getLogger(__name__)

_TEXT = {"type": "string", "minLength": 1, "pattern": NOT_BLANK}  # not only white space
_TAGS = {
    "type": "array",
    "items": {**_TEXT, "maxLength": MAX_TAG_LENGTH},
    "maxItems": MAX_TAGS,
    "uniqueItems": True,
}
_TRACE_ID = {**_TEXT, "description": "ID of the trace (mt_...)."}
_ID = {**_TEXT, "maxLength": MAX_ID_LENGTH}
# A time: ISO 8601 (a date, or a date and time), or epoch seconds as a number or its digits.
_WHEN = {
    "anyOf": [
        {"type": "string", "format": "date-time"},
        {"type": "string", "format": "date"},
        {"type": "number", "minimum": EPOCH_RANGE[0], "maximum": EPOCH_RANGE[1]},
        {"type": "string", "pattern": r"^[+-]?[0-9]{1,11}(\.[0-9]+)?$"},
    ]
}

TOOL_SCHEMAS: dict[str, dict[str, Any]] = {
    "memory_add": {
        "description": "Store a new memory trace. Returns its id; searchable at once.",
        "parameters": {
            "type": "object",
            "properties": {
                "content": {**_TEXT, "description": "The text to remember."},
                "type": {"type": "string", "enum": list(TRACE_TYPES), "default": "episodic"},
                "scope": {"type": "string", "enum": list(SCOPES), "default": "user"},
                "tags": {**_TAGS, "description": "Free-form tags for filtering."},
            },
            "required": ["content"],
            "additionalProperties": False,
        },
    },
    "memory_update": {
        "description": "Replace the content and/or tags of an existing memory trace.",
        "parameters": {
            "type": "object",
            "properties": {
                "traceId": _TRACE_ID,
                "content": {**_TEXT, "description": "New content."},
                "tags": {**_TAGS, "description": "New tags (replace the old ones)."},
            },
            "required": ["traceId"],
            "additionalProperties": False,
        },
    },
    "memory_delete": {
        "description": "Soft-delete a memory trace: it stays for audit, search never shows it.",
        "parameters": {
            "type": "object",
            "properties": {"traceId": _TRACE_ID},
            "required": ["traceId"],
            "additionalProperties": False,
        },
    },
    "memory_merge": {
        "description": (
            "Merge two or more traces into the most-retrieved one; contents are joined "
            "with ' | ' unless mergedContent is given, tags unioned, the rest soft-deleted."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "traceIds": {
                    "type": "array",
                    "items": _TEXT,
                    "minItems": 2,
                    "uniqueItems": True,
                },
                "mergedContent": _TEXT,
            },
            "required": ["traceIds"],
            "additionalProperties": False,
        },
    },
    "memory_search": {
        "description": (
            "Search memory, best match first. The query takes FTS5 syntax (AND, OR, NOT, "
            '"phrase", prefix*) or plain words.'
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": _TEXT,
                "type": {"type": "string", "enum": list(TRACE_TYPES)},
                "scope": {"type": "string", "enum": list(SCOPES)},
                "tags": {**_TAGS, "description": "Only traces carrying every one of these tags."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
                "minScore": {
                    "type": "number",
                    "minimum": 0,
                    "maximum": 1,
                    "description": "Leave out hits less relevant than this (0-1; default: the "
                    "server's floor). A query about something never stored answers nothing.",
                },
                "asOf": {
                    **_WHEN,
                    "description": "Recall what was valid at this time (ISO 8601, or epoch "
                    "seconds): traces deleted later still show, traces from later do not.",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
    "memory_reflect": {
        "description": (
            "Run a consolidation (dream) pass: prune, merge, strengthen, derive, compact, "
            "re-index. A server queues it for its workers and answers its passId at once."
        ),
        "parameters": {
            "type": "object",
            "properties": {"topic": {"type": "string", "description": "Reserved; ignored."}},
            "additionalProperties": False,
        },
    },
    "memory_post_turn": {
        "description": (
            "Record one exchange of the conversation. It is stored verbatim and its facts "
            "extracted in the background; searchable within seconds."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "user": {"type": "string", "description": "What the user said."},
                "assistant": {"type": "string", "description": "What the assistant answered."},
                "messages": {
                    "type": "array",
                    "minItems": 1,
                    "description": "Instead of user and assistant: the exchange as a message "
                    "list; system and tool messages are kept but never mined for facts.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "role": {"enum": list(ROLES)},
                            "content": {"type": "string"},
                            "name": {**_ID, "description": "Who said it."},
                        },
                        "required": ["role", "content"],
                        "additionalProperties": False,
                    },
                    # Something said in it: a list of only blank messages is refused.
                    "contains": {"properties": {"content": {"pattern": NOT_BLANK}}},
                },
                "scope": {"type": "string", "enum": list(SCOPES), "default": "user"},
                "scope_id": {**_ID, "description": "Default: the caller's id for the scope."},
                "conversation_id": _ID,
                "timestamp": {
                    **_WHEN,
                    "description": "When it happened: ISO 8601 or epoch seconds.",
                },
                "metadata": {"type": "object"},
                "idempotency_key": {**_ID, "description": "A repeated key is accepted once."},
            },
            "oneOf": [
                {
                    "required": ["user", "assistant"],
                    "not": {"required": ["messages"]},
                    # Something said: the user's part or the assistant's.
                    "anyOf": [
                        {"properties": {"user": {"pattern": NOT_BLANK}}},
                        {"properties": {"assistant": {"pattern": NOT_BLANK}}},
                    ],
                },
                {
                    "required": ["messages"],
                    "not": {"anyOf": [{"required": ["user"]}, {"required": ["assistant"]}]},
                },
            ],
            "additionalProperties": False,
        },
    },
    "memory_read": {
        "description": "One memory trace in full (search lists only each one's first line).",
        "parameters": {
            "type": "object",
            "properties": {"traceId": _TRACE_ID},
            "required": ["traceId"],
            "additionalProperties": False,
        },
    },
}

_VALIDATORS = {name: Draft202012Validator(s["parameters"]) for name, s in TOOL_SCHEMAS.items()}


def openai_tools() -> list[dict[str, Any]]:
    """The tools' definitions in OpenAI's ``tools=[{"type": "function", ...}]`` shape."""
    return [{"type": "function", "function": {"name": n, **s}} for n, s in TOOL_SCHEMAS.items()]


def anthropic_tools() -> list[dict[str, Any]]:
    """The tools' definitions in Anthropic's ``tools=[{"name", "input_schema"}]`` shape."""
    return [
        {"name": n, "description": s["description"], "input_schema": s["parameters"]}
        for n, s in TOOL_SCHEMAS.items()
    ]


@dataclass
class ToolContext:
    """Who is calling: the brain, and the scope ids of this call (user id etc.).

    ``reflect`` runs a dream pass and answers its counts; None where passes
    are not available to this caller.  ``identity`` decides what the call may
    do (:data:`TOOL_CAPABILITIES`) and which scope ids it sees and writes:
    confined to ``scope_ids`` when the call names any (see
    :meth:`~memory_core.auth.Identity.acting_as`).
    """

    brain: Brain
    scope_ids: Mapping[str, str] = field(default_factory=dict)
    reflect: Callable[[], dict[str, Any]] | None = None
    identity: Identity = OPEN
    # The process's embedder, so a search embeds its query with the model the
    # process already holds; by default, the one the brain's settings name.
    embedder: Any = DEFAULT_EMBEDDER
    # How memory_post_turn hands a turn on: commit and enqueue, as the adapter does
    # (the API's group commit, say); by default, committed to the inbox, where the
    # workers' reconcile finds it.
    submit_turn: Callable[[Turn], tuple[Accepted, bool]] | None = None

    def __post_init__(self) -> None:
        self.identity = self.identity.acting_as(self.scope_ids.values())


# What each tool needs of its caller's identity (memory_core.auth).
TOOL_CAPABILITIES: dict[str, tuple[str, ...]] = {
    "memory_add": (WRITE,),
    "memory_update": (WRITE,),
    "memory_delete": (DELETE,),
    "memory_merge": (WRITE, DELETE),
    "memory_search": (READ,),
    "memory_post_turn": (WRITE,),
    "memory_read": (READ,),
    "memory_reflect": (DREAM,),
}


def validate_arguments(name: str, arguments: Any) -> dict[str, Any]:
    """Check ``arguments`` against the tool's schema; InvalidArgument on the first error."""
    validator = _VALIDATORS.get(name)
    if validator is None:
        raise InvalidArgument(f"unknown tool {name!r}; tools: {', '.join(TOOL_SCHEMAS)}")
    return check_arguments(validator, arguments)


def argument_validator(parameters: dict[str, Any]) -> Any:
    """A validator of one JSON Schema of arguments, for :func:`check_arguments`."""
    return Draft202012Validator(parameters)


def check_arguments(validator: Any, arguments: Any) -> dict[str, Any]:
    """Check ``arguments`` with an :func:`argument_validator`; InvalidArgument on the first error.

    Adapters offering tools of their own (the MCP server) check them the same way.
    """
    if not isinstance(arguments, dict):
        raise InvalidArgument("arguments must be a JSON object")
    error = next(iter(sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))), None)
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path)
        raise InvalidArgument(f"{where}: {error.message}" if where else error.message)
    return arguments


def call_tool(name: str, arguments: Any, context: ToolContext) -> dict[str, Any]:
    """Run one tool call and answer its JSON result (or an error result)."""
    try:
        args = validate_arguments(name, arguments)
        context.identity.require(*TOOL_CAPABILITIES[name])
        return _HANDLERS[name](args, context)
    except ReverieError as e:
        log.debug("tool %s refused: %s", name, e)
        return {"error": {"code": e.code, "message": str(e)}}


def _add(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    scope = args.get("scope", "user")
    if ctx.scope_ids and scope not in ctx.scope_ids:
        raise Forbidden(
            f"a {scope} memory needs the {scope} id it belongs to, and this call names none "
            f"(X-Reverie-{scope.title()} over HTTP, --{scope} for memctl mcp)"
        )
    scope_id = ctx.identity.scope_id_for(ctx.scope_ids.get(scope))
    existing = traces.find_same(ctx.brain, args["content"], scope, scope_id)
    if existing is not None:  # an agent saying it again: the memory it already has
        return {"traceId": existing, "existing": True}
    trace_id = traces.add_trace(
        ctx.brain,
        args["content"],
        type=args.get("type", "episodic"),
        scope=scope,
        scope_id=scope_id,
        tags=args.get("tags", []),
    )
    return {"traceId": trace_id}


def _update(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    updated = traces.update_trace(
        ctx.brain,
        args["traceId"],
        content=args.get("content"),
        tags=args.get("tags"),
        within=ctx.identity.within,
    )
    return {"updated": updated is not None}


def _delete(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {"deleted": traces.delete_trace(ctx.brain, args["traceId"], within=ctx.identity.within)}


def _merge(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    result = merge_traces(
        ctx.brain,
        args["traceIds"],
        merged_content=args.get("mergedContent"),
        within=ctx.identity.within,
    )
    return {"survivorId": result.survivor_id, "deletedIds": result.deleted_ids}


def _search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
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
        within=ctx.identity.within,
        min_score=args.get("minScore"),
        embedder=ctx.embedder,
    )
    results = [
        {
            "id": h.trace.id,
            "content": h.trace.content,
            "type": h.trace.type,
            "scope": h.trace.scope,
            "strength": round(h.strength, 4),
            "tags": h.trace.tags,
            "score": round(h.score, 4),
            "relevance": round(h.relevance, 4),
            "occurred_at": iso(h.trace.occurred_at),
            "created_at": iso(h.trace.created_at),
        }
        for h in response.results
    ]
    out: dict[str, Any] = {"results": results}
    if response.degraded:
        out["degraded"] = response.degraded
    return out


def _reflect(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if ctx.reflect is None:
        raise NotEnabled("dream passes are not available to this caller")
    return ctx.reflect()


def _post_turn(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    scope = args.get("scope", "user")
    scope_id = ctx.identity.scope_id_for(args.get("scope_id") or ctx.scope_ids.get(scope))
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
        accepted, enqueued = accept_turn(ctx.brain, turn, within=ctx.identity.within), False
    return {"turn_id": accepted.turn_id, "duplicate": accepted.duplicate, "enqueued": enqueued}


def _read(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return traces.get_trace(ctx.brain, args["traceId"], within=ctx.identity.within).to_dict()


_HANDLERS: dict[str, Callable[[dict[str, Any], ToolContext], dict[str, Any]]] = {
    "memory_add": _add,
    "memory_update": _update,
    "memory_delete": _delete,
    "memory_merge": _merge,
    "memory_search": _search,
    "memory_post_turn": _post_turn,
    "memory_read": _read,
    "memory_reflect": _reflect,
}
