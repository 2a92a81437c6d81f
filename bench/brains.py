"""Where a bench keeps its brains: a SQLite file, or a database of a PostgreSQL server.

``--brain postgresql+psycopg://USER@HOST:PORT/NAME`` on a bench runs it on that
server too: each brain it makes is a database of its own, ``NAME_<what>``,
made empty and dropped afterwards; the figures are reported beside the SQLite
brain's from the same run.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import make_url

from memory_core.brain.postgresql import drop_pg_database


def server(value: str) -> str:
    """``--brain``'s value: a PostgreSQL URL (the database name is the prefix of the bench's)."""
    try:
        url = make_url(value)
    except Exception as e:
        raise argparse.ArgumentTypeError(f"not a URL: {value!r}") from e
    if url.get_backend_name() != "postgresql" or not url.database:
        raise argparse.ArgumentTypeError(
            "expected postgresql+psycopg://USER@HOST:PORT/NAME (NAME prefixes the databases made)"
        )
    return value


@contextmanager
def brain_url(folder: Path, name: str, server_url: str | None = None) -> Iterator[str]:
    """A fresh brain's URL: ``folder/name.sqlite``, or a new database on ``server_url``
    (dropped when the block ends)."""
    if server_url is None:
        yield f"sqlite:///{folder / f'{name}.sqlite'}"
        return
    base = make_url(server_url)
    slug = re.sub(r"[^a-z0-9_]", "_", f"{base.database}_{name}".lower())[:60]
    url = base.set(database=slug).render_as_string(hide_password=False)
    drop_pg_database(url)  # what an interrupted run left
    try:
        yield url
    finally:
        drop_pg_database(url)
