"""SQLite: the whole brain as a new brain file, and a merge of such a file.

The export of a SQLite brain is ``VACUUM INTO`` a new path from a read-only
connection: one consistent snapshot of every table (traces with embeddings, the full-text
index, edges, the proposals ledger, the consolidation log, the inbox, the
retrieval events), without the process-local ``leases``.  The file is a
Reverie brain in its own right, with the source's brain id.  A PostgreSQL
brain is exported as :mod:`memory_core.brain.copy` copies it to a new file.  The import reads
such a file read-only and merges its traces, vectors, edges and inbox turns
through the same deduplicating writer as every other format.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from contextlib import closing
from pathlib import Path
from typing import Any

from memory_core.brain.copy import copy_brain, sizes
from memory_core.brain.db import Brain, open_brain
from memory_core.errors import BrainError, InvalidArgument
from memory_core.io.files import refuse_existing, removed_on_failure
from memory_core.io.records import (
    Embedding,
    ImportResult,
    Owner,
    Progress,
    TraceWriter,
    write_edges,
)
from memory_core.io.rows import add_rows, write_inbox

_NOT_PORTABLE = ("leases",)
_NEEDED = {"alembic_version", "memory_traces", "trace_embeddings", "coactivation_edges"}


def export_sqlite(brain: Brain, path: Path) -> dict[str, Any]:
    """Copy the brain into a new SQLite file at ``path``."""
    refuse_existing(path)
    if brain.path is None:
        return _export_copy(brain, path)
    with removed_on_failure(path):
        try:
            with closing(sqlite3.connect(f"file:{brain.path}?mode=ro", uri=True)) as src:
                src.execute("VACUUM INTO ?", (str(path),))
            with closing(sqlite3.connect(path)) as copy:
                for table in _NOT_PORTABLE:
                    copy.execute(f"DELETE FROM {table}")
                copy.commit()
                copy.execute("PRAGMA journal_mode = DELETE")
                counts = {
                    name: copy.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
                    for name in ("memory_traces", "trace_embeddings", "coactivation_edges")
                }
        except sqlite3.Error as e:
            raise BrainError(f"cannot export to {path}: {e}") from e
    return {
        "path": str(path),
        "refused": [],
        "traces": counts["memory_traces"],
        "embeddings": counts["trace_embeddings"],
        "edges": counts["coactivation_edges"],
    }


def _export_copy(brain: Brain, path: Path) -> dict[str, Any]:
    """A PostgreSQL brain's export: a copy of it into a new brain file."""
    with removed_on_failure(path):
        copy = open_brain(brain.settings, url=f"sqlite:///{path}")
        try:
            copy_brain(brain, copy)
            counts = sizes(copy)
        finally:
            copy.close()
        with closing(sqlite3.connect(path)) as done:
            done.execute("PRAGMA journal_mode = DELETE")
    return {
        "path": str(path),
        "refused": [],
        "traces": counts["memory_traces"],
        "embeddings": counts["trace_embeddings"],
        "edges": counts["coactivation_edges"],
    }


def _read_source(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Every row the import needs, read in one read-only snapshot."""
    if path.is_dir():
        raise InvalidArgument(f"{path} is a folder, not a SQLite file")
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            db.row_factory = sqlite3.Row
            db.execute("BEGIN")
            names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if not names >= _NEEDED:
                raise InvalidArgument(f"{path} is not a Reverie brain; nothing was imported")
            tables = ["memory_traces", "trace_embeddings", "coactivation_edges"]
            if "inbox_turns" in names:
                tables.append("inbox_turns")
            return {t: [dict(r) for r in db.execute(f"SELECT * FROM {t}")] for t in tables}
    except sqlite3.DatabaseError as e:
        raise InvalidArgument(f"{path} is not a SQLite brain ({e}); nothing was imported") from e


def import_sqlite(
    brain: Brain,
    path: Path,
    *,
    dedup: bool = True,
    progress: Progress | None = None,
    owner: Owner = None,
) -> ImportResult:
    """Merge a brain file (a SQLite export) into this brain."""
    source = _read_source(path)
    writer = TraceWriter(brain, dedup=dedup, progress=progress, owner=owner)
    vectors: dict[str, list[Embedding]] = defaultdict(list)
    for row in source["trace_embeddings"]:
        vectors[row["trace_id"]].append(
            Embedding(row["model"], row["dim"], row["vector"], row["created_at"])
        )
    add_rows(writer, ((f"trace {row.get('id')}", row) for row in source["memory_traces"]), vectors)
    result = writer.finish()
    write_edges(brain, result, source["coactivation_edges"], writer.now)
    write_inbox(brain, result, source.get("inbox_turns", []))
    return result
