"""Retrieval events know their query: the same question asked again soon counts once.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return  # a PostgreSQL brain starts from 0012's schema
    with op.batch_alter_table("retrieval_events") as batch:
        batch.add_column(sa.Column("query_key", sa.Text, nullable=True))
    op.create_index("ix_retrieval_events_query", "retrieval_events", ["query_key", "at"])


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.drop_index("ix_retrieval_events_query", table_name="retrieval_events")
    with op.batch_alter_table("retrieval_events") as batch:
        batch.drop_column("query_key")
