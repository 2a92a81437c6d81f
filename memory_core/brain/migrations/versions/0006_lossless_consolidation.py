"""Consolidation that can be undone, and forgetting that starts when a trace was learnt.

* ``memory_traces.learnt_at``: when this brain stored the trace (an import
  carries ``created_at`` from its source, not this).  Decay runs from here
  or from the last use, never from when the event happened.  Existing traces
  get their ``created_at``.
* ``vector_archive``: a deleted trace's vectors, and the vectors a rewrite
  replaced, kept under the content hash they embed, so restoring the trace
  (an undone proposal or pass, ``memctl restore``) brings its vectors back.
  The trigger that dropped a deleted trace's vectors now archives them first.
* ``undo_log``: the before-image of every trace a proposal or a pass changed
  (NULL for a trace it created), with the version it left, so the change can
  be reversed as a unit and refused when the trace changed since.
* when a turn is deleted (a prune accepted), the turn after it in its stream
  is indexed with the last turn still before it, rather than with nothing, so
  forgetting small talk does not cut an answer off from its question.
* ``proposals.versions`` (the traces' versions when proposed: a rejection
  holds until one of them changes), ``proposals.expires_at``.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_ARCHIVE = (
    "INSERT OR REPLACE INTO vector_archive "
    "(trace_id, model, content_hash, dim, vector, created_at) "
    "SELECT e.trace_id, e.model, new.content_hash, e.dim, e.vector, e.created_at "
    "FROM trace_embeddings AS e WHERE e.trace_id = new.id"
)


_FTS = "memory_traces_fts"
_NEXT = "FROM memory_traces WHERE prev_seq = new.seq"
_PREVIOUS_ACTIVE = (
    "coalesce((SELECT p.content FROM memory_traces AS p WHERE p.stream = new.stream "
    "AND p.seq < new.seq AND p.deleted = 0 ORDER BY p.seq DESC LIMIT 1), '')"
)


def _context_trigger(deleted_context: str) -> str:
    return (
        "CREATE TRIGGER traces_context_follows AFTER UPDATE OF content, deleted ON memory_traces "
        "WHEN new.content IS NOT old.content OR new.deleted IS NOT old.deleted BEGIN "
        f"INSERT INTO {_FTS}({_FTS}, rowid, content, tags, context) "
        f"SELECT 'delete', seq, content, tags, context {_NEXT}; "
        f"UPDATE memory_traces SET context = CASE WHEN new.deleted = 1 THEN {deleted_context} "
        "ELSE new.content END WHERE prev_seq = new.seq; "
        f"INSERT INTO {_FTS}(rowid, content, tags, context) SELECT seq, content, tags, context "
        f"{_NEXT}; END"
    )


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return  # a PostgreSQL brain starts from 0012's schema
    with op.batch_alter_table("memory_traces", recreate="never") as batch:
        batch.add_column(sa.Column("learnt_at", sa.Float, nullable=True))
    op.execute("UPDATE memory_traces SET learnt_at = created_at")

    op.create_table(
        "vector_archive",
        sa.Column(
            "trace_id",
            sa.Text,
            sa.ForeignKey("memory_traces.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("model", sa.Text, primary_key=True),
        sa.Column("content_hash", sa.Text, primary_key=True),
        sa.Column("dim", sa.Integer, nullable=False),
        sa.Column("vector", sa.LargeBinary, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.execute("DROP TRIGGER traces_deleted_lose_vectors")
    op.execute(
        "CREATE TRIGGER traces_deleted_lose_vectors AFTER UPDATE OF deleted ON memory_traces "
        f"WHEN new.deleted = 1 AND old.deleted = 0 BEGIN {_ARCHIVE}; "
        "DELETE FROM trace_embeddings WHERE trace_id = new.id; END"
    )

    op.execute("DROP TRIGGER traces_context_follows")
    op.execute(_context_trigger(_PREVIOUS_ACTIVE))

    op.create_table(
        "undo_log",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("unit", sa.Text, nullable=False),
        sa.Column("trace_id", sa.Text, nullable=False),
        sa.Column("step", sa.Text, nullable=False),
        sa.Column("before", sa.Text, nullable=True),
        sa.Column("after_version", sa.Integer, nullable=True),
        sa.Column("at", sa.Float, nullable=False),
        sa.Column("undone_at", sa.Float, nullable=True),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_undo_unit", "undo_log", ["unit", "id"])
    op.create_index("ix_undo_trace", "undo_log", ["trace_id", "id"])

    with op.batch_alter_table("proposals", recreate="never") as batch:
        batch.add_column(sa.Column("versions", sa.Text, nullable=True))
        batch.add_column(sa.Column("expires_at", sa.Float, nullable=True))


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    with op.batch_alter_table("proposals") as batch:
        batch.drop_column("expires_at")
        batch.drop_column("versions")
    op.drop_index("ix_undo_trace", "undo_log")
    op.drop_index("ix_undo_unit", "undo_log")
    op.drop_table("undo_log")
    op.execute("DROP TRIGGER traces_context_follows")
    op.execute(_context_trigger("''"))
    op.execute("DROP TRIGGER traces_deleted_lose_vectors")
    op.execute(
        "CREATE TRIGGER traces_deleted_lose_vectors AFTER UPDATE OF deleted ON memory_traces "
        "WHEN new.deleted = 1 AND old.deleted = 0 "
        "BEGIN DELETE FROM trace_embeddings WHERE trace_id = new.id; END"
    )
    op.drop_table("vector_archive")
    with op.batch_alter_table("memory_traces") as batch:
        batch.drop_column("learnt_at")
