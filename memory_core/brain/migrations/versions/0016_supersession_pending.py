"""Supersession by meaning runs as its own job, after the embed job that makes a
trace searchable; ``supersession_pending`` notes the traces it has yet to follow,
so a lost message leaves work that reconcile finds.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "supersession_pending",
        sa.Column(
            "trace_id",
            sa.Text,
            sa.ForeignKey("memory_traces.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("noted_at", sa.Float, nullable=False),
    )
    op.create_index("ix_supersession_pending_noted", "supersession_pending", ["noted_at"])


def downgrade() -> None:
    op.drop_index("ix_supersession_pending_noted", "supersession_pending")
    op.drop_table("supersession_pending")
