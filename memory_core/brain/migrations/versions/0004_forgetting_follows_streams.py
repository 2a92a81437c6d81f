"""What is deleted or rewritten stops being found through its neighbours.

Two triggers on ``memory_traces``:

* a trace soft-deleted loses its vectors: the vector channel does not rank
  it, and its meaning no longer smooths its stream neighbours' vectors;
* when a trace's content changes or it is deleted, the turn after it in its
  stream gets the new text (or nothing) as its indexed context, so deleted
  words are no longer found through the next turn.

Existing brains are brought in line: vectors of deleted traces go, and
contexts copied from deleted turns are cleared.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_FTS = "memory_traces_fts"
_NEXT = "FROM memory_traces WHERE prev_seq = new.seq"


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return  # a PostgreSQL brain starts from 0012's schema
    op.execute(
        "CREATE TRIGGER traces_deleted_lose_vectors AFTER UPDATE OF deleted ON memory_traces "
        "WHEN new.deleted = 1 AND old.deleted = 0 "
        "BEGIN DELETE FROM trace_embeddings WHERE trace_id = new.id; END"
    )
    op.execute(
        "CREATE TRIGGER traces_context_follows AFTER UPDATE OF content, deleted ON memory_traces "
        "WHEN new.content IS NOT old.content OR new.deleted IS NOT old.deleted BEGIN "
        f"INSERT INTO {_FTS}({_FTS}, rowid, content, tags, context) "
        f"SELECT 'delete', seq, content, tags, context {_NEXT}; "
        "UPDATE memory_traces SET context = CASE WHEN new.deleted = 1 THEN '' "
        "ELSE new.content END WHERE prev_seq = new.seq; "
        f"INSERT INTO {_FTS}(rowid, content, tags, context) SELECT seq, content, tags, context "
        f"{_NEXT}; END"
    )
    op.execute(
        "DELETE FROM trace_embeddings WHERE trace_id IN "
        "(SELECT id FROM memory_traces WHERE deleted = 1)"
    )
    op.execute(
        "CREATE TEMP TABLE stale_context AS SELECT t.seq FROM memory_traces AS t "
        "WHERE t.context != '' AND EXISTS (SELECT 1 FROM memory_traces p "
        "WHERE p.seq = t.prev_seq AND p.deleted = 1)"
    )
    stale = "FROM memory_traces WHERE seq IN (SELECT seq FROM stale_context)"
    op.execute(
        f"INSERT INTO {_FTS}({_FTS}, rowid, content, tags, context) "
        f"SELECT 'delete', seq, content, tags, context {stale}"
    )
    op.execute("UPDATE memory_traces SET context = '' WHERE seq IN (SELECT seq FROM stale_context)")
    op.execute(
        f"INSERT INTO {_FTS}(rowid, content, tags, context) SELECT seq, content, tags, context "
        f"{stale}"
    )
    op.execute("DROP TABLE stale_context")


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute("DROP TRIGGER traces_context_follows")
    op.execute("DROP TRIGGER traces_deleted_lose_vectors")
