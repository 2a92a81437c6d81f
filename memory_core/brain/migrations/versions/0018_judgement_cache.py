"""What a reasoner judged, kept by its question: the same question (the same reasoner
and model, prompt and input) is answered from ``judgement_cache`` instead of asked
again.  A row holds the checked answer, whose scope id it was asked for (forgetting
that scope id removes it) and when; the re-index step trims the oldest.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "judgement_cache",
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("scope", sa.Text, nullable=False),
        sa.Column("scope_id", sa.Text, nullable=True),
        sa.Column("answer", sa.Text, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("ix_judgement_cache_created", "judgement_cache", ["created_at"])
    op.create_index("ix_judgement_cache_scope", "judgement_cache", ["scope_id", "scope"])


def downgrade() -> None:
    op.drop_index("ix_judgement_cache_scope", "judgement_cache")
    op.drop_index("ix_judgement_cache_created", "judgement_cache")
    op.drop_table("judgement_cache")
