"""Turns of a stream in the order they were said.

A turn posted late (or by one of several clients at once) goes between the
turns it was said between: finding the last turn said at or before it, and the
first said after it, reads the stream by the time it was said.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03
"""

from __future__ import annotations

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return  # a PostgreSQL brain starts from 0012's schema
    op.create_index("ix_traces_stream_said", "memory_traces", ["stream", "occurred_at", "seq"])


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.drop_index("ix_traces_stream_said", table_name="memory_traces")
