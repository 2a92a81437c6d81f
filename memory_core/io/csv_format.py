"""CSV import: one trace per row of a file with a header row.

A ``content`` column is required.  Optional columns: ``id``, ``type``,
``scope``, ``scope_id``, ``tags`` (a JSON array, or a comma- or
pipe-separated list), ``metadata`` (a JSON object), ``importance``,
``strength``, ``retrieval_count`` and ``created_at`` (or ``createdAt``: epoch
seconds or ISO 8601).  A row whose cells cannot be read is listed in
``errors`` with its line and the other rows still import; a blank
``content`` is skipped.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memory_core.brain.db import Brain
from memory_core.errors import InvalidArgument
from memory_core.inbox.turns import parse_timestamp
from memory_core.io.records import (
    ImportResult,
    Owner,
    Progress,
    Record,
    TraceWriter,
    clean_scope_id,
)
from memory_core.traces.model import NewTrace

csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


def _tags(cell: str) -> list[str]:
    cell = cell.strip()
    if not cell:
        return []
    if cell.startswith("["):
        try:
            value = json.loads(cell)
        except json.JSONDecodeError as e:
            raise InvalidArgument(f"tags is not a valid JSON array: {e}") from e
        if not isinstance(value, list):
            raise InvalidArgument("tags must be a JSON array")
        return value
    sep = "|" if "|" in cell else ","
    return [t.strip() for t in cell.split(sep) if t.strip()]


def _metadata(cell: str) -> dict[str, Any]:
    if not cell.strip():
        return {}
    try:
        value = json.loads(cell)
    except json.JSONDecodeError as e:
        raise InvalidArgument(f"metadata is not valid JSON: {e}") from e
    if not isinstance(value, dict):
        raise InvalidArgument("metadata must be a JSON object")
    return value


def _number(row: dict[str, str], name: str) -> float | None:
    cell = (row.get(name) or "").strip()
    if not cell:
        return None
    try:
        return float(cell)
    except ValueError as e:
        raise InvalidArgument(f"{name} must be a number; got {cell!r}") from e


def _created_at(row: dict[str, str]) -> float | None:
    cell = (row.get("created_at") or row.get("createdAt") or "").strip()
    if not cell:
        return None
    try:
        return float(cell)
    except ValueError:
        return parse_timestamp(cell)


def record_from_csv(row: dict[str, str], place: str) -> Record:
    """One CSV row (content not blank) as a record; InvalidArgument names what is wrong."""
    try:
        metadata = _metadata(row.get("metadata") or "")
        created = _created_at(row)
        importance = _number(row, "importance")
        columns: dict[str, Any] = {}
        if created is not None:
            columns["created_at"] = columns["updated_at"] = created
        strength = _number(row, "strength")
        if strength is not None:
            columns["strength"] = strength
        count = _number(row, "retrieval_count")
        if count is not None:
            columns["retrieval_count"] = int(count)
        trace = NewTrace(
            content=row["content"],
            type=(row.get("type") or "").strip() or "episodic",
            scope=(row.get("scope") or "").strip() or "user",
            scope_id=clean_scope_id((row.get("scope_id") or "").strip()),
            tags=_tags(row.get("tags") or ""),
            importance=0.5 if importance is None else importance,
            metadata=metadata,
            occurred_at=created,
            id=(row.get("id") or "").strip() or None,
        )
    except InvalidArgument as e:
        raise InvalidArgument(f"{place}: {e}") from e
    return Record(trace, place, columns, source_id=trace.id)


def _rows(reader: Any, result: ImportResult) -> Iterator[tuple[int, dict[str, str]]]:
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            result.error(f"line {reader.line_num}: unreadable CSV ({e}); the rest was not read")
            return
        yield reader.line_num, row


def import_csv(
    brain: Brain,
    path: Path,
    *,
    dedup: bool = True,
    progress: Progress | None = None,
    owner: Owner = None,
) -> ImportResult:
    """Import a CSV file; a file without a ``content`` column imports nothing."""
    try:
        handle = path.open(encoding="utf-8-sig", newline="")
    except OSError as e:
        raise InvalidArgument(f"cannot read {path}: {e.strerror}") from e
    with handle:
        reader = csv.DictReader(handle)
        try:
            header = reader.fieldnames
        except (csv.Error, UnicodeDecodeError) as e:
            raise InvalidArgument(f"{path}: unreadable CSV header: {e}") from e
        if not header or "content" not in [h.strip() for h in header]:
            raise InvalidArgument(f"{path}: a CSV import needs a 'content' column")
        reader.fieldnames = [h.strip() for h in header]
        writer = TraceWriter(brain, dedup=dedup, progress=progress, owner=owner)
        try:
            for line, row in _rows(reader, writer.result):
                if not (row.get("content") or "").strip():
                    writer.result.skipped += 1
                    continue
                try:
                    writer.add(record_from_csv(row, f"line {line}"))
                except InvalidArgument as e:
                    writer.result.error(str(e))
        except UnicodeDecodeError as e:
            writer.result.error(f"{path}: not UTF-8 ({e}); the rest was not read")
        return writer.finish()
