"""The next turn of a stream is found by an index: editing or deleting a turn no
longer reads every trace to find the one whose context it is.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-04
"""

from __future__ import annotations

from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_traces_prev_seq", "memory_traces", ["prev_seq"])


def downgrade() -> None:
    op.drop_index("ix_traces_prev_seq", table_name="memory_traces")
