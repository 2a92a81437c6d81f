"""JSON: one document holding the brain's traces, edges and conversations.

The document is ``{"format": "reverie-brain", "version": 1, "brain_id",
"exported_at", "traces": [...], "edges": [...], "conversations": [...]}``,
plus ``"embeddings"`` with ``include_embeddings``.  Each trace is its row
(without the internal ``seq``), its JSON columns decoded; each embedding is
``{"trace_id", "model", "dim", "created_at", "vector"}`` with the vector as
base64 of the little-endian float32 bytes the brain stores, so it round-trips
exactly.  Conversations are the brain's inbox turns.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import IO, Any

from sqlalchemy import text

from memory_core.brain.db import Brain
from memory_core.errors import BrainError, InvalidArgument
from memory_core.io.files import open_new, refuse_existing, removed_on_failure
from memory_core.io.records import (
    Embedding,
    ImportResult,
    Owner,
    Progress,
    TraceWriter,
    write_edges,
)
from memory_core.io.rows import INBOX_COLUMNS, add_rows, write_inbox

FORMAT = "reverie-brain"
VERSION = 1
_JSON_COLUMNS = ("tags", "metadata", "sources")


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _write_list(out: IO[bytes], name: str, rows: Any, progress: Progress | None = None) -> int:
    out.write(b',\n"' + name.encode() + b'":[')
    n = 0
    for row in rows:
        out.write(b"\n" if n == 0 else b",\n")
        out.write(_dumps(row))
        n += 1
        if progress is not None and n % 1000 == 0:
            progress(1000)
    if progress is not None and n % 1000:
        progress(n % 1000)
    out.write(b"]")
    return n


# Rows of one scope id (``:scope_id``) only, when an export is of one person.
_OF_TRACE = "id IN (SELECT id FROM memory_traces WHERE scope_id = :scope_id)"
_OF_EDGE = (
    "a IN (SELECT id FROM memory_traces WHERE scope_id = :scope_id) "
    "AND b IN (SELECT id FROM memory_traces WHERE scope_id = :scope_id)"
)
_OF_TURN = "json_extract(payload, '$.scope_id') = :scope_id"


def _where(condition: str, scope_id: str | None) -> str:
    return f" WHERE {condition}" if scope_id is not None else ""


def _trace_rows(conn: Any, scope_id: str | None) -> Any:
    sql = f"SELECT * FROM memory_traces{_where('scope_id = :scope_id', scope_id)} ORDER BY seq"
    for row in conn.execute(text(sql), {"scope_id": scope_id}):
        d = dict(row._mapping)
        # Brain-local bookkeeping: an import links each turn to its stream again.
        for internal in ("seq", "prev_seq", "context"):
            del d[internal]
        for col in _JSON_COLUMNS:
            d[col] = json.loads(d[col])
        yield d


def _embedding_rows(conn: Any, scope_id: str | None) -> Any:
    of = _where(_OF_TRACE.replace("id IN", "trace_id IN", 1), scope_id)
    sql = f"SELECT * FROM trace_embeddings{of} ORDER BY trace_id, model"
    for row in conn.execute(text(sql), {"scope_id": scope_id}):
        d = dict(row._mapping)
        d["vector"] = base64.b64encode(d["vector"]).decode("ascii")
        yield d


def export_json(
    brain: Brain,
    path: Path,
    *,
    include_embeddings: bool = False,
    progress: Progress | None = None,
    scope_id: str | None = None,
) -> dict[str, Any]:
    """Write the brain's traces, edges and conversations to a new JSON file; with
    ``scope_id``, only that one's: its traces, the edges between them, its turns."""
    refuse_existing(path)
    counts: dict[str, int] = {}
    with removed_on_failure(path), open_new(path) as out, brain.read() as conn:
        header = {"format": FORMAT, "version": VERSION, "brain_id": brain.brain_id}
        header["exported_at"] = time.time()
        out.write(_dumps(header)[:-1])
        counts["traces"] = _write_list(out, "traces", _trace_rows(conn, scope_id), progress)
        mine = {"scope_id": scope_id}
        sql = f"SELECT * FROM coactivation_edges{_where(_OF_EDGE, scope_id)}"
        edges = (dict(r._mapping) for r in conn.execute(text(sql), mine))
        counts["edges"] = _write_list(out, "edges", edges)
        sql = f"SELECT {', '.join(INBOX_COLUMNS)} FROM inbox_turns{_where(_OF_TURN, scope_id)}"
        inbox = conn.execute(text(sql), mine)
        counts["conversations"] = _write_list(
            out, "conversations", (dict(r._mapping) for r in inbox)
        )
        if include_embeddings:
            counts["embeddings"] = _write_list(out, "embeddings", _embedding_rows(conn, scope_id))
        out.write(b"}\n")
    return {"path": str(path), "refused": [], **counts}


def _load(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InvalidArgument(f"cannot read {path}: {e.strerror}") from e
    try:
        doc = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InvalidArgument(f"{path} is not valid JSON: {e}; nothing was imported") from e
    if isinstance(doc, list):  # a bare list of trace rows
        doc = {"traces": doc}
    if not isinstance(doc, dict) or not isinstance(doc.get("traces", []), list):
        raise InvalidArgument(f"{path}: expected an object with a 'traces' list")
    return doc


def _embeddings_by_trace(doc: dict[str, Any], result: ImportResult) -> dict[str, list[Embedding]]:
    found: dict[str, list[Embedding]] = defaultdict(list)
    for i, row in enumerate(doc.get("embeddings") or []):
        try:
            vector = base64.b64decode(row["vector"], validate=True)
            emb = Embedding(str(row["model"]), int(row["dim"]), vector, float(row["created_at"]))
            if len(vector) != emb.dim * 4:
                raise ValueError("vector length does not match dim")
            found[str(row["trace_id"])].append(emb)
        except (KeyError, TypeError, ValueError, binascii.Error) as e:
            result.error(f"embeddings[{i}]: {e}")
    return found


def import_json(
    brain: Brain,
    path: Path,
    *,
    dedup: bool = True,
    progress: Progress | None = None,
    owner: Owner = None,
) -> ImportResult:
    """Import a JSON export (or a bare list of trace rows); see :func:`export_json`."""
    doc = _load(path)
    writer = TraceWriter(brain, dedup=dedup, progress=progress, owner=owner)
    vectors = _embeddings_by_trace(doc, writer.result)
    add_rows(
        writer, ((f"traces[{i}]", row) for i, row in enumerate(doc.get("traces", []))), vectors
    )
    result = writer.finish()
    edges = doc.get("edges") or []
    convs = doc.get("conversations") or []
    if not isinstance(edges, list) or not isinstance(convs, list):
        result.error("edges and conversations must be lists; they were not imported")
        return result
    try:
        write_edges(brain, result, (e for e in edges if isinstance(e, dict)), writer.now)
        write_inbox(brain, result, convs)
    except BrainError as e:
        result.error(f"edges or conversations: {e}")
    return result
