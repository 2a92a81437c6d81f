"""Proposal files: where they live, and writes and renames that survive a crash.

Every write is fsynced, every rename is followed by an fsync of its folder,
so a proposal file is either wholly in place or not there.
"""

from __future__ import annotations

import os
from pathlib import Path

from memory_core.errors import BrainError
from memory_core.settings import Settings

TMP_SUFFIX = ".json.tmp"


def shown(path: Path) -> str:
    """A proposal file or folder as answers name it: from the data folder's
    ``proposals/`` down, never the server's own path."""
    parts = path.parts
    if "proposals" not in parts:
        return path.name
    start = len(parts) - 1 - parts[::-1].index("proposals")
    return "/".join(parts[start:])


def proposal_folder(settings: Settings, status: str) -> Path:
    return settings.data_dir / "proposals" / status


def file_path(settings: Settings, status: str, proposal_id: str) -> Path:
    return proposal_folder(settings, status) / f"{proposal_id}.json"


def tmp_file(settings: Settings, proposal_id: str) -> Path:
    return proposal_folder(settings, "pending") / f".{proposal_id}{TMP_SUFFIX}"


def write_synced(path: Path, data: bytes) -> None:
    try:
        with path.open("wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as e:
        raise BrainError(f"cannot write proposal file {shown(path)}: {e.strerror}") from e


def sync_folder(folder: Path) -> None:
    """Make renames in ``folder`` durable (POSIX: fsync the directory)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as e:
        raise BrainError(f"cannot sync {shown(folder)}: {e.strerror}") from e


def move_file(src: Path, dst: Path) -> bool:
    """Rename ``src`` to ``dst``; False when another process already did."""
    try:
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.replace(src, dst)
        sync_folder(dst.parent)
    except FileNotFoundError:
        if dst.exists():
            return False
        raise BrainError(f"proposal file {shown(src)} is missing") from None
    except OSError as e:
        raise BrainError(f"cannot move {shown(src)} to {shown(dst)}: {e.strerror}") from e
    return True
