"""Where exports write: new paths only, no links followed, removed on failure."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from memory_core.errors import BrainError, InvalidArgument

_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


def refuse_existing(path: Path) -> None:
    """An export never overwrites: anything at ``path``, a dangling link too, refuses it."""
    if os.path.lexists(path):
        raise InvalidArgument(f"{path} already exists; an export never overwrites a path")


def open_new(path: Path) -> IO[bytes]:
    """A file created by this call (never an existing one, never through a link)."""
    try:
        fd = os.open(path, _NEW_FILE_FLAGS, 0o644)
    except FileExistsError as e:
        raise InvalidArgument(f"{path} already exists; an export never overwrites a path") from e
    except OSError as e:
        raise BrainError(f"cannot create {path}: {e.strerror}") from e
    return os.fdopen(fd, "wb")


@contextmanager
def removed_on_failure(path: Path) -> Iterator[None]:
    """Remove what was written at ``path`` (a file or a folder) if the block fails.

    Call it only for a path the export itself creates (``refuse_existing``
    first), so a failure never removes anything that was there before.
    """
    try:
        yield
    except BaseException:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            os.unlink(path)
        raise
