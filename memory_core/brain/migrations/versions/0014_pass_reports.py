"""A dream pass's report is kept in the brain: every host serving the console or the
API reads it, where the report files lie on the disk of the host that ran the pass.
Its steps' times are kept apart, small, for the list of passes.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("consolidation_log", sa.Column("report", sa.Text(), nullable=True))
    op.add_column("consolidation_log", sa.Column("step_seconds", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("consolidation_log") as batch:
        batch.drop_column("step_seconds")
        batch.drop_column("report")
