"""Which brain backends a test runs on (the ``brain_url`` fixture's parameters)."""

from __future__ import annotations

import pytest
from sqlalchemy import Connection, text

# A test about the SQLite file itself (its bytes, copies, pragmas' effects).
SQLITE_ONLY = pytest.mark.parametrize("brain_url", ["sqlite"], indirect=True)


def write_apart(brain_url: str, sql: str, params: dict[str, object]) -> None:
    """Run one write on a connection of its own, as another process would (named
    ``:params``)."""
    from sqlalchemy import create_engine

    engine = create_engine(brain_url)
    try:
        with engine.begin() as conn:
            conn.execute(text(sql), params)
    finally:
        engine.dispose()


def index_finds(conn: Connection, phrase: str) -> list[int]:
    """The rowids (trace seqs) the full-text index matches for ``phrase``, on either backend."""
    if conn.dialect.name == "sqlite":
        query = "SELECT rowid FROM memory_traces_fts WHERE memory_traces_fts MATCH :q"
        phrase = '"' + phrase.replace('"', '""') + '"'
    else:
        query = "SELECT rowid FROM memory_traces_fts WHERE doc @@ phraseto_tsquery('reverie', :q)"
    return sorted(int(r[0]) for r in conn.execute(text(query), {"q": phrase}))
