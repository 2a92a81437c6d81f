"""The full-text index reads scripts written without spaces: a run of Chinese,
Japanese or Korean is indexed as its pairs of characters
(:mod:`memory_core.language.scripts`), so "过敏" matches inside "我对花生过敏".

* SQLite: the index's external content is the view ``memory_traces_indexed``
  (each text through ``reverie_segmented``, a function every connection
  registers), so that a rebuild and FTS5's integrity check read what was
  inserted; the index is rebuilt, and the trigger that moves a turn's context
  indexes through the same function.
* PostgreSQL: the document of each row of ``memory_traces_fts`` is built from the
  same cut (``reverie_segmented`` in PL/pgSQL), every row rebuilt.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-07
"""

from __future__ import annotations

from alembic import op

from memory_core.language.scripts import POSTGRESQL

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

_FTS = "memory_traces_fts"
_VOCAB = "memory_traces_vocab"
_VIEW = "memory_traces_indexed"
_NEXT = "FROM memory_traces WHERE prev_seq = new.seq"
_PREVIOUS_ACTIVE = (
    "coalesce((SELECT p.content FROM memory_traces AS p WHERE p.stream = new.stream "
    "AND p.seq < new.seq AND p.deleted = 0 ORDER BY p.seq DESC LIMIT 1), '')"
)


def _context_trigger(cut: str) -> str:
    """The trigger that moves the next turn's context (as 0006 made it), its index
    entries read through ``cut`` (a function name, or "" for the texts as they are)."""
    row = (
        f"seq, {cut}(content), {cut}(tags), {cut}(context)"
        if cut
        else "seq, content, tags, context"
    )
    return (
        "CREATE TRIGGER traces_context_follows AFTER UPDATE OF content, deleted ON memory_traces "
        "WHEN new.content IS NOT old.content OR new.deleted IS NOT old.deleted BEGIN "
        f"INSERT INTO {_FTS}({_FTS}, rowid, content, tags, context) "
        f"SELECT 'delete', {row} {_NEXT}; "
        f"UPDATE memory_traces SET context = CASE WHEN new.deleted = 1 THEN {_PREVIOUS_ACTIVE} "
        "ELSE new.content END WHERE prev_seq = new.seq; "
        f"INSERT INTO {_FTS}(rowid, content, tags, context) SELECT {row} {_NEXT}; END"
    )


def _index(content: str) -> None:
    """Make the SQLite index anew over ``content`` (a table or view) and fill it."""
    op.execute(f"DROP TABLE IF EXISTS {_VOCAB}")
    op.execute(f"DROP TABLE {_FTS}")
    op.execute(
        f"CREATE VIRTUAL TABLE {_FTS} USING fts5(content, tags, context, content='{content}', "
        "content_rowid='seq', tokenize='porter unicode61')"
    )
    op.execute(f"CREATE VIRTUAL TABLE {_VOCAB} USING fts5vocab({_FTS}, 'row')")
    op.execute(f"INSERT INTO {_FTS}({_FTS}) VALUES ('rebuild')")


def _pg_doc(cut: str) -> str:
    def read(arg: str) -> str:
        return f"{cut}({arg})" if cut else arg

    return (
        "CREATE OR REPLACE FUNCTION reverie_fts_doc(text, text, text) RETURNS tsvector "
        "LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ "
        f"SELECT setweight(to_tsvector('reverie', {read('$1')}), 'A') "
        f"|| setweight(to_tsvector('reverie', {read('$2')}), 'A') "
        f"|| setweight(to_tsvector('reverie', {read('$3')}), 'B') $$"
    )


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(POSTGRESQL)
        op.execute(_pg_doc("reverie_segmented"))
        # A stored generated column is computed again when its row is written.
        op.execute(f"UPDATE {_FTS} SET content = content")
        return
    op.execute(
        f"CREATE VIEW {_VIEW} AS SELECT seq, reverie_segmented(content) AS content, "
        "reverie_segmented(tags) AS tags, reverie_segmented(context) AS context "
        "FROM memory_traces"
    )
    op.execute("DROP TRIGGER traces_context_follows")
    op.execute(_context_trigger("reverie_segmented"))
    _index(_VIEW)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_pg_doc(""))
        op.execute(f"UPDATE {_FTS} SET content = content")
        op.execute("DROP FUNCTION reverie_segmented(text)")
        return
    op.execute("DROP TRIGGER traces_context_follows")
    op.execute(_context_trigger(""))
    _index("memory_traces")
    op.execute(f"DROP VIEW {_VIEW}")
