"""Markdown (and Obsidian) folders: one note per active trace, and back.

An export writes ``{scope}/{type}/{id}.md`` under a new folder, each note a
YAML front matter block (``id``, ``type``, ``scope``, ``scopeId`` when the
trace has one, ``strength``, ``tags``, ``createdAt`` in epoch seconds) and
the content.  Folders are made one name at a time relative to their parent's
descriptor and every file is created exclusively without following links, so
nothing is written outside the export folder.  A trace whose type, scope or
id is not a safe file name, or whose file would be another's (names equal up
to case or Unicode form), is listed in ``refused`` instead.

An import walks a folder (hidden folders and links left alone) and makes each
``.md`` file whose body is not blank a trace; a note whose front matter cannot
be read is listed in ``errors`` with its path and the rest still import.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import Connection, text

from memory_core.brain.db import Brain
from memory_core.errors import BrainError, InvalidArgument
from memory_core.io.files import refuse_existing, removed_on_failure
from memory_core.io.notes import (
    name_key,
    name_problem,
    record_from_note,
    render_front_matter,
    split_front_matter,
)
from memory_core.io.records import ImportResult, Owner, Progress, TraceWriter

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_NONBLOCK
_ACTIVE = (
    "SELECT id, type, scope, scope_id, content, tags, strength, created_at "
    "FROM memory_traces WHERE deleted = 0{mine} ORDER BY created_at, seq"
)

# A note body parser: body -> (content, extra tags, link targets).
BodyParser = Callable[[str], tuple[str, list[str], list[str]]]


class _Folder:
    """Writes files below one folder through descriptors, never through a link."""

    def __init__(self, root: Path) -> None:
        self.root = os.open(root, _DIR_FLAGS)
        self.fds: dict[tuple[str, ...], int] = {(): self.root}
        self.keys: set[str] = set()

    def _dir(self, parts: tuple[str, ...]) -> int:
        fd = self.fds.get(parts)
        if fd is None:
            parent = self._dir(parts[:-1])
            with contextlib.suppress(FileExistsError):
                os.mkdir(parts[-1], 0o755, dir_fd=parent)
            fd = self.fds[parts] = os.open(parts[-1], _DIR_FLAGS, dir_fd=parent)
        return fd

    def write(self, folders: tuple[str, ...], name: str, data: bytes) -> str | None:
        """Create ``folders/name`` holding ``data``; the problem when it cannot be."""
        key = name_key(*folders, name)
        if key in self.keys:
            return "collision"
        try:
            fd = os.open(name, _FILE_FLAGS, 0o644, dir_fd=self._dir(folders))
        except FileExistsError:
            return "collision"
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENOTDIR):
                return "link"
            raise BrainError(f"cannot write {'/'.join((*folders, name))}: {e.strerror}") from e
        self.keys.add(key)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        return None

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)


class NoteExtras(Protocol):
    """What a flavour of notes (Obsidian's) writes after each trace's content."""

    def related(self, conn: Connection) -> dict[str, list[tuple[str, str]]]:
        """For each trace id, the (id, alias) of the traces its note links to."""

    def render(self, tags: list[str], related: list[tuple[str, str]]) -> str:
        """The text written after a note's content."""


def _note(row: Any, related: dict[str, list[tuple[str, str]]], extras: NoteExtras | None) -> bytes:
    fields: dict[str, Any] = {"id": row.id, "type": row.type, "scope": row.scope}
    if row.scope_id:
        fields["scopeId"] = row.scope_id
    tags = json.loads(row.tags)
    fields.update(strength=row.strength, tags=tags, createdAt=row.created_at)
    body = row.content
    if extras is not None:
        body += extras.render(tags, related.get(row.id, []))
    note: str = render_front_matter(fields) + body + "\n"
    return note.encode("utf-8")


def _refusal(row: Any) -> dict[str, str] | None:
    for field in ("scope", "type", "id"):
        problem = name_problem(getattr(row, field))
        if problem is not None:
            return {"id": row.id, "field": field, "problem": problem}
    return None


def export_notes(
    brain: Brain,
    path: Path,
    *,
    extras: NoteExtras | None = None,
    progress: Progress | None = None,
    scope_id: str | None = None,
) -> dict[str, Any]:
    """Write one note per active trace (of ``scope_id`` only, when given) into the new
    folder ``path``; ``extras`` adds a flavour's lines to each (Obsidian's)."""
    refuse_existing(path)
    if not path.parent.is_dir():
        raise InvalidArgument(f"{path.parent} is not a folder")
    refused: list[dict[str, str]] = []
    written = 0
    with removed_on_failure(path):
        os.mkdir(path, 0o755)
        folder = _Folder(path)
        try:
            with brain.read() as conn:
                related = extras.related(conn) if extras is not None else {}
                mine = " AND scope_id = :scope_id" if scope_id is not None else ""
                rows = conn.execute(text(_ACTIVE.format(mine=mine)), {"scope_id": scope_id})
                for row in rows:
                    refusal = _refusal(row)
                    if refusal is None:
                        data = _note(row, related, extras)
                        problem = folder.write((row.scope, row.type), f"{row.id}.md", data)
                        if problem is not None:
                            refusal = {"id": row.id, "field": "id", "problem": problem}
                    if refusal is None:
                        written += 1
                    else:
                        refused.append(refusal)
                    if progress is not None:
                        progress(1)
        finally:
            folder.close()
    return {"path": str(path), "traces": written, "refused": refused}


def walk_notes(root: Path) -> Iterator[Path]:
    """Every ``.md`` file below ``root``, sorted; hidden folders and links skipped."""
    for here, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            full = Path(here, name)
            if name.endswith(".md") and not full.is_symlink():
                yield full


def _plain_body(body: str) -> tuple[str, list[str], list[str]]:
    return body.strip(), [], []


def read_notes(
    root: Path, writer: TraceWriter, parse_body: BodyParser
) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Queue every note of ``root`` on ``writer``.

    Returns each note's key by its lower-cased file stem, and the (note key,
    link target) pairs its body names, for the Obsidian import's edges.
    """
    if not root.is_dir():
        raise InvalidArgument(f"{root} is not a folder of notes")
    stems: dict[str, str] = {}
    links: list[tuple[str, str]] = []
    for note in walk_notes(root):
        place = str(note.relative_to(root))
        try:
            fields, body = split_front_matter(note.read_bytes().decode("utf-8"))
            content, tags, targets = parse_body(body)
            if not content:
                writer.result.skipped += 1
                continue
            note_id = fields.get("id")
            key = note_id if isinstance(note_id, str) and note_id else f"note:{place}"
            record = record_from_note(fields, content, place, key)
            written = {t.replace(" ", "-") for t in record.trace.tags}
            record.trace.tags = [*record.trace.tags, *(t for t in tags if t not in written)]
        except (InvalidArgument, UnicodeDecodeError, OSError) as e:
            writer.result.error(f"{place}: {e}")
            continue
        stems.setdefault(note.stem.lower(), key)
        links.extend((key, target) for target in targets)
        writer.add(record)
    return stems, links


def import_markdown(
    brain: Brain,
    path: Path,
    *,
    dedup: bool = True,
    progress: Progress | None = None,
    owner: Owner = None,
) -> ImportResult:
    """Import a folder of Markdown notes (front matter fields as in the export)."""
    writer = TraceWriter(brain, dedup=dedup, progress=progress, owner=owner)
    read_notes(path, writer, _plain_body)
    return writer.finish()
