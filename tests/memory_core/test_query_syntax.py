"""A query is FTS5 syntax on PostgreSQL exactly when SQLite's FTS5 takes it as such:
otherwise each backend reads it as plain language, and both find the same traces."""

from __future__ import annotations

import sqlite3

import pytest

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.brain.schema import FTS_DDL
from memory_core.retrieval import lexical_pg

QUERIES = [
    "lives in",
    "Ana's sister",
    "Lisbon, near the river.",
    "what's my job?",
    "50%",
    "C++",
    "e-mail",
    "3.5",
    "hello!",
    "^Ana",
    "+Ana",
    "Ana+s",
    "lis*",
    "content:Lisbon",
    "author:Lisbon",
    "café au lait",
    '"near the river"',
    "river OR sea",
    "river NOT sea",
    "NEAR(river sea, 3)",
    "(river OR sea) AND Lisbon",
    "x_y",
]


def _fts5_takes(query: str) -> bool:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE memory_traces (seq INTEGER PRIMARY KEY, content, tags, context)")
    conn.execute(FTS_DDL)
    try:
        conn.execute(
            "SELECT rowid FROM memory_traces_fts WHERE memory_traces_fts MATCH ?", (query,)
        )
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()
    return True


@pytest.mark.parametrize("query", QUERIES)
def test_postgresql_reads_fts5_syntax_where_sqlite_does(query: str) -> None:
    parsed = lexical_pg.tsquery(query, only_own_words=False)
    assert (parsed is not None) == _fts5_takes(query)


def test_a_sentence_finds_what_shares_some_of_its_words_on_both_backends(brain: mc.Brain) -> None:
    said = "Ana's sister Maja lives in Lisbon, near the river."
    mc.add_trace(brain, "Ana's sister Maja lives in Lisbon.", scope_id="ana", identity=SYSTEM)
    mc.add_trace(brain, said, scope_id="ana", identity=SYSTEM)
    found = mc.search(brain, said, scope_id="ana", min_score=0, embedder=None, identity=SYSTEM)
    assert {h.trace.content for h in found.results} == {said, "Ana's sister Maja lives in Lisbon."}
