"""What a trace is: the decoded row, a trace to add, and the checks every write makes.

Pure: no brain access here (:mod:`memory_core.traces.store` reads and writes).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from memory_core.brain.schema import SCOPES, TRACE_TYPES
from memory_core.errors import InvalidArgument
from memory_core.traces.stated import stated
from memory_core.wellformed import check_text

T = TypeVar("T")

# A trace that still counts as known for deduplication: active, or deleted by
# anything but an accepted prune (forgetting for disuse never blocks relearning).
PRUNED_PREFIX = "pruned"
KNOWN_SQL = f"(deleted = 0 OR coalesce(deleted_reason, '') NOT LIKE '{PRUNED_PREFIX}%')"

MAX_TAGS = 64
TURN_TAG = "turn"  # the tag of a posted turn's verbatim episode
FACT_TAG = "auto_ingest"  # the tag of a fact drawn from a turn or an imported exchange
KEEP_TAG = "keep"  # a trace the user asked to be kept: never proposed for pruning
MAX_TAG_LENGTH = 128
MAX_STREAM_LENGTH = 512
MAX_SLOT_LENGTH = 256
# Trace fields that are the brain's own bookkeeping, not part of a trace's view.
_INTERNAL_FIELDS = frozenset({"seq", "prev_seq", "context"})


def new_trace_id() -> str:
    return f"mt_{uuid.uuid4()}"


def _loads(raw: str) -> Any:
    """json.loads, with the common empty values skipped past the parser."""
    if raw == "[]":
        return []
    if raw == "{}":
        return {}
    return json.loads(raw)


@dataclass(frozen=True)
class Trace:
    """One row of memory_traces, decoded."""

    seq: int
    id: str
    brain_id: str
    type: str
    scope: str
    scope_id: str | None
    content: str
    content_hash: str
    tags: list[str]
    importance: float
    strength: float
    stability: float
    created_at: float
    updated_at: float
    occurred_at: float
    last_accessed: float | None
    retrieval_count: int
    metadata: dict[str, Any]
    sources: list[Any]
    deleted: bool
    deleted_reason: str | None
    deleted_at: float | None
    version: int
    stream: str | None = None
    prev_seq: int | None = None
    context: str = ""
    learnt_at: float | None = None
    slot: str | None = None
    valid_until: float | None = None
    superseded_by: str | None = None

    @property
    def valid_from(self) -> float:
        """Since when the trace holds: when it was said or happened."""
        return self.occurred_at

    @property
    def memory(self) -> str:
        """Which memory it is part of: a posted turn (its verbatim episode and the facts
        drawn from it are one), else itself alone."""
        turn = self.metadata.get("turn_id")
        return f"turn:{turn}" if isinstance(turn, str) and turn else self.id

    @property
    def cited(self) -> list[str]:
        """The traces it was drawn from or cites (``sources`` naming a ``trace``): a
        fact's episode, an insight's statements."""
        return [
            s["trace"]
            for s in self.sources
            if isinstance(s, dict) and isinstance(s.get("trace"), str)
        ]

    @property
    def superseded(self) -> bool:
        """Whether a later statement of the same subject and attribute replaced it."""
        return self.superseded_by is not None

    @classmethod
    def from_row(cls, row: Any) -> Trace:
        return cls.from_mapping(row._mapping)

    @classmethod
    def from_mapping(cls, m: Any) -> Trace:
        """From any mapping of column names to values."""
        return cls(
            seq=m["seq"],
            id=m["id"],
            brain_id=m["brain_id"],
            type=m["type"],
            scope=m["scope"],
            scope_id=m["scope_id"],
            content=m["content"],
            content_hash=m["content_hash"],
            tags=_loads(m["tags"]),
            importance=m["importance"],
            strength=m["strength"],
            stability=m["stability"],
            created_at=m["created_at"],
            updated_at=m["updated_at"],
            occurred_at=m["occurred_at"],
            last_accessed=m["last_accessed"],
            retrieval_count=m["retrieval_count"],
            metadata=_loads(m["metadata"]),
            sources=_loads(m["sources"]),
            deleted=bool(m["deleted"]),
            deleted_reason=m["deleted_reason"],
            deleted_at=m["deleted_at"],
            version=m["version"],
            stream=m["stream"],
            prev_seq=m["prev_seq"],
            context=m["context"],
            learnt_at=m["learnt_at"],
            slot=m.get("slot"),
            valid_until=m.get("valid_until"),
            superseded_by=m.get("superseded_by"),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view, without the internal rowids and the copied context."""
        view = {k: v for k, v in self.__dict__.items() if k not in _INTERNAL_FIELDS}
        view["valid_from"] = self.valid_from
        return view


