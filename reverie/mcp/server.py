"""The MCP server: Reverie's memory tools and resources for any MCP client.

Tools: the memory tools of :data:`memory_core.tools.TOOLS`, the one table
REST's ``/v1/tools`` lists too, with the same schemas and results
(:func:`memory_core.call_tool`); ``memory_post_turn`` goes through the
runtime's group commit and queue, as ``POST /v1/turns`` does.  Resources:
``memory://memories/{id}`` and ``memory://proposals``.

The server knows no transport: who calls is the transport's business, over
HTTP each request's bearer token (``reverie.api.mcp_http``), over stdio the
token ``memctl mcp`` was started with (:mod:`reverie.mcp.stdio`).
Either puts a :class:`Caller` in :data:`CALLER` before a request reaches the
handlers here, and every tool and resource checks that caller's
capabilities and scope ids in memory_core.  A refused tool call is a tool
error result (``isError``) and changes nothing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

import memory_core as mc
from memory_core import auth, proposals
from memory_core.runtime import Runtime
from memory_core.tools import TOOLS, Tool, ToolContext

log = logging.getLogger(__name__)

MEMORY_URI = "memory://memories/"
PROPOSALS_URI = "memory://proposals"
FIRST_LINE_CHARS = 120


@dataclass(frozen=True)
class Caller:
    """Who makes an MCP request, and the scope ids its tool calls act on (user id etc.).

    ``session``, for a caller that lives as long as its process (stdio), re-checks
    its token every few seconds; each call then acts as the session's identity now.
    """

    identity: mc.Identity
    scope_ids: Mapping[str, str] = field(default_factory=dict)
    session: auth.Session | None = None

    def current(self) -> mc.Identity:
        """Who calls now; :class:`~memory_core.Unauthorized` once its token stopped working."""
        return self.identity if self.session is None else self.session.identity()


CALLER: ContextVar[Caller] = ContextVar("reverie_mcp_caller")


@dataclass
class Memory:
    """What the tools and resources act on: the process's runtime."""

    runtime: Runtime

    def call(self, name: str, arguments: Any, caller: Caller) -> dict[str, Any]:
        """One tool call's JSON result, or ``{"error": {"code", "message"}}``."""
        try:
            identity = caller.current()
        except mc.ReverieError as e:
            return {"error": {"code": e.code, "message": str(e)}}
        context = ToolContext.of(self.runtime, identity, caller.scope_ids)
        return mc.call_tool(name, arguments, context)

    def read(self, uri: str, caller: Caller) -> str:
        """A resource's JSON text; :class:`~memory_core.ReverieError` when refused."""
        identity = caller.current()
        identity.require(auth.READ)
        brain = self.runtime.brain
        if uri == PROPOSALS_URI:
            settings = self.runtime.settings
            found = proposals.list_proposals(brain, settings, identity=identity)
            return _json({"proposals": [p.to_dict() for p in found]})
        trace_id = uri.removeprefix(MEMORY_URI) if uri.startswith(MEMORY_URI) else ""
        if not trace_id or "/" in trace_id:
            raise mc.NotFound(f"no resource {uri}")
        return _json(mc.get_trace(brain, trace_id, identity=identity).to_dict())


def _json(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False)


def first_line(content: str) -> str:
    """The first non-empty line of ``content``, tabs flattened, cut at FIRST_LINE_CHARS."""
    line = next((x.strip() for x in content.splitlines() if x.strip()), "").replace("\t", " ")
    return line if len(line) <= FIRST_LINE_CHARS else line[: FIRST_LINE_CHARS - 1] + "…"


def _superseded(hit: dict[str, Any]) -> str:
    """A text line's note that a later statement replaced the hit, and which."""
    successor = hit.get("superseded_by")
    if not successor or hit.get("current", True):
        return ""
    said = first_line(successor["content"]) if successor.get("content") else successor["id"]
    return f"\t(superseded {hit.get('valid_until')} by: {said})"


def tool_result(name: str, result: dict[str, Any]) -> types.CallToolResult:
    """The MCP form of a tool's result: structured, plus a text block for the model."""
    error = result.get("error")
    if isinstance(error, dict):
        text = f"{error.get('code')}: {error.get('message')}"
        return types.CallToolResult(
            content=[types.TextContent(text=text)], structured_content=result, is_error=True
        )
    if name == "memory_search":
        rows = [
            f"{r['id']}\t{r['occurred_at']}\t{first_line(r['content'])}\t{r['score']}"
            + _superseded(r)
            for r in result["results"]
        ]
        text = "\n".join(rows) or "no matches"
    elif name == "memory_context":  # the block itself, ready to put in a prompt
        text = result["context"] or "no memories for this"
    else:
        text = _json(result)
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=result)


def _tools() -> list[types.Tool]:
    return [
        types.Tool(
            name=tool.name,
            description=tool.description,
            input_schema=tool.parameters,
            annotations=_hints(tool),
        )
        for tool in TOOLS.values()
    ]


def _hints(tool: Tool) -> types.ToolAnnotations | None:
    """What a client may tell its user about a tool: read-only or destructive."""
    if tool.read_only:
        return types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
    if tool.destructive:
        return types.ToolAnnotations(destructive_hint=True, open_world_hint=False)
    return None


def _refusal(e: mc.ReverieError) -> MCPError:
    """A refused resource read as an MCP error (not found, like the SDK, is invalid params)."""
    code = types.INVALID_REQUEST if isinstance(e, mc.Forbidden | mc.Unauthorized) else None
    return MCPError(code or types.INVALID_PARAMS, f"{e.code}: {e}", {"code": e.code})


INSTRUCTIONS = (
    "Long-term memory. memory_search lists matches one per line (id, first line, score); "
    "read the ones you need with memory_read (level: abstract, outline, full or sources) or "
    "the memory://memories/{id} resource; memory_context answers the best as one block "
    "within a token budget. Record each exchange with memory_post_turn; store a fact "
    "directly with memory_add."
)


def build_server(memory: Memory) -> Server[Any]:
    """The lowlevel MCP server over ``memory``; the caller of each request comes from CALLER."""
    tools = _tools()
    schemas = {t.name: t.input_schema for t in tools}

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        call = partial(memory.call, params.name, params.arguments or {}, CALLER.get())
        return tool_result(params.name, await anyio.to_thread.run_sync(call))

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        proposals_resource = types.Resource(
            uri=PROPOSALS_URI,
            name="proposals",
            description="Pending dream-pass proposals: deletions, merges and conflicts to decide.",
            mime_type="application/json",
        )
        return types.ListResourcesResult(resources=[proposals_resource])

    async def list_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        memory_template = types.ResourceTemplate(
            uri_template=MEMORY_URI + "{id}",
            name="memory",
            description="One memory trace in full, by its id (mt_...).",
            mime_type="application/json",
        )
        return types.ListResourceTemplatesResult(resource_templates=[memory_template])

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        try:
            text = await anyio.to_thread.run_sync(memory.read, params.uri, CALLER.get())
        except mc.ReverieError as e:
            raise _refusal(e) from e
        contents = types.TextResourceContents(
            uri=params.uri, mime_type="application/json", text=text
        )
        return types.ReadResourceResult(contents=[contents])

    return Server(
        "reverie",
        version=version("reverie"),
        instructions=INSTRUCTIONS,
        get_tool_input_schema=schemas.get,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )
