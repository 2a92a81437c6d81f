"""A trace's validity: the statement it answers to, until when it held, what replaced it.

``slot`` names what a statement is about (its subject and attribute, as
``user/residence`` or ``priya/workplace``); within a scope id the statements of
one slot form a chain in time, and each but the last holds ``valid_until`` the
next one's time and ``superseded_by`` its id.  A superseded trace is kept: search
ranks it below the current one, and ``as_of`` a time it held finds it as current.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return  # a PostgreSQL brain starts from 0012's schema
    with op.batch_alter_table("memory_traces", recreate="never") as batch:
        batch.add_column(sa.Column("slot", sa.Text, nullable=True))
        batch.add_column(sa.Column("valid_until", sa.Float, nullable=True))
        batch.add_column(sa.Column("superseded_by", sa.Text, nullable=True))
    op.create_index("ix_traces_slot", "memory_traces", ["scope_id", "slot", "occurred_at"])
    op.create_index("ix_traces_superseded_by", "memory_traces", ["superseded_by"])


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.drop_index("ix_traces_superseded_by", "memory_traces")
    op.drop_index("ix_traces_slot", "memory_traces")
    with op.batch_alter_table("memory_traces", recreate="never") as batch:
        batch.drop_column("superseded_by")
        batch.drop_column("valid_until")
        batch.drop_column("slot")