@dataclass
class NewTrace:
    """What a caller gives to store one trace; validated by :func:`check_new`."""

    content: str
    type: str = "episodic"
    scope: str = "user"
    scope_id: str | None = None
    tags: Sequence[str] = ()
    importance: float = 0.5
    metadata: dict[str, Any] = field(default_factory=dict)
    sources: list[Any] = field(default_factory=list)
    occurred_at: float | None = None
    id: str | None = None
    # The conversation this trace is a turn of: its previous turn in the same
    # stream is linked and indexed with it as context.
    stream: str | None = None
    # What it states a value of ("user/job"): a later statement of the same slot in
    # the same scope id supersedes it (memory_core.supersession).
    slot: str | None = None


# -- validation --------------------------------------------------------------


def check_type(value: str) -> str:
    if value not in TRACE_TYPES:
        raise InvalidArgument(f"type must be one of {', '.join(TRACE_TYPES)}; got {value!r}")
    return value


def check_scope(value: str) -> str:
    if value not in SCOPES:
        raise InvalidArgument(f"scope must be one of {', '.join(SCOPES)}; got {value!r}")
    return value


def check_content(value: Any, name: str = "content") -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument(f"{name} must be a non-empty string")
    return refuse_nul(value, name)


def refuse_nul(value: T, name: str) -> T:
    """``value`` (text, or a list or object holding text) unless some text in it holds
    a NUL character or a lone surrogate (:func:`memory_core.wellformed.check_text`)."""
    return check_text(value, name)


def check_tags(value: Iterable[Any] | None) -> list[str]:
    """Tags stripped, empty ones refused, duplicates dropped (first kept)."""
    if value is None:
        return []
    if isinstance(value, str):
        raise InvalidArgument("tags must be a list of strings")
    tags: list[str] = []
    for raw in value:
        if not isinstance(raw, str) or not raw.strip():
            raise InvalidArgument("tags must be non-empty strings")
        tag = refuse_nul(raw.strip(), "tags")
        if len(tag) > MAX_TAG_LENGTH:
            raise InvalidArgument(f"a tag is longer than {MAX_TAG_LENGTH} characters")
        if tag not in tags:
            tags.append(tag)
    if len(tags) > MAX_TAGS:
        raise InvalidArgument(f"at most {MAX_TAGS} tags")
    return tags


def check_new(item: NewTrace) -> NewTrace:
    check_content(item.content)
    check_type(item.type)
    check_scope(item.scope)
    if item.scope_id is not None and (not isinstance(item.scope_id, str) or not item.scope_id):
        raise InvalidArgument("scope_id must be a non-empty string when given")
    if not isinstance(item.importance, int | float) or not 0.0 <= item.importance <= 1.0:
        raise InvalidArgument("importance must be a number from 0 to 1")
    if not isinstance(item.metadata, dict):
        raise InvalidArgument("metadata must be an object")
    for name in ("scope_id", "id", "stream", "slot", "metadata"):
        refuse_nul(getattr(item, name), name)
    if item.id is not None and not (isinstance(item.id, str) and item.id.strip()):
        raise InvalidArgument("id must be a non-empty string when given")
    if item.stream is not None and not (
        isinstance(item.stream, str)
        and item.stream.strip()
        and len(item.stream) <= MAX_STREAM_LENGTH
    ):
        raise InvalidArgument(f"stream must be 1 to {MAX_STREAM_LENGTH} characters when given")
    if item.slot is not None and not (
        isinstance(item.slot, str) and "/" in item.slot and len(item.slot) <= MAX_SLOT_LENGTH
    ):
        raise InvalidArgument(
            f"slot must be 'subject/attribute', at most {MAX_SLOT_LENGTH} characters, when given"
        )
    metadata, occurred_at = item.metadata, item.occurred_at
    if "speaker" not in metadata or occurred_at is None:  # what the words say instead
        speaker, when = stated(item.content)
        if speaker is not None and "speaker" not in metadata:
            metadata = {**metadata, "speaker": speaker}
        occurred_at = when if occurred_at is None else occurred_at
    return NewTrace(
        content=item.content,
        type=item.type,
        scope=item.scope,
        scope_id=item.scope_id,
        tags=check_tags(item.tags),
        importance=float(item.importance),
        metadata=metadata,
        sources=list(item.sources),
        occurred_at=occurred_at,
        id=item.id,
        stream=item.stream,
        slot=item.slot,
    )


def dumps(value: Any) -> str:
    """Compact JSON, as the brain stores its JSON columns."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
