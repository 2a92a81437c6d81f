"""The tools' JSON Schemas: what each one's arguments may be.

Usable as they are as an OpenAI ``function``'s or an Anthropic ``tool``'s
parameters; :func:`memory_core.tools.call_tool` validates every call against
them itself, so a caller that skips validation still cannot store a bad trace.
"""

from __future__ import annotations

from typing import Any

from memory_core.brain.schema import NO_NUL, NOT_BLANK, SCOPES, SOME_TEXT, TRACE_TYPES
from memory_core.inbox.turns import MAX_ID_LENGTH, ROLES
from memory_core.retrieval import tagexpr
from memory_core.timeref import EPOCH_RANGE
from memory_core.traces.model import MAX_TAG_LENGTH, MAX_TAGS

_TEXT = {"type": "string", "minLength": 1, "pattern": SOME_TEXT}  # not only white space
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

ADD: dict[str, Any] = {
    "type": "object",
    "properties": {
        "content": {**_TEXT, "description": "The text to remember."},
        "type": {"type": "string", "enum": list(TRACE_TYPES), "default": "episodic"},
        "scope": {"type": "string", "enum": list(SCOPES), "default": "user"},
        "tags": {**_TAGS, "description": "Free-form tags for filtering."},
    },
    "required": ["content"],
    "additionalProperties": False,
}

UPDATE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "traceId": _TRACE_ID,
        "content": {**_TEXT, "description": "New content."},
        "tags": {**_TAGS, "description": "New tags (replace the old ones)."},
    },
    "required": ["traceId"],
    "additionalProperties": False,
}

DELETE: dict[str, Any] = {
    "type": "object",
    "properties": {"traceId": _TRACE_ID},
    "required": ["traceId"],
    "additionalProperties": False,
}

MERGE: dict[str, Any] = {
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
}

SEARCH: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": _TEXT,
        "type": {"type": "string", "enum": list(TRACE_TYPES)},
        "scope": {"type": "string", "enum": list(SCOPES)},
        "tags": {**_TAGS, "description": "Only traces carrying every one of these tags."},
        "tagsExpr": {
            "type": "string",
            "pattern": tagexpr.PATTERN,
            "maxLength": 1000,
            "description": "Only traces passing this tag expression: a & b, a | b, !a, "
            "(...), key=value, /regex/, mutex(a, b), @named.",
        },
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
}

REFLECT: dict[str, Any] = {
    "type": "object",
    "properties": {"topic": {"type": "string", "description": "Reserved; ignored."}},
    "additionalProperties": False,
}

POST_TURN: dict[str, Any] = {
    "type": "object",
    "properties": {
        "user": {"type": "string", "pattern": NO_NUL, "description": "What the user said."},
        "assistant": {
            "type": "string",
            "pattern": NO_NUL,
            "description": "What the assistant answered.",
        },
        "messages": {
            "type": "array",
            "minItems": 1,
            "description": "Instead of user and assistant: the exchange as a message "
            "list; system and tool messages are kept but never mined for facts.",
            "items": {
                "type": "object",
                "properties": {
                    "role": {"enum": list(ROLES)},
                    "content": {"type": "string", "pattern": NO_NUL},
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
        "idempotency_key": {**_ID, "description": "A key the tenant repeats is accepted once."},
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
}

READ: dict[str, Any] = {
    "type": "object",
    "properties": {
        "traceId": _TRACE_ID,
        "level": {
            "type": "string",
            "enum": ["abstract", "outline", "full", "sources"],
            "default": "full",
            "description": "How deep: one line, a line per paragraph, the whole trace, or "
            "the verbatim turns and traces it came from.",
        },
    },
    "required": ["traceId"],
    "additionalProperties": False,
}

CONTEXT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": _TEXT,
        "scope": {"type": "string", "enum": list(SCOPES)},
        "budgetTokens": {
            "type": "integer",
            "minimum": 50,
            "maximum": 32000,
            "default": 1000,
            "description": "At most this many tokens (estimated at four characters each).",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}
