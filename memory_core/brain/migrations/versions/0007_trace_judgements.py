"""Judgements a pass made of a trace's text, kept so that it makes each once.

``trace_judgements`` holds one value per trace and judge (the phatic
judgement: the probability that a turn is content-free) with the content
hash it was made of; a trace whose text changed is judged again, and the
row goes with its trace.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return  # a PostgreSQL brain starts from 0012's schema
    op.create_table(
        "trace_judgements",
        sa.Column(
            "trace_id",
            sa.Text,
            sa.ForeignKey("memory_traces.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("judge", sa.Text, primary_key=True),
        sa.Column("content_hash", sa.Text, nullable=False),
        sa.Column("value", sa.Float, nullable=False),
        sa.Column("judged_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.drop_table("trace_judgements")
