"""What the user said in a turn, embedded on its own.

A turn's vector embeds its whole text, the assistant's reply included; judging
whether a turn answers a question of how things are now compares the question
with what the user said alone.  ``said_embeddings`` keeps that vector, made once
when the turn is embedded, under the content hash it embeds, and goes with its
trace.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return  # a PostgreSQL brain starts from 0012's schema
    op.create_table(
        "said_embeddings",
        sa.Column(
            "trace_id",
            sa.Text,
            sa.ForeignKey("memory_traces.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("model", sa.Text, primary_key=True),
        sa.Column("content_hash", sa.Text, nullable=False),
        sa.Column("vector", sa.LargeBinary, nullable=False),
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.drop_table("said_embeddings")
