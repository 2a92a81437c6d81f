"""Retrieval events: search feedback recorded once per event id.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return  # a PostgreSQL brain starts from 0012's schema
    op.create_table(
        "retrieval_events",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("trace_ids", sa.Text, nullable=False),
        sa.Column("at", sa.Float, nullable=False),
        sa.Column("consolidated", sa.Integer, nullable=False, server_default=sa.text("0")),
    )
    op.create_index("ix_retrieval_events_at", "retrieval_events", ["consolidated", "at"])


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.drop_table("retrieval_events")
