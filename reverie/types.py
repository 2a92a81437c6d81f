"""What the API answers, as typed results: the server declares its responses with these
models and :mod:`reverie.client` parses them into the same.

Fields a newer server adds are ignored, so an older client keeps working.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

TraceType = Literal["episodic", "semantic", "procedural", "prospective", "relational"]
Scope = Literal["thread", "user", "persona", "organization"]


class Out(BaseModel):
    model_config = ConfigDict(extra="ignore")


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
    slot: str | None = Field(
        None, description="What it states a value of, subject/attribute: user/residence."
    )
    valid_from: float | None = Field(None, description="Since when it holds: when it was said.")
    valid_until: float | None = Field(
        None, description="Until when it held: when a later statement superseded it."
    )
    superseded_by: str | None = Field(None, description="The id of the statement that did.")


class DuplicateOut(Out):
    id: str
    kind: Literal["exact", "near"] = Field(description="The same words, or the same fact.")
    score: float = Field(description="1 for the same words; else the search's relevance.")
    content: str


class MemoryAdded(TraceOut):
    """The stored memory, and the caller's memories it says again."""

    existing: bool = Field(
        False,
        description="The same words were already kept in this scope id: this is that "
        "memory (200), its metadata.occurrences noting when each was said.",
    )
    duplicates: list[DuplicateOut] = Field(
        default_factory=list,
        description="Memories of the same scope id this one may repeat (close in meaning, "
        "and no number, date, negation, name, change or attribute found to differ): read "
        "both before merging.",
    )


class Successor(Out):
    """The later statement that superseded a hit."""

    id: str
    content: str | None = None
    occurred_at: str | None = Field(None, description="When it was said, ISO 8601 UTC.")


class Channel(Out):
    rank: int | None = Field(description="Its rank in this channel; null: scored only.")
    score: float | None = Field(
        None,
        description="Its score in this channel; left out of BM25's for a caller confined to "
        "scope ids (it weighs words by the whole brain's statistics).",
    )


class Attached(Out):
    """Another trace of a hit's memory."""

    id: str
    type: TraceType
    content: str


class HitOut(Out):
    """One search result: the trace, its score and how it was reached."""

    id: str
    content: str
    abstract: str = Field("", description="One line: its stored summary or first sentence.")
    snippet: str = Field("", description="The passage that matched the query.")
    type: TraceType
    scope: Scope
    scope_id: str | None
    tags: list[str]
    strength: float
    score: float = Field(description="The final score: fused, then adjusted.")
    fused: float = Field(description="The channels' fused score, before adjustments.")
    channels: dict[str, Channel] = Field(description="Each channel that found it: rank, score.")
    adjustments: dict[str, float]
    relevance: float = Field(
        description="How well it answers the query, 0-1, whatever the other hits: the larger "
        "of cosine similarity and the idf-weighted share of the query's words it holds."
    )
    occurred_at: str | None = Field(description="When it happened, ISO 8601 UTC.")
    created_at: str = Field(description="When it was stored, ISO 8601 UTC.")
    current: bool = Field(
        True,
        description="Whether it held at the search's time (now, or as_of): false once a "
        "later statement of the same thing superseded it.",
    )
    valid_from: str | None = Field(None, description="Since when it holds, ISO 8601 UTC.")
    valid_until: str | None = Field(
        None, description="Until when it held (a later statement superseded it), ISO 8601 UTC."
    )
    superseded_by: Successor | None = Field(None, description="The statement that superseded it.")
    attached: list[Attached] = Field(
        default_factory=list,
        description="The other traces of the same memory that matched (a fact's turn, a "
        "turn's facts): one memory is one hit, and limit counts memories.",
    )
    metadata: dict[str, Any]


class SearchOut(Out):
    results: list[HitOut]
    mode: Literal["fts", "natural"] = Field(description="How the full-text channel read q.")
    query: str = Field(description="The full-text query that ran.")
    channels: list[str] = Field(description="The channels that ranked.")
    degraded: list[str] = Field(description="Channels that should have ranked and could not.")
    query_id: str | None = Field(
        None, description="This search's id: report the results used with POST /v1/feedback."
    )


class FeedbackAccepted(Out):
    recorded: int = Field(description="Results of the search counted as used.")
    enqueued: bool = Field(description="Queued now; otherwise it was not recorded.")


class TurnAccepted(Out):
    turn_id: str
    duplicate: bool = Field(description="The caller's idempotency key was seen: its first turn.")
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
    parameters: dict[str, Any] = Field(description="The arguments' JSON Schema.")


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
    scope_id: str | None = None
    importance: float | None
    occurred_at: float | None


