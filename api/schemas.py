"""Response bodies, so the OpenAPI document types every answer, and the statuses each
route may answer besides its success.

Routes still build plain dicts from memory_core's ``to_dict``; FastAPI checks them
against these models, so a drift between the two fails loudly in the tests.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from api.models import Scope, TraceType


class Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorDetail(Out):
    code: str = Field(description="Stable, machine-readable: not_found, conflict, ...")
    message: str = Field(description="What was wrong, naming the field first when one was.")


class ErrorOut(Out):
    """Every refusal: ``{"error": {"code", "message"}}``; nothing was changed."""

    error: ErrorDetail


class TraceOut(Out):
    """One memory trace; times are epoch seconds."""

    id: str
    brain_id: str
    type: TraceType
    scope: Scope
    scope_id: str | None
    content: str
    content_hash: str
    tags: list[str]
    importance: float
    strength: float
    stability: float
    created_at: float
    updated_at: float
    occurred_at: float | None
    last_accessed: float | None
    retrieval_count: int
    metadata: dict[str, Any]
    sources: list[Any]
    deleted: bool
    deleted_reason: str | None
    deleted_at: float | None
    version: int = Field(description="Incremented by every change; If-Match compares it.")
    stream: str | None
    learnt_at: float | None


class Channel(Out):
    rank: int | None = Field(description="Its rank in this channel; null: scored only.")
    score: float


class HitOut(Out):
    """One search result: the trace, its score and how it was reached."""

    id: str
    content: str
    type: TraceType
    scope: Scope
    scope_id: str | None
    tags: list[str]
    strength: float
    score: float = Field(description="The final score: fused, then adjusted.")
    fused: float = Field(description="The channels' fused score, before adjustments.")
    channels: dict[str, Channel] = Field(description="Each channel that found it: rank, score.")
    adjustments: dict[str, float]
    occurred_at: str | None = Field(description="When it happened, ISO 8601 UTC.")
    created_at: str = Field(description="When it was stored, ISO 8601 UTC.")
    metadata: dict[str, Any]


class SearchOut(Out):
    results: list[HitOut]
    mode: Literal["fts", "natural"] = Field(description="How the full-text channel read q.")
    query: str = Field(description="The full-text query that ran.")
    channels: list[str] = Field(description="The channels that ranked.")
    degraded: list[str] = Field(description="Channels that should have ranked and could not.")


class TurnAccepted(Out):
    turn_id: str
    duplicate: bool = Field(description="The idempotency key was seen: the first turn's id.")
    enqueued: bool = Field(description="Queued now; otherwise reconcile will queue it.")


class TurnStatus(Out):
    id: str
    status: Literal["pending", "done", "failed"]
    attempts: int
    last_error: str | None
    created_at: float
    processed_at: float | None


class MemoryPage(Out):
    memories: list[TraceOut] = Field(description="Newest stored first.")
    next_cursor: str | None = Field(description="Pass as cursor for the next page; null: last.")


class Deleted(Out):
    deleted: bool
    id: str


class Merged(Out):
    survivor_id: str
    deleted_ids: list[str]


class Forgotten(Out):
    """What forgetting one scope id removed, for good."""

    scope: Scope | None
    scope_id: str
    traces: int
    vectors: int
    turns: int
    edges: int
    proposals: int


class ToolOut(BaseModel):
    """One tool: its name and JSON schemas, usable as an LLM function definition."""

    model_config = ConfigDict(extra="allow")
    name: str
    description: str


class ToolsOut(Out):
    tools: list[ToolOut]


class ToolResult(BaseModel):
    """The tool's result; its shape is the tool's (see GET /v1/tools)."""

    model_config = ConfigDict(extra="allow")


class TokenOut(Out):
    """A token as listed: never its secret."""

    id: str
    name: str
    capabilities: list[str]
    scope_ids: list[str] | None
    created_at: float
    revoked_at: float | None


class TokenSecretOut(TokenOut):
    token: str = Field(description="The secret, shown this once: keep it.")


class TokensOut(Out):
    tokens: list[TokenOut]


class ProposalTrace(Out):
    id: str | None
    content: str | None
    type: str | None
    importance: float | None
    occurred_at: float | None


class ProposalOut(Out):
    id: str
    kind: Literal["prune", "merge"]
    status: str
    created_at: float
    age_seconds: float
    summary: str
    pass_id: str | None
    trace_ids: list[str]
    reason: str | None
    scores: dict[str, float]
    edited: bool = Field(description="Its file was changed by hand since it was written.")
    traces: list[ProposalTrace]
    merged_content: str | None = Field(None, description="A merge's exact result.")


class ProposalsOut(Out):
    proposals: list[ProposalOut]


class DecisionDetail(Out):
    id: str
    outcome: Literal["applied", "rejected", "undone"]
    detail: str


class DecisionOut(Out):
    decision: DecisionDetail


class HealthOut(Out):
    status: Literal["ok"]


class ReadyOut(Out):
    status: Literal["ok", "unavailable"]
    checks: dict[str, str]


def refusals(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route's own refusals, each with the error body."""
    return {s: {"model": ErrorOut, "description": DESCRIPTIONS[s]} for s in statuses}


