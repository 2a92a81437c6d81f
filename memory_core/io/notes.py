"""Markdown notes: YAML front matter read as data, safe file names, note -> record."""

from __future__ import annotations

import unicodedata
from datetime import datetime
from typing import Any

import yaml  # type: ignore[import-untyped]

from memory_core.errors import InvalidArgument
from memory_core.inbox.turns import parse_timestamp
from memory_core.io.records import Record, clean_scope_id
from memory_core.traces.model import NewTrace

MAX_NAME_BYTES = 200
_FORBIDDEN = set('/\\:"*<>?|')
_MS_THRESHOLD = 1e11  # a createdAt above this is in milliseconds (AgentOS writes ms)


def name_problem(value: str) -> str | None:
    """Why ``value`` cannot name a file or folder of an export; None when it can."""
    if not value:
        return "empty"
    if any(c in _FORBIDDEN or unicodedata.category(c) == "Cc" for c in value):
        return "unsafe character"
    if value.startswith("."):
        return "starts with a dot"
    if value != value.strip(" ") or value.endswith("."):
        return "leading or trailing space or trailing dot"
    if len(value.encode("utf-8")) > MAX_NAME_BYTES:
        return f"longer than {MAX_NAME_BYTES} bytes"
    return None


def name_key(*parts: str) -> str:
    """A relative path as case-insensitive, Unicode-normalising file systems see it."""
    return "/".join(unicodedata.normalize("NFKC", p).lower() for p in parts)


def render_front_matter(fields: dict[str, Any]) -> str:
    dumped = yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, default_flow_style=False)
    return f"---\n{dumped}---\n"


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The front matter's fields and the body.  YAML is loaded as data only
    (safe load); a block opened by anything but ``---`` (``---js``) gives no fields."""
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if not lines[0].startswith("---"):
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if end is None:
        raise InvalidArgument("front matter has no closing --- line")
    body = "\n".join(lines[end + 1 :])
    if lines[0].rstrip() != "---":
        return {}, body
    try:
        data = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as e:
        raise InvalidArgument(f"front matter is not valid YAML: {e}") from e
    if data is None:
        return {}, body
    if not isinstance(data, dict):
        raise InvalidArgument("front matter must be a mapping of fields")
    return data, body


def _time(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, bool):
        raise InvalidArgument("createdAt must be a time")
    if isinstance(value, int | float):
        return value / 1000.0 if value > _MS_THRESHOLD else float(value)
    if isinstance(value, str):
        return parse_timestamp(value)
    raise InvalidArgument("createdAt must be epoch seconds or an ISO 8601 time")


def _tags(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [t.strip() for t in value.split(",") if t.strip()]
    if not isinstance(value, list):
        raise InvalidArgument("tags must be a list")
    return [str(t) for t in value]


def record_from_note(fields: dict[str, Any], content: str, place: str, key: str) -> Record:
    """A note's front matter and content as a record; ``key`` names it for links."""
    note_id = fields.get("id")
    strength = fields.get("strength")
    if strength is not None and (
        isinstance(strength, bool) or not isinstance(strength, int | float)
    ):
        raise InvalidArgument("strength must be a number")
    created = _time(fields.get("createdAt", fields.get("created_at")))
    columns: dict[str, Any] = {}
    if strength is not None:
        columns["strength"] = float(strength)
    if created is not None:
        columns["created_at"] = columns["updated_at"] = created
    scope_id = fields.get("scopeId", fields.get("scope_id"))
    trace = NewTrace(
        content=content,
        type=str(fields.get("type") or "episodic"),
        scope=str(fields.get("scope") or "user"),
        scope_id=clean_scope_id(scope_id) if isinstance(scope_id, str) else None,
        tags=_tags(fields.get("tags")),
        occurred_at=created,
        id=note_id if isinstance(note_id, str) and note_id.strip() else None,
    )
    return Record(trace, place, columns, source_id=key)
