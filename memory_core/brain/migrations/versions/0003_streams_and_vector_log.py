"""Streams, previous-turn context and the embedding change log.

* ``memory_traces.stream``: the conversation a trace is a turn of (NULL for a
  standalone memory); ``prev_seq`` links a turn to the one before it in its
  stream and ``context`` holds that turn's text, indexed as a third FTS5
  column so a turn can be found by what was just said before it.  Turns
  already ingested get their stream from the turn's scope, scope id and
  conversation id, and their links, in insertion order.
* ``embedding_events``: one row per change to ``trace_embeddings`` (kept by
  triggers), so a process's in-memory vector matrix catches up by reading
  the rows after the last one it saw instead of reloading every vector.
* ``ix_traces_scope_id``: a scope id filter without a scope uses an index.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_FTS = "memory_traces_fts"
_VOCAB = "memory_traces_vocab"


def _create_fts(columns: str) -> None:
    op.execute(
        f"CREATE VIRTUAL TABLE {_FTS} USING fts5({columns}, content='memory_traces', "
        "content_rowid='seq', tokenize='porter unicode61')"
    )
    op.execute(f"CREATE VIRTUAL TABLE {_VOCAB} USING fts5vocab({_FTS}, 'row')")
    op.execute(f"INSERT INTO {_FTS}({_FTS}) VALUES ('rebuild')")


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return  # a PostgreSQL brain starts from 0012's schema
    op.add_column("memory_traces", sa.Column("stream", sa.Text, nullable=True))
    op.add_column("memory_traces", sa.Column("prev_seq", sa.Integer, nullable=True))
    op.add_column(
        "memory_traces",
        sa.Column("context", sa.Text, nullable=False, server_default=sa.text("''")),
    )
    op.create_index("ix_traces_stream", "memory_traces", ["stream", "seq"])
    op.create_index("ix_traces_scope_id", "memory_traces", ["scope_id"])
    # Ingested turns: the episodic traces whose sources name their turn.
    op.execute(
        "UPDATE memory_traces SET stream = scope || ':' || coalesce(scope_id, '') || "
        "coalesce(':' || json_extract(metadata, '$.conversation_id'), '') "
        "WHERE type = 'episodic' AND EXISTS (SELECT 1 FROM json_each(tags) WHERE value = 'turn') "
        "AND EXISTS (SELECT 1 FROM json_each(sources) WHERE json_extract(value, '$.turn') "
        "IS NOT NULL)"
    )
    op.execute(
        "UPDATE memory_traces AS t SET prev_seq = p.prev_seq, context = p.context FROM ("
        "SELECT seq, lag(seq) OVER w AS prev_seq, coalesce(lag(content) OVER w, '') AS context "
        "FROM memory_traces WHERE stream IS NOT NULL WINDOW w AS (PARTITION BY stream ORDER BY seq)"
        ") AS p WHERE t.seq = p.seq"
    )
    op.execute(f"DROP TABLE {_VOCAB}")
    op.execute(f"DROP TABLE {_FTS}")
    _create_fts("content, tags, context")

    op.create_table(
        "embedding_events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("trace_id", sa.Text, nullable=False),
        sa.Column("model", sa.Text, nullable=False),
        sqlite_autoincrement=True,
    )
    for event, row in (("INSERT", "new"), ("UPDATE", "new"), ("DELETE", "old")):
        op.execute(
            f"CREATE TRIGGER trace_embeddings_{event.lower()} AFTER {event} ON trace_embeddings "
            f"BEGIN INSERT INTO embedding_events (trace_id, model) "
            f"VALUES ({row}.trace_id, {row}.model); END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for event in ("insert", "update", "delete"):
        op.execute(f"DROP TRIGGER trace_embeddings_{event}")
    op.drop_table("embedding_events")
    op.execute(f"DROP TABLE {_VOCAB}")
    op.execute(f"DROP TABLE {_FTS}")
    op.drop_index("ix_traces_scope_id", "memory_traces")
    op.drop_index("ix_traces_stream", "memory_traces")
    with op.batch_alter_table("memory_traces") as batch:
        batch.drop_column("context")
        batch.drop_column("prev_seq")
        batch.drop_column("stream")
    _create_fts("content, tags")
