"""The eight agent-facing memory tools: one table that every adapter reads.

:data:`TOOLS` holds each tool once -- its name, description, JSON Schema of
arguments (:mod:`memory_core.tools.schemas`), the capabilities it needs, its
handler, the follow-up work it leaves to the workers and how it may be
described to a client (read-only, destructive) -- and REST's ``/v1/tools``,
MCP and the Python API all list and call the tools from it.
:func:`call_tool` is the single entry point: it validates the arguments
against the schema itself, checks the caller's capabilities, runs the tool
and queues its follow-up, answering a JSON-ready result.  A refused call
answers ``{"error": {"code", "message"}}`` and changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from jsonschema import Draft202012Validator

from memory_core.auth import DELETE, DREAM, READ, WRITE
from memory_core.errors import InvalidArgument, ReverieError
from memory_core.jobs import Jobs
from memory_core.tools import handlers, schemas
from memory_core.tools.context import ToolContext, queue_reflect
from memory_core.wellformed import check_text

__all__ = [
    "TOOLS",
    "TOOL_SCHEMAS",
    "Tool",
    "ToolContext",
    "anthropic_tools",
    "call_tool",
    "openai_tools",
    "queue_reflect",
    "validate_arguments",
]

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any], ToolContext], dict[str, Any]]
FollowUp = Callable[[dict[str, Any], dict[str, Any], Jobs], None]


@dataclass(frozen=True)
class Tool:
    """One memory tool: everything any adapter needs to offer it."""

    name: str
    description: str
    parameters: dict[str, Any]
    needs: tuple[str, ...]  # capabilities of the caller (memory_core.auth)
    handler: Handler
    follow_up: FollowUp | None = None  # queued after a successful call
    read_only: bool = False  # changes nothing
    destructive: bool = False  # may delete memories

    @cached_property
    def validator(self) -> Any:
        return Draft202012Validator(self.parameters)

    def spec(self) -> dict[str, Any]:
        """Its description and parameters, as a function definition takes them."""
        return {"description": self.description, "parameters": self.parameters}


_TABLE = (
    Tool(
        "memory_add",
        "Store a new memory trace. Returns its id; searchable at once. An exact repeat "
        "answers the memory already kept (existing); memories that may repeat it are "
        "listed as duplicates: close in meaning, and no number, date, negation, name, "
        "change or attribute found to differ. Read both before merging.",
        schemas.ADD,
        (WRITE,),
        handlers.add,
        handlers.embed_added,
    ),
    Tool(
        "memory_update",
        "Replace the content and/or tags of an existing memory trace.",
        schemas.UPDATE,
        (WRITE,),
        handlers.update,
        handlers.embed_updated,
    ),
    Tool(
        "memory_delete",
        "Soft-delete a memory trace: it stays for audit, search never shows it.",
        schemas.DELETE,
        (DELETE,),
        handlers.delete,
        destructive=True,
    ),
    Tool(
        "memory_merge",
        "Merge two or more traces into the most-retrieved one; contents are joined "
        "with ' | ' unless mergedContent is given, tags unioned, the rest soft-deleted.",
        schemas.MERGE,
        (WRITE, DELETE),  # it deletes the merged-away traces
        handlers.merge,
        handlers.embed_merged,
        destructive=True,
    ),
    Tool(
        "memory_search",
        "Search memory, best match first. The query takes FTS5 syntax (AND, OR, NOT, "
        '"phrase", prefix*) or plain words.',
        schemas.SEARCH,
        (READ,),
        handlers.search,
        handlers.record_retrieval,
        read_only=True,
    ),
    Tool(
        "memory_reflect",
        "Run a consolidation (dream) pass: prune, merge, resolve, strengthen, derive, "
        "compact, re-index. A server queues it for its workers and answers its passId at once.",
        schemas.REFLECT,
        (DREAM,),
        handlers.reflect,
    ),
    Tool(
        "memory_post_turn",
        "Record one exchange of the conversation. It is stored verbatim and its facts "
        "extracted in the background; searchable within seconds.",
        schemas.POST_TURN,
        (WRITE,),
        handlers.post_turn,
    ),
    Tool(
        "memory_context",
        "The best memories for a query as one block to put in a prompt, dated and with "
        "their ids, within a token budget.",
        schemas.CONTEXT,
        (READ,),
        handlers.context,
        handlers.record_context,
        read_only=True,
    ),
    Tool(
        "memory_read",
        "One memory trace, in full or at the level asked: its one line, an outline, or the "
        "verbatim turns it came from (search answers each hit's first line and a snippet).",
        schemas.READ,
        (READ,),
        handlers.read,
        handlers.record_read,
        read_only=True,
    ),
    Tool(
        "memory_undo_supersession",
        "A memory marked superseded by a later one that does not replace it (another "
        "attribute, someone else): make it current again; the same later memory never "
        "supersedes it again.",
        schemas.DELETE,
        (WRITE,),
        handlers.undo_supersession,
    ),
)

TOOLS: dict[str, Tool] = {tool.name: tool for tool in _TABLE}

# The tools' descriptions and parameters by name: the JSON an LLM is given.
TOOL_SCHEMAS: dict[str, dict[str, Any]] = {name: tool.spec() for name, tool in TOOLS.items()}


def openai_tools() -> list[dict[str, Any]]:
    """The tools' definitions in OpenAI's ``tools=[{"type": "function", ...}]`` shape."""
    return [{"type": "function", "function": {"name": n, **s}} for n, s in TOOL_SCHEMAS.items()]


def anthropic_tools() -> list[dict[str, Any]]:
    """The tools' definitions in Anthropic's ``tools=[{"name", "input_schema"}]`` shape."""
    return [
        {"name": n, "description": s["description"], "input_schema": s["parameters"]}
        for n, s in TOOL_SCHEMAS.items()
    ]


def validate_arguments(name: str, arguments: Any) -> dict[str, Any]:
    """Check ``arguments`` against the tool's schema; InvalidArgument on the first error."""
    tool = TOOLS.get(name)
    if tool is None:
        raise InvalidArgument(f"unknown tool {name!r}; tools: {', '.join(TOOLS)}")
    return check_arguments(tool.validator, arguments)


def check_arguments(validator: Any, arguments: Any) -> dict[str, Any]:
    """Check ``arguments`` with a JSON Schema validator, every text in them well-formed
    (:func:`~memory_core.wellformed.check_text`); InvalidArgument on the first error."""
    if not isinstance(arguments, dict):
        raise InvalidArgument("arguments must be a JSON object")
    check_text(arguments)  # before any of it is compared, stored, embedded or sent on
    error = next(iter(sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))), None)
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path)
        raise InvalidArgument(f"{where}: {error.message}" if where else error.message)
    return arguments


def call_tool(name: str, arguments: Any, context: ToolContext) -> dict[str, Any]:
    """Run one tool call, queue its follow-up, and answer its JSON result (or an error
    result)."""
    try:
        args = validate_arguments(name, arguments)
        tool = TOOLS[name]
        context.identity.require(*tool.needs)
        result = tool.handler(args, context)
    except ReverieError as e:
        log.debug("tool %s refused: %s", name, e)
        return {"error": {"code": e.code, "message": str(e)}}
    if tool.follow_up is not None and context.jobs is not None:
        tool.follow_up(args, result, context.jobs)
    return result
