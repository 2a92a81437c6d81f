"""Request bodies.  Unknown fields are refused; types are not coerced."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

TraceType = Literal["episodic", "semantic", "procedural", "prospective", "relational"]
Scope = Literal["thread", "user", "persona", "organization"]
Id = Field(min_length=1, max_length=256)


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MessageIn(Body):
    """One message of a chat, the OpenAI shape."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    name: str | None = Field(None, min_length=1, max_length=256, description="Who said it.")


class TurnIn(Body):
    """A turn: ``user`` and ``assistant``, or the exchange as ``messages``."""

    user: str | None = None
    assistant: str | None = None
    messages: list[MessageIn] | None = Field(
        None,
        min_length=1,
        description="The exchange as a message list; system and tool messages are kept "
        "verbatim but never mined for the user's facts.",
    )
    scope: Scope
    scope_id: str = Field(min_length=1, max_length=256)
    conversation_id: str | None = Field(None, min_length=1, max_length=256)
    timestamp: datetime | None = Field(
        None, description="When the exchange happened, ISO 8601 (naive times are UTC)."
    )
    metadata: dict[str, Any] = Field(default_factory=dict)
    idempotency_key: str | None = Field(None, min_length=1, max_length=256)

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
            "example": {
                "user": "I moved to Lisbon last month.",
                "assistant": "How is it going?",
                "scope": "user",
                "scope_id": "alice",
            }
        },
    )


class MemoryIn(Body):
    content: str = Field(min_length=1)
    type: TraceType = "episodic"
    scope: Scope = "user"
    scope_id: str | None = Field(None, min_length=1, max_length=256)
    tags: list[str] = Field(default_factory=list)
    importance: float = Field(0.5, ge=0.0, le=1.0)
    metadata: dict[str, Any] = Field(default_factory=dict)
    timestamp: datetime | None = None


class MemoryPatch(Body):
    content: str | None = Field(None, min_length=1)
    tags: list[str] | None = None


class MergeIn(Body):
    ids: list[str] = Field(min_length=2)
    content: str | None = Field(None, min_length=1)


class TokenIn(Body):
    name: str = Field(min_length=1, max_length=64)
    can: list[Literal["read", "write", "delete", "dream", "admin"]] = Field(min_length=1)
    scope_ids: list[str] | None = Field(
        None, min_length=1, description="Pin the token to these scope ids: it sees only them."
    )
