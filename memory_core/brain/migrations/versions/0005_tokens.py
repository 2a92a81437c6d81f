"""Tokens: identities with capabilities, optionally pinned to scope ids.

Only a SHA-256 of each token's secret is stored; the token itself is shown
once, when it is made.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return  # a PostgreSQL brain starts from 0012's schema
    op.create_table(
        "tokens",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("name", sa.Text, nullable=False, unique=True),
        sa.Column("secret_sha256", sa.Text, nullable=False),
        sa.Column("capabilities", sa.Text, nullable=False),
        sa.Column("scope_ids", sa.Text, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("revoked_at", sa.Float, nullable=True),
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.drop_table("tokens")