DESCRIPTIONS = {
    400: "The body could not be read.",
    401: "A token is required, or this one is not valid.",
    403: "The caller may not do this (capability, scope id or a foreign web origin).",
    404: "Not found, or not the caller's.",
    405: "Method not allowed on this path.",
    409: "Conflict: the thing changed or is in another state; nothing was changed.",
    413: "The body is too large.",
    421: "The Host header does not name this API (only loopback names on an open API).",
    422: "A field or parameter is invalid; the message names it.",
    501: "Not enabled on this server.",
    503: "The brain is unusable right now.",
}

# Answered without a token: only the site guard may refuse them.
OPEN_PATHS = frozenset({"/healthz", "/readyz"})
# Every route answers these: the site guard (421, 403), tokens (401), the brain (503).
EVERY_ROUTE = (401, 403, 421, 503)
# A route with a body or parameters also answers these.
WITH_BODY = (400, 413, 422)
WITH_PARAMETERS = (422,)


def document_refusals(openapi: dict[str, Any]) -> None:
    """Add to every operation of ``openapi`` the refusals every route may answer, and
    make each 422 the error body the API really sends (not FastAPI's default)."""
    schemas = openapi.setdefault("components", {}).setdefault("schemas", {})
    error_schema = ErrorOut.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(error_schema.pop("$defs", {}))
    schemas["ErrorOut"] = error_schema
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}
    for path, operations in openapi.get("paths", {}).items():
        for operation in operations.values():
            statuses = list(EVERY_ROUTE if path not in OPEN_PATHS else (403, 421))
            if "requestBody" in operation:
                statuses += WITH_BODY
            if operation.get("parameters"):
                statuses += WITH_PARAMETERS
            for parameter in operation.get("parameters", []):
                _absent_not_null(parameter)
            responses = operation.setdefault("responses", {})
            for status in statuses:
                responses.setdefault(str(status), {"description": DESCRIPTIONS[status]})
            for status, response in responses.items():
                if int(status) >= 400 and ("content" not in response or status == "422"):
                    response["content"] = error


def _absent_not_null(parameter: dict[str, Any]) -> None:
    """An optional query or header parameter is given or left out, never ``null``: its
    schema is the given value's alone (FastAPI writes ``anyOf [X, null]``)."""
    schema = parameter.get("schema", {})
    kept = [s for s in schema.get("anyOf", []) if s != {"type": "null"}]
    if not parameter.get("required") and len(kept) < len(schema.get("anyOf", [])):
        others = {k: v for k, v in schema.items() if k != "anyOf"}
        parameter["schema"] = {**kept[0], **others} if len(kept) == 1 else {"anyOf": kept, **others}
