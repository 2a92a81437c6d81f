"""Tag expressions: named predicates kept in the brain, and on PostgreSQL the two
functions the expressions' SQL calls (SQLite's connections register their own).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

_PG_FUNCTIONS = (
    # Whether a tag matches a regular expression (searched, as Python's re.search).
    "CREATE FUNCTION reverie_matches(text, text) RETURNS boolean LANGUAGE sql IMMUTABLE "
    "PARALLEL SAFE AS $$ SELECT $1 ~ $2 $$",
    # A tag's value as a number, or NULL when it is none ("2", "2.0", "02" are one).
    "CREATE FUNCTION reverie_number(text) RETURNS double precision LANGUAGE sql IMMUTABLE "
    "PARALLEL SAFE AS $$ SELECT CASE WHEN $1 ~ '^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)"
    "([eE][-+]?[0-9]+)?$' THEN CAST($1 AS double precision) END $$",
)


def upgrade() -> None:
    op.create_table(
        "tag_predicates",
        sa.Column("name", sa.Text(), primary_key=True),
        sa.Column("expression", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
    )
    if op.get_bind().dialect.name == "postgresql":
        for statement in _PG_FUNCTIONS:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION reverie_matches(text, text)")
        op.execute("DROP FUNCTION reverie_number(text)")
    op.drop_table("tag_predicates")
