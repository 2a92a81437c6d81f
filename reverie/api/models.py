"""Request bodies.  Unknown fields are refused; types are not coerced."""

from __future__ import annotations

import math
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    TypeAdapter,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from typing_extensions import TypeAliasType

from memory_core.brain.schema import NO_NUL, SOME_TEXT
from memory_core.retrieval import tagexpr
from memory_core.timeref import EPOCH_RANGE
from memory_core.traces.model import MAX_TAG_LENGTH, MAX_TAGS
from memory_core.wellformed import check_text
from reverie.types import Scope, TraceType

# Text that is not only white space (what memory_core refuses as empty), and any
# text; neither with a NUL character, which no brain stores.
Said = Annotated[str, Field(pattern=NO_NUL)]
Id = Annotated[str, Field(min_length=1, max_length=256, pattern=SOME_TEXT)]
Text = Annotated[str, Field(min_length=1, pattern=SOME_TEXT)]
Tag = Annotated[str, Field(min_length=1, max_length=MAX_TAG_LENGTH, pattern=SOME_TEXT)]
# Metadata: any JSON, no NUL in its text or keys at any depth (as the document says:
# an object's keys must match the pattern, no other key is allowed).
_NoNulKeys = Field(json_schema_extra={"additionalProperties": False})
if TYPE_CHECKING:  # mypy follows no recursive TypeAliasType
    Metadata = dict[str, Any]
else:
    _Object = Annotated[dict[Said, "Json"], _NoNulKeys]
    # Union, not |: the forward references are strings until the alias is resolved.
    Json = TypeAliasType("Json", Union[Said, int, float, bool, list["Json"], _Object, None])  # noqa: UP007
    Metadata = Annotated[dict[Said, Json], _NoNulKeys]
_ISO = TypeAdapter(datetime)


def _when(value: Any, *, numeric_text: bool) -> datetime | float:
    """ISO 8601 text (a naive time is UTC) or epoch seconds, as the schema says: a
    number only as a number in a body, as its digits in a query string."""
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return _ISO.validate_python(value)
        if not numeric_text:
            raise ValueError("an ISO 8601 date-time, or epoch seconds as a number")
        value = number
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("an ISO 8601 date-time or epoch seconds")
    if not (math.isfinite(value) and EPOCH_RANGE[0] <= value <= EPOCH_RANGE[1]):
        raise ValueError("epoch seconds out of range (years 1 to 9999)")
    return float(value)


_WHEN_SCHEMA = WithJsonSchema(
    {
        "anyOf": [
            {"type": "string", "format": "date-time"},
            {"type": "number", "minimum": EPOCH_RANGE[0], "maximum": EPOCH_RANGE[1]},
        ]
    }
)
# ISO 8601 (a naive time is UTC) or epoch seconds: in a body, and in a query string.
When = Annotated[datetime | float, PlainValidator(partial(_when, numeric_text=False)), _WHEN_SCHEMA]
WhenQuery = Annotated[
    datetime | float, PlainValidator(partial(_when, numeric_text=True)), _WHEN_SCHEMA
]


