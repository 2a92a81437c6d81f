"""A supersession a person undid is remembered: ``supersession_refusals`` holds each
earlier trace (and fact of it) with the later one that superseded it, so that no
later reading links the two again.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "supersession_refusals",
        sa.Column(
            "trace_id",
            sa.Text,
            sa.ForeignKey("memory_traces.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("successor_id", sa.Text, primary_key=True),
        sa.Column("refused_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("supersession_refusals")
