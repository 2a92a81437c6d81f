"""Import and export of a brain, one module per format.

Exports: ``sqlite`` (every portable table, in a new brain file), ``json`` (one
document), ``markdown`` and ``obsidian`` (a folder of notes).  Imports: the
same four plus ``chatgpt`` (``conversations.json``) and ``csv``.  Every import
returns an :class:`ImportResult`; an export never overwrites a path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import text

from memory_core.brain.db import Brain
from memory_core.errors import InvalidArgument
from memory_core.io.records import Extract, ImportResult, Owner, Progress
from memory_core.traces.model import check_scope

EXPORT_FORMATS = ("sqlite", "json", "markdown", "obsidian")
IMPORT_FORMATS = ("sqlite", "json", "markdown", "obsidian", "chatgpt", "csv")
CONVERSATION_FORMATS = ("chatgpt",)  # what --extract mines

__all__ = [
    "EXPORT_FORMATS",
    "IMPORT_FORMATS",
    "ImportResult",
    "export_brain",
    "import_into",
]


def export_brain(
    brain: Brain,
    fmt: str,
    path: Path,
    *,
    include_embeddings: bool = False,
    progress: Progress | None = None,
    scope_id: str | None = None,
) -> dict[str, Any]:
    """Export the brain to a new ``path`` in ``fmt``; returns counts and ``refused``.

    ``include_embeddings`` applies to JSON (SQLite always holds them).  ``scope_id``
    exports one person's memories only (JSON, Markdown, Obsidian; SQLite copies the
    whole brain).
    """
    if fmt == "json":
        from memory_core.io.json_format import export_json

        return export_json(
            brain,
            path,
            include_embeddings=include_embeddings,
            progress=progress,
            scope_id=scope_id,
        )
    if fmt == "sqlite":
        from memory_core.io.sqlite_format import export_sqlite

        if scope_id is not None:
            raise InvalidArgument(
                "a sqlite export copies the whole brain; export one scope id as json, "
                "markdown or obsidian"
            )
        return export_sqlite(brain, path)
    if fmt in ("markdown", "obsidian"):
        if fmt == "obsidian":
            from memory_core.io.obsidian import export_obsidian

            return export_obsidian(brain, path, progress=progress, scope_id=scope_id)
        from memory_core.io.markdown import export_notes

        return export_notes(brain, path, progress=progress, scope_id=scope_id)
    raise InvalidArgument(f"export format must be one of {', '.join(EXPORT_FORMATS)}; got {fmt!r}")


def export_size(brain: Brain, fmt: str, scope_id: str | None = None) -> int | None:
    """How many traces an export in ``fmt`` writes (its progress bar's total); None for
    a copy of the whole file."""
    if fmt not in ("json", "markdown", "obsidian"):
        return None
    where = ["deleted = 0"] if fmt != "json" else []
    if scope_id is not None:
        where.append("scope_id = :scope_id")
    sql = "SELECT count(*) FROM memory_traces" + (f" WHERE {' AND '.join(where)}" if where else "")
    with brain.read() as conn:
        return int(conn.execute(text(sql), {"scope_id": scope_id}).scalar_one())


def import_into(
    brain: Brain,
    fmt: str,
    path: Path,
    *,
    dedup: bool = True,
    progress: Progress | None = None,
    owner: Owner = None,
    extract: Extract | None = None,
) -> ImportResult:
    """Import ``path`` (in ``fmt``) into the brain; see each format's module.  ``owner``
    (scope, scope id) assigns every record to one user (or thread, persona, org).
    ``extract`` mines the facts of imported conversations (the chatgpt format)."""
    if owner is not None:
        check_scope(owner[0])
        if not owner[1]:
            raise InvalidArgument("scope id: required to assign an import")
    if fmt == "json":
        from memory_core.io.json_format import import_json as run
    elif fmt == "csv":
        from memory_core.io.csv_format import import_csv as run
    elif fmt == "sqlite":
        from memory_core.io.sqlite_format import import_sqlite as run
    elif fmt == "chatgpt":
        from memory_core.io.chatgpt import import_chatgpt as run
    elif fmt == "markdown":
        from memory_core.io.markdown import import_markdown as run
    elif fmt == "obsidian":
        from memory_core.io.obsidian import import_obsidian as run
    else:
        raise InvalidArgument(
            f"import format must be one of {', '.join(IMPORT_FORMATS)}; got {fmt!r}"
        )
    if not path.exists():
        raise InvalidArgument(f"{path} does not exist")
    if extract is not None:
        if fmt not in CONVERSATION_FORMATS:
            raise InvalidArgument(
                f"extraction applies to conversations ({', '.join(CONVERSATION_FORMATS)}); "
                f"{fmt} holds memories already"
            )
        from memory_core.io.chatgpt import import_chatgpt

        return import_chatgpt(
            brain, path, dedup=dedup, progress=progress, owner=owner, extract=extract
        )
    return run(brain, path, dedup=dedup, progress=progress, owner=owner)