class Body(BaseModel):
    """A request body: unknown fields refused, and every text in it, at any depth, well
    formed (memory_core's one check; its InvalidArgument answers 422 naming the field)."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _wellformed(cls, data: Any) -> Any:
        return check_text(data)


class MessageIn(Body):
    """One message of a chat, the OpenAI shape."""

    role: Literal["system", "user", "assistant", "tool"]
    content: Said
    name: Id | None = Field(None, description="Who said it.")


class TurnIn(Body):
    """A turn: ``user`` and ``assistant``, or the exchange as ``messages``."""

    user: Said | None = None
    assistant: Said | None = None
    messages: list[MessageIn] | None = Field(
        None,
        min_length=1,
        description="The exchange as a message list; system and tool messages are kept "
        "verbatim but never mined for the user's facts.",
    )
    scope: Scope
    scope_id: Id
    conversation_id: Id | None = None
    timestamp: When | None = Field(
        None, description="When the exchange happened: ISO 8601 (naive is UTC) or epoch seconds."
    )
    metadata: Metadata = Field(default_factory=dict)
    idempotency_key: Id | None = None

    @model_validator(mode="after")
    def _one_form(self) -> TurnIn:
        if self.messages is not None:
            if self.user is not None or self.assistant is not None:
                raise ValueError("give messages, or user and assistant, not both")
        elif self.user is None or self.assistant is None:
            raise ValueError("user and assistant are required (or messages)")
        return self

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            # One form or the other, with something said in it.
            "anyOf": [
                {
                    "required": ["user", "assistant"],
                    "properties": {
                        "user": {"type": "string"},
                        "assistant": {"type": "string"},
                        "messages": {"type": "null"},
                    },
                    "anyOf": [
                        {"properties": {"user": {"type": "string", "pattern": SOME_TEXT}}},
                        {"properties": {"assistant": {"type": "string", "pattern": SOME_TEXT}}},
                    ],
                },
                {
                    "required": ["messages"],
                    "properties": {
                        "user": {"type": "null"},
                        "assistant": {"type": "null"},
                        "messages": {
                            "type": "array",
                            "contains": {"properties": {"content": {"pattern": SOME_TEXT}}},
                        },
                    },
                },
            ],
            "example": {
                "user": "I moved to Lisbon last month.",
                "assistant": "How is it going?",
                "scope": "user",
                "scope_id": "alice",
            },
        },
    )


class MemoryIn(Body):
    content: Text
    type: TraceType = "episodic"
    scope: Scope = "user"
    scope_id: Id | None = None
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    importance: float = Field(0.5, ge=0.0, le=1.0, strict=True)
    metadata: Metadata = Field(default_factory=dict)
    timestamp: When | None = Field(
        None, description="When it happened: ISO 8601 (naive is UTC) or epoch seconds."
    )


class MemoryPatch(Body):
    """Give content, tags or both."""

    content: Text | None = None
    tags: list[Tag] | None = Field(None, max_length=MAX_TAGS)

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "anyOf": [
                {"required": ["content"], "properties": {"content": {"type": "string"}}},
                {"required": ["tags"], "properties": {"tags": {"type": "array"}}},
            ]
        },
    )


class FeedbackIn(Body):
    query_id: str = Field(
        pattern=r"^ret_[0-9a-f-]{36}$", description="The query_id a search answered with."
    )
    trace_ids: list[Id] = Field(
        min_length=1,
        max_length=100,
        json_schema_extra={"uniqueItems": True},
        description="The results of that search the caller read or cited.",
    )

    @field_validator("trace_ids")
    @classmethod
    def _once_each(cls, ids: list[str]) -> list[str]:
        if len(set(ids)) != len(ids):
            raise ValueError("each trace id once")
        return ids


class MergeIn(Body):
    ids: list[Id] = Field(min_length=2, json_schema_extra={"uniqueItems": True})
    content: Text | None = None


class TokenIn(Body):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    can: list[Literal["read", "write", "delete", "dream", "admin"]] = Field(min_length=1)
    scope_ids: list[Id] | None = Field(
        None, min_length=1, description="Pin the token to these scope ids: it sees only them."
    )


class TagRenameIn(Body):
    from_: Tag = Field(alias="from", description="The tag to rename.")
    to: Tag = Field(description="Its new name (merged into it where a memory has both).")


def _budget(value: Any) -> int:
    """A token budget: a JSON integer (50 and 50.0 are one number in JSON), in range."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("an integer")
    if not math.isfinite(value) or not float(value).is_integer():
        raise ValueError("an integer")
    if not BUDGET_RANGE[0] <= value <= BUDGET_RANGE[1]:
        raise ValueError(f"between {BUDGET_RANGE[0]} and {BUDGET_RANGE[1]}")
    return int(value)


BUDGET_RANGE = (50, 32_000)
Budget = Annotated[
    int,
    PlainValidator(_budget),
    WithJsonSchema({"type": "integer", "minimum": BUDGET_RANGE[0], "maximum": BUDGET_RANGE[1]}),
]


class ContextIn(Body):
    query: Text
    scope: Scope | None = None
    scope_id: Id | None = None
    budget_tokens: Budget = Field(1000, description="At most this many tokens (estimated).")


class PredicateIn(Body):
    expression: Annotated[str, Field(max_length=tagexpr.MAX_LENGTH, pattern=tagexpr.PATTERN)]