class ProposalOut(Out):
    id: str
    kind: Literal["prune", "merge", "conflict", "rewrite"]
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
    rewritten_content: str | None = Field(
        None, description="A rewrite's new text of its memory (an insight a person edited)."
    )
    superseded_id: str | None = Field(
        None, description="A conflict's earlier statement, superseded when accepted."
    )
    successor_id: str | None = Field(None, description="A conflict's later statement.")
    confidence: float | None = Field(
        None,
        description="How sure the pass was, 0 to 1: a merge's cosine, a conflict's "
        "similarity, how far a prune's strength fell below the threshold.",
    )
    stale: bool = Field(
        False,
        description="Pending, but one of its traces changed or went since it was made: "
        "accepting it would be refused.",
    )


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


class IdentityOut(Out):
    """Who the caller is, as the API sees it."""

    name: str
    capabilities: list[str]
    scope_ids: list[str] | None = Field(description="The scope ids it is pinned to; null: any.")


class TraceBrief(Out):
    id: str
    type: TraceType
    content: str
    scope_id: str | None
    occurred_at: float | None
    deleted: bool


class TraceChange(Out):
    at: float
    unit: str = Field(description="The pass, proposal or edit that made it (undone as one).")
    by: Literal["pass", "proposal", "edit", "other"]
    step: str
    created: bool = Field(description="The change made the trace.")
    content_before: str | None
    tags_before: list[str] | None
    version_after: int | None
    undone_at: float | None


class TraceProposal(Out):
    id: str
    kind: str
    status: str
    summary: str
    created_at: float
    decided_at: float | None
    pass_id: str | None


class HistoryOut(Out):
    """A memory's story: sources, supersession, journaled changes, proposals."""

    trace: TraceOut
    turns: list[str] = Field(description="The ids of the turns it was taken from.")
    sources: list[TraceBrief] = Field(description="The traces it cites.")
    cited_by: list[TraceBrief] = Field(description="The traces citing it (insights, facts).")
    replaced: list[TraceBrief] = Field(description="The statements it superseded.")
    replaced_by: list[TraceBrief] = Field(description="The statement that superseded it.")
    changes: list[TraceChange] = Field(description="Oldest first, with the words before.")
    proposals: list[TraceProposal]


class TagsOut(Out):
    tags: dict[str, int] = Field(description="Each tag with how many active memories carry it.")


class TagRenamed(Out):
    unit: str
    from_: str = Field(alias="from")
    to: str
    renamed: list[str]


class PassOut(Out):
    pass_id: str
    started_at: float
    duration_s: float | None
    status: str
    counts: dict[str, dict[str, int]] = Field(description="Each step's counts.")
    step_seconds: dict[str, float] = Field(description="How long each step took.")
    proposals: dict[str, int] = Field(description="Its proposals by status now.")
    report_path: str | None
    undone: bool
    undoable: bool = Field(description="It made unattended changes not undone yet.")


class PassesOut(Out):
    passes: list[PassOut]


class PassReportOut(Out):
    """A pass's report: each step's counts, time, notes, items and proposals."""

    model_config = ConfigDict(extra="allow")

    pass_id: str
    status: str
    steps: list[dict[str, Any]]
    proposals_decided: dict[str, int]
    undone: bool
    undoable: bool = Field(description="It made unattended changes not undone yet.")


class UndoneOut(Out):
    unit: str
    restored: list[str]
    removed: list[str]


class SourceTurn(Out):
    model_config = ConfigDict(extra="allow")

    turn_id: str
    timestamp: str | None


class MemoryAtLevel(Out):
    """One memory read short of whole: its abstract, an outline, or its sources."""

    id: str
    level: Literal["abstract", "outline", "sources"]
    type: TraceType
    scope: Scope
    scope_id: str | None
    occurred_at: str = Field(description="When it happened, ISO 8601 UTC.")
    abstract: str
    outline: list[str] | None = Field(None, description="A line per paragraph (outline).")
    turns: list[SourceTurn] | None = Field(None, description="The turns, verbatim (sources).")
    traces: list[Attached] | None = Field(None, description="The traces it cites (sources).")


class ContextMemory(Out):
    id: str
    occurred_at: str
    level: Literal["full", "abstract"]


class ContextOut(Out):
    """A block of the best memories for a query, to put in a prompt."""

    context: str = Field(description="One line a memory, dated and with its id; empty: none.")
    tokens: int = Field(description="Its size, estimated at four characters a token.")
    budget_tokens: int
    memories: list[ContextMemory]
    left_out: int = Field(description="Found, but past the budget.")
    degraded: list[str]


class PredicatesOut(Out):
    predicates: dict[str, str | None] = Field(
        description="Each named predicate's expression; null for each to a caller confined "
        "to scope ids (it may name other tenants' tags), which uses @name all the same."
    )
