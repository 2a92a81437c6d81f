"""Forgetting in the data folder: the files that hold copies of a scope id's words.

Proposal files (in every status folder, and a creator's temporary ones) that name
a forgotten trace go; pass reports (``dream-reports/*.json`` and their Markdown)
are rewritten without what named one; the saved vector graphs of the brain go
(each process builds its graph again from what is left).

A file is overwritten with zeros before it is removed or rewritten, so that on a
filesystem that writes in place (ext4, XFS) the old bytes leave the disk too; a
copy-on-write filesystem, a snapshot or a backup keeps its own copies, which this
cannot reach.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Collection, Iterator
from pathlib import Path

from memory_core.brain.db import Brain
from memory_core.consolidation.dream import REPORTS, render_markdown
from memory_core.errors import BrainError
from memory_core.forget.redact import names_any, redact_lines, redact_report
from memory_core.proposals import STATUSES
from memory_core.proposals.files import TMP_SUFFIX, proposal_folder
from memory_core.settings import Settings

log = logging.getLogger(__name__)

GRAPHS = "vector-cache"


def _proposal_files(settings: Settings) -> Iterator[tuple[str, Path]]:
    """Every proposal file, with its proposal id."""
    for status in STATUSES:
        folder = proposal_folder(settings, status)
        for path in sorted(folder.glob("prop_*.json")):
            yield path.stem, path
    for path in sorted(proposal_folder(settings, "pending").glob(f".prop_*{TMP_SUFFIX}")):
        yield path.name[1 : -len(TMP_SUFFIX)], path


def proposal_files_naming(settings: Settings, ids: Collection[str]) -> set[str]:
    """The ids of proposals whose files name one of ``ids`` (ledger row or not)."""
    found = set()
    for proposal_id, path in _proposal_files(settings):
        try:
            doc = json.loads(path.read_bytes())
        except (OSError, ValueError):
            doc = path.read_text(errors="replace")  # edited into something else: its words
        if names_any(doc, ids):
            found.add(proposal_id)
    return found


def remove_proposal_files(settings: Settings, proposal_ids: Collection[str]) -> None:
    """Erase the files of these proposals, in whichever folder they are."""
    for proposal_id, path in _proposal_files(settings):
        if proposal_id in proposal_ids:
            erase(path)


def redact_report_files(settings: Settings, ids: Collection[str]) -> int:
    """Rewrite each pass report file without what names ``ids``; how many changed."""
    folder = settings.data_dir / REPORTS
    changed = 0
    for path in sorted(folder.glob("*.json")):
        try:
            doc = json.loads(path.read_bytes())
        except (OSError, ValueError):
            doc = None
        markdown = path.with_suffix(".md")
        if not isinstance(doc, dict):
            raw = path.read_text(errors="replace")
            if names_any(raw, ids):
                rewrite(path, redact_lines(raw, ids).encode())
                changed += 1
            continue
        if redact_report(doc, ids):
            rewrite(path, (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode())
            if markdown.exists():
                rewrite(markdown, render_markdown(doc).encode())
            changed += 1
    for markdown in sorted(folder.glob("*.md")):  # one whose JSON is gone
        if not markdown.with_suffix(".json").exists():
            raw = markdown.read_text(errors="replace")
            if names_any(raw, ids):
                rewrite(markdown, redact_lines(raw, ids).encode())
                changed += 1
    return changed


def drop_saved_graphs(brain: Brain, settings: Settings) -> int:
    """Remove the brain's saved vector graphs (each holds every vector, quantized)."""
    folder = settings.data_dir / GRAPHS
    gone = 0
    for path in sorted(folder.glob(f"{brain.brain_id}-*")):
        path.unlink(missing_ok=True)
        gone += 1
    return gone


def erase(path: Path) -> None:
    """Overwrite ``path`` with zeros, then remove it."""
    try:
        _zero(path)
        path.unlink(missing_ok=True)
    except FileNotFoundError:
        return
    except OSError as e:
        raise BrainError(f"cannot erase {_shown(path)}: {e.strerror}") from e


def rewrite(path: Path, data: bytes) -> None:
    """Replace ``path``'s bytes with ``data``, in place, zeroing the old ones first."""
    try:
        _zero(path)
        with path.open("r+b") as fh:
            fh.truncate(0)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as e:
        raise BrainError(f"cannot rewrite {_shown(path)}: {e.strerror}") from e


def _zero(path: Path) -> None:
    with path.open("r+b") as fh:
        size = fh.seek(0, os.SEEK_END)
        fh.seek(0)
        chunk = b"\0" * min(size, 1 << 20)
        left = size
        while left > 0:
            left -= fh.write(chunk[: min(left, len(chunk))])
        fh.flush()
        os.fsync(fh.fileno())


def _shown(path: Path) -> str:
    """A data folder file as it is named to clients: by its place in the folder."""
    return f"{path.parent.name}/{path.name}"
