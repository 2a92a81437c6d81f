"""Brain rows as the JSON and SQLite formats carry them, back into records."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from sqlalchemy import text

from memory_core.brain.db import Brain
from memory_core.errors import InvalidArgument
from memory_core.io.records import (
    CARRIED_COLUMNS,
    Embedding,
    ImportResult,
    Record,
    TraceWriter,
    clean_scope_id,
    live_first,
)
from memory_core.traces.model import NewTrace

INBOX_COLUMNS = (
    "id",
    "idempotency_key",
    "payload",
    "status",
    "attempts",
    "last_error",
    "created_at",
    "updated_at",
    "processed_at",
)
_INT_COLUMNS = {"retrieval_count", "deleted", "version"}
_TEXT_COLUMNS = {"deleted_reason"}


def _json_field(row: dict[str, Any], name: str, kind: type, default: Any) -> Any:
    value = row.get(name, default)
    if value is None:
        value = default
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as e:
            raise InvalidArgument(f"{name} is not valid JSON: {e}") from e
    if not isinstance(value, kind):
        raise InvalidArgument(f"{name} must be a JSON {kind.__name__}")
    return value


def _carried(row: dict[str, Any]) -> dict[str, Any]:
    columns: dict[str, Any] = {}
    for name in CARRIED_COLUMNS:
        value = row.get(name)
        if value is None:
            continue
        if name in _TEXT_COLUMNS:
            columns[name] = str(value)
        elif isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidArgument(f"{name} must be a number")
        else:
            columns[name] = int(value) if name in _INT_COLUMNS else float(value)
    return columns


def record_from_row(row: Any, place: str) -> Record | None:
    """A trace row (JSON-decoded or raw) as a record; None when its content is blank.

    Raises :class:`InvalidArgument` naming ``place`` for a row that cannot be read.
    """
    if not isinstance(row, dict):
        raise InvalidArgument(f"{place}: a trace must be an object")
    content = row.get("content")
    if not isinstance(content, str):
        raise InvalidArgument(f"{place}: content must be a string")
    if not content.strip():
        return None
    try:
        source_id = row.get("id")
        if source_id is not None and not isinstance(source_id, str):
            raise InvalidArgument("id must be a string")
        importance = row.get("importance", 0.5)
        occurred = row.get("occurred_at")
        trace = NewTrace(
            content=content,
            type=row.get("type") or "episodic",
            scope=row.get("scope") or "user",
            scope_id=clean_scope_id(row.get("scope_id")),
            tags=_json_field(row, "tags", list, []),
            importance=importance,
            metadata=_json_field(row, "metadata", dict, {}),
            sources=_json_field(row, "sources", list, []),
            occurred_at=float(occurred) if occurred is not None else None,
            id=source_id or None,
            stream=row.get("stream") or None,
        )
        columns = _carried(row)
    except (InvalidArgument, TypeError, ValueError) as e:
        raise InvalidArgument(f"{place}: {e}") from e
    return Record(trace, place, columns, source_id=source_id)


def write_inbox(brain: Brain, result: ImportResult, rows: Iterable[Any]) -> None:
    """Insert conversation turns the brain does not hold (by id, or by their tenant's
    idempotency key).  Whose turn it is comes from its payload, as the export has it."""
    cols = ", ".join((*INBOX_COLUMNS, "scope", "scope_id"))
    marks = ", ".join(f":{c}" for c in (*INBOX_COLUMNS, "scope", "scope_id"))
    insert = text(f"INSERT INTO inbox_turns ({cols}) VALUES ({marks}) ON CONFLICT DO NOTHING")
    with brain.transaction() as conn:
        for i, row in enumerate(rows):
            if not isinstance(row, dict) or not all(
                row.get(c) is not None for c in ("id", "payload", "created_at", "updated_at")
            ):
                result.error(f"conversations[{i}]: needs id, payload, created_at, updated_at")
                continue
            try:
                posted = json.loads(row["payload"])
            except (TypeError, ValueError):
                posted = None
            if not isinstance(posted, dict):
                result.error(f"conversations[{i}]: payload is not a JSON object")
                continue
            values = {c: row.get(c) for c in INBOX_COLUMNS}
            values["status"] = values["status"] or "pending"
            values["attempts"] = values["attempts"] or 0
            values["scope"] = str(posted.get("scope") or "")
            values["scope_id"] = str(posted.get("scope_id") or "")
            result.conversations += conn.execute(insert, values).rowcount


def add_rows(
    writer: TraceWriter,
    rows: Iterable[tuple[str, Any]],
    vectors: dict[str, list[Embedding]],
) -> None:
    """Trace rows of a json or sqlite export, each with its place for errors:
    a row that fails is listed and skipped, the rest are written (live first)."""
    records: list[Record] = []
    for place, row in rows:
        try:
            record = record_from_row(row, place)
        except InvalidArgument as e:
            writer.result.error(str(e))
            continue
        if record is None:
            writer.result.skipped += 1
            continue
        record.embeddings = vectors.get(record.source_id or "", [])
        records.append(record)
    writer.add_all(live_first(records))
