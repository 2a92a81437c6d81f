"""An idempotency key is unique per tenant, not across the brain: the inbox keeps each
turn's scope and scope id in columns of their own (read from the posted payload), and
(scope, scope_id, idempotency_key) is unique where the key alone was.  Two tenants
may then use the same key, and a key never answers another tenant's turn.

SQLite cannot drop a column's UNIQUE constraint: the table is built anew, every row
keeping its rowid (the order turns were posted in).

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05
"""

from __future__ import annotations

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

_COLUMNS = (
    "id, idempotency_key, payload, status, attempts, last_error, "
    "created_at, updated_at, processed_at"
)
_SQLITE_TABLE = """
    CREATE TABLE inbox_turns_new (
        id TEXT NOT NULL,
        scope TEXT NOT NULL,
        scope_id TEXT NOT NULL,
        idempotency_key TEXT,
        payload TEXT NOT NULL,
        status TEXT DEFAULT 'pending' NOT NULL,
        attempts INTEGER DEFAULT 0 NOT NULL,
        last_error TEXT,
        created_at FLOAT NOT NULL,
        updated_at FLOAT NOT NULL,
        processed_at FLOAT,
        PRIMARY KEY (id){unique}
    )
"""
_KEY_INDEX = "CREATE UNIQUE INDEX ix_inbox_key ON inbox_turns (scope, scope_id, idempotency_key)"
_STATUS_INDEX = "CREATE INDEX ix_inbox_status ON inbox_turns (status, created_at)"
# A key held by turns of several tenants stays with the first of them.
_KEEP_FIRST_KEYS = """
    UPDATE inbox_turns SET idempotency_key = NULL
    WHERE idempotency_key IS NOT NULL AND rowid > (
        SELECT min(o.rowid) FROM inbox_turns o WHERE o.idempotency_key = inbox_turns.idempotency_key
    )
"""


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE inbox_turns ADD COLUMN scope TEXT, ADD COLUMN scope_id TEXT")
        # ::json, not ::jsonb: a payload may hold a \u0000 escape, which jsonb refuses.
        op.execute(
            "UPDATE inbox_turns SET scope = coalesce(payload::json ->> 'scope', ''), "
            "scope_id = coalesce(payload::json ->> 'scope_id', '')"
        )
        op.execute(
            "ALTER TABLE inbox_turns ALTER COLUMN scope SET NOT NULL, "
            "ALTER COLUMN scope_id SET NOT NULL"
        )
        op.execute("ALTER TABLE inbox_turns DROP CONSTRAINT inbox_turns_idempotency_key_key")
        op.execute(_KEY_INDEX)
        return
    op.execute(_SQLITE_TABLE.format(unique=""))
    op.execute(
        f"INSERT INTO inbox_turns_new (rowid, scope, scope_id, {_COLUMNS}) "
        "SELECT rowid, coalesce(json_extract(payload, '$.scope'), ''), "
        f"coalesce(json_extract(payload, '$.scope_id'), ''), {_COLUMNS} "
        "FROM inbox_turns ORDER BY rowid"
    )
    op.execute("DROP TABLE inbox_turns")
    op.execute("ALTER TABLE inbox_turns_new RENAME TO inbox_turns")
    op.execute(_STATUS_INDEX)
    op.execute(_KEY_INDEX)


def downgrade() -> None:
    op.execute(_KEEP_FIRST_KEYS)
    op.execute("DROP INDEX ix_inbox_key")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE inbox_turns DROP COLUMN scope, DROP COLUMN scope_id")
        op.execute(
            "ALTER TABLE inbox_turns ADD CONSTRAINT inbox_turns_idempotency_key_key "
            "UNIQUE (idempotency_key)"
        )
        return
    op.execute(
        _SQLITE_TABLE.replace("scope TEXT NOT NULL,", "")
        .replace("scope_id TEXT NOT NULL,", "")
        .format(unique=",\n        UNIQUE (idempotency_key)")
    )
    op.execute(
        f"INSERT INTO inbox_turns_new (rowid, {_COLUMNS}) "
        f"SELECT rowid, {_COLUMNS} FROM inbox_turns ORDER BY rowid"
    )
    op.execute("DROP TABLE inbox_turns")
    op.execute("ALTER TABLE inbox_turns_new RENAME TO inbox_turns")
    op.execute(_STATUS_INDEX)
