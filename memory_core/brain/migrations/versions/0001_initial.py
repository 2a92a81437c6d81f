"""The first brain schema: traces, full-text index, embeddings, inbox, edges,
consolidation log, proposal ledger and leases.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _now_col(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.Float, nullable=nullable)


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return  # a PostgreSQL brain starts from 0012's schema
    op.create_table(
        "brain_meta",
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )
    op.create_table(
        "memory_traces",
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("id", sa.Text, nullable=False, unique=True),
        sa.Column("brain_id", sa.Text, nullable=False),
        sa.Column("type", sa.Text, nullable=False),
        sa.Column("scope", sa.Text, nullable=False),
        sa.Column("scope_id", sa.Text, nullable=True),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("content_hash", sa.Text, nullable=False),
        sa.Column("tags", sa.Text, nullable=False, server_default=sa.text("'[]'")),
        sa.Column("importance", sa.Float, nullable=False, server_default=sa.text("0.5")),
        sa.Column("strength", sa.Float, nullable=False, server_default=sa.text("1.0")),
        sa.Column("stability", sa.Float, nullable=False, server_default=sa.text("1.0")),
        _now_col("created_at"),
        _now_col("updated_at"),
        _now_col("occurred_at"),
        _now_col("last_accessed", nullable=True),
        sa.Column("retrieval_count", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("metadata", sa.Text, nullable=False, server_default=sa.text("'{}'")),
        sa.Column("sources", sa.Text, nullable=False, server_default=sa.text("'[]'")),
        sa.Column("deleted", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("deleted_reason", sa.Text, nullable=True),
        _now_col("deleted_at", nullable=True),
        sa.Column("version", sa.Integer, nullable=False, server_default=sa.text("1")),
    )
    op.create_index("ix_traces_scope", "memory_traces", ["scope", "scope_id"])
    op.create_index("ix_traces_type", "memory_traces", ["type"])
    op.create_index("ix_traces_hash", "memory_traces", ["content_hash", "scope", "scope_id"])
    op.create_index("ix_traces_occurred", "memory_traces", ["occurred_at"])
    op.execute(
        "CREATE VIRTUAL TABLE memory_traces_fts USING fts5("
        "content, tags, content='memory_traces', content_rowid='seq', "
        "tokenize='porter unicode61')"
    )
    op.execute("CREATE VIRTUAL TABLE memory_traces_vocab USING fts5vocab(memory_traces_fts, 'row')")
    op.create_table(
        "trace_embeddings",
        sa.Column(
            "trace_id",
            sa.Text,
            sa.ForeignKey("memory_traces.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("model", sa.Text, primary_key=True),
        sa.Column("dim", sa.Integer, nullable=False),
        sa.Column("vector", sa.LargeBinary, nullable=False),
        _now_col("created_at"),
    )
    op.create_table(
        "inbox_turns",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("idempotency_key", sa.Text, nullable=True, unique=True),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False, server_default=sa.text("'pending'")),
        sa.Column("attempts", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("last_error", sa.Text, nullable=True),
        _now_col("created_at"),
        _now_col("updated_at"),
        _now_col("processed_at", nullable=True),
    )
    op.create_index("ix_inbox_status", "inbox_turns", ["status", "created_at"])
    op.create_table(
        "coactivation_edges",
        sa.Column(
            "a", sa.Text, sa.ForeignKey("memory_traces.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column(
            "b", sa.Text, sa.ForeignKey("memory_traces.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("weight", sa.Float, nullable=False),
        sa.Column("count", sa.Integer, nullable=False, server_default=sa.text("1")),
        _now_col("updated_at"),
    )
    op.create_index("ix_edges_b", "coactivation_edges", ["b"])
    op.create_table(
        "consolidation_log",
        sa.Column("id", sa.Text, primary_key=True),
        _now_col("started_at"),
        _now_col("finished_at", nullable=True),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("dry_run", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("counts", sa.Text, nullable=False, server_default=sa.text("'{}'")),
        sa.Column("report_path", sa.Text, nullable=True),
    )
    op.create_table(
        "proposals",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("pass_id", sa.Text, nullable=True),
        sa.Column("subject_key", sa.Text, nullable=False),
        sa.Column("file_sha256", sa.Text, nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
        _now_col("created_at"),
        _now_col("decided_at", nullable=True),
    )
    op.create_index("ix_proposals_status", "proposals", ["status"])
    op.create_index("ix_proposals_subject", "proposals", ["subject_key"])
    op.create_table(
        "leases",
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("holder", sa.Text, nullable=False),
        _now_col("expires_at"),
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for table in (
        "leases",
        "proposals",
        "consolidation_log",
        "coactivation_edges",
        "inbox_turns",
        "trace_embeddings",
    ):
        op.drop_table(table)
    op.execute("DROP TABLE memory_traces_vocab")
    op.execute("DROP TABLE memory_traces_fts")
    op.drop_table("memory_traces")
    op.drop_table("brain_meta")
