"""The brain's tables, as SQLAlchemy Core metadata, and the rules its triggers keep.

Migrations under ``memory_core/brain/migrations`` create these tables; this
module is the reference the code queries against, and a test checks that the
migrated database and this metadata agree.  The full-text index is a pair of
FTS5 virtual tables, which metadata cannot describe; their DDL lives here too.
The few write rules the brain enforces itself, in triggers, are listed in
:data:`TRIGGERS` (a test checks the migrated brain has exactly these).
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Table,
    Text,
    text,
)

metadata = MetaData()
# The id of a log that only grows: 64 bits on PostgreSQL (SQLite's INTEGER is already).
_LOG_ID = BigInteger().with_variant(Integer(), "sqlite")

TRACE_TYPES = ("episodic", "semantic", "procedural", "prospective", "relational")
SCOPES = ("thread", "user", "persona", "organization")
# A JSON Schema pattern for text that is not only white space (``str.strip()`` leaves
# something): one character Python does not count as a space.  Spelled out, since
# JSON Schema's ``\\S`` follows ECMAScript, whose white space is not Python's.
NOT_BLANK = "[^\\t-\\r\\x1c- \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"
# Text a brain can store holds no NUL character: a PostgreSQL brain cannot store
# one, and no person's words hold one.  Whole-text patterns: any such text, and
# such text that is not only white space.
NO_NUL = "^[^\\x00]*$"
SOME_TEXT = "^[^\\x00]*" + NOT_BLANK.replace("[^", "[^\\x00", 1) + "[^\\x00]*$"

brain_meta = Table(
    "brain_meta",
    metadata,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
)

memory_traces = Table(
    "memory_traces",
    metadata,
    # An explicit INTEGER PRIMARY KEY keeps rowids stable across VACUUM, which
    # the external-content FTS index relies on.
    Column("seq", Integer, primary_key=True),
    Column("id", Text, nullable=False, unique=True),
    Column("brain_id", Text, nullable=False),
    Column("type", Text, nullable=False),
    Column("scope", Text, nullable=False),
    Column("scope_id", Text, nullable=True),
    Column("content", Text, nullable=False),
    Column("content_hash", Text, nullable=False),
    Column("tags", Text, nullable=False, server_default=text("'[]'")),
    Column("importance", Float, nullable=False, server_default=text("0.5")),
    Column("strength", Float, nullable=False, server_default=text("1.0")),
    Column("stability", Float, nullable=False, server_default=text("1.0")),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("occurred_at", Float, nullable=False),
    Column("last_accessed", Float, nullable=True),
    Column("retrieval_count", Integer, nullable=False, server_default=text("0")),
    Column("metadata", Text, nullable=False, server_default=text("'{}'")),
    Column("sources", Text, nullable=False, server_default=text("'[]'")),
    Column("deleted", Integer, nullable=False, server_default=text("0")),
    Column("deleted_reason", Text, nullable=True),
    Column("deleted_at", Float, nullable=True),
    Column("version", Integer, nullable=False, server_default=text("1")),
    # The conversation this trace is a turn of (None: a standalone memory),
    # the turn before it in that stream, and that turn's text, indexed as the
    # full-text index's ``context`` column.
    Column("stream", Text, nullable=True),
    Column("prev_seq", Integer, nullable=True),
    Column("context", Text, nullable=False, server_default=text("''")),
    # When this brain stored the trace (imports carry created_at from their
    # source): decay runs from here or from the last use.
    Column("learnt_at", Float, nullable=True),
    # What the trace states a value of (subject/attribute: "user/residence"), and,
    # once a later statement of it replaced this one, until when this one held and
    # which trace replaced it (memory_core.supersession).
    Column("slot", Text, nullable=True),
    Column("valid_until", Float, nullable=True),
    Column("superseded_by", Text, nullable=True),
    Index("ix_traces_scope", "scope", "scope_id"),
    Index("ix_traces_scope_id", "scope_id"),
    Index("ix_traces_stream", "stream", "seq"),
    Index("ix_traces_stream_said", "stream", "occurred_at", "seq"),
    Index("ix_traces_type", "type"),
    Index("ix_traces_hash", "content_hash", "scope", "scope_id"),
    Index("ix_traces_occurred", "occurred_at"),
    Index("ix_traces_slot", "scope_id", "slot", "occurred_at"),
    Index("ix_traces_superseded_by", "superseded_by"),
    Index("ix_traces_prev_seq", "prev_seq"),  # a turn's next turn (its context follows it)
)


def _trace_key() -> Column[str]:
    """A trace's id as (part of) the key of a table about it, gone with the trace."""
    return Column(
        "trace_id", Text, ForeignKey("memory_traces.id", ondelete="CASCADE"), primary_key=True
    )


trace_embeddings = Table(
    "trace_embeddings",
    metadata,
    _trace_key(),
    Column("model", Text, primary_key=True),
    Column("dim", Integer, nullable=False),
    Column("vector", LargeBinary, nullable=False),
    Column("created_at", Float, nullable=False),
)

# One row per change to trace_embeddings, written by triggers: in-memory
# vector indexes catch up by reading the rows after the last one they saw.
embedding_events = Table(
    "embedding_events",
    metadata,
    Column("id", _LOG_ID, primary_key=True, autoincrement=True),
    Column("trace_id", Text, nullable=False),
    Column("model", Text, nullable=False),
    sqlite_autoincrement=True,
)

# A deleted trace's vectors, and those a rewrite replaced, under the content
# hash they embed: restoring the trace brings them back.
vector_archive = Table(
    "vector_archive",
    metadata,
    _trace_key(),
    Column("model", Text, primary_key=True),
    Column("content_hash", Text, primary_key=True),
    Column("dim", Integer, nullable=False),
    Column("vector", LargeBinary, nullable=False),
    Column("created_at", Float, nullable=False),
)

# What a pass judged of a trace's text (the phatic judgement's probability),
# under the content hash it judged: made once per text.
trace_judgements = Table(
    "trace_judgements",
    metadata,
    _trace_key(),
    Column("judge", Text, primary_key=True),
    Column("content_hash", Text, nullable=False),
    Column("value", Float, nullable=False),
    Column("judged_at", Float, nullable=False),
)

# What the user said in a turn, embedded without the assistant's reply, under the
# content hash it embeds (memory_core.retrieval.latest compares questions with it).
said_embeddings = Table(
    "said_embeddings",
    metadata,
    _trace_key(),
    Column("model", Text, primary_key=True),
    Column("content_hash", Text, nullable=False),
    Column("vector", LargeBinary, nullable=False),
)

# Traces embedded whose supersession by meaning has not run yet: noted with their
# embed job, cleared by the job that follows them; reconcile re-sends what a lost
# message left (memory_core.supersession.pending).
supersession_pending = Table(
    "supersession_pending",
    metadata,
    _trace_key(),
    Column("noted_at", Float, nullable=False),
    Index("ix_supersession_pending_noted", "noted_at"),
)

# A supersession a person undid: the earlier trace (and each of its facts) is never
# superseded again by the later one (or its facts) -- the same reading would redo it.
supersession_refusals = Table(
    "supersession_refusals",
    metadata,
    _trace_key(),
    Column("successor_id", Text, primary_key=True),
    Column("refused_at", Float, nullable=False),
)

# A reasoner's checked answer to one question, under a digest of the reasoner, its
# model, the prompt and the input (memory_core.reasoners.cache): asked once.
judgement_cache = Table(
    "judgement_cache",
    metadata,
    Column("key", Text, primary_key=True),
    Column("question", Text, nullable=False),
    Column("scope", Text, nullable=False),
    Column("scope_id", Text, nullable=True),
    Column("answer", Text, nullable=False),
    Column("created_at", Float, nullable=False),
    Index("ix_judgement_cache_created", "created_at"),
    Index("ix_judgement_cache_scope", "scope_id", "scope"),
)

# The before-image of each trace a proposal or a pass changed (NULL: created
# by it) and the version it left, so the unit can be undone.
undo_log = Table(
    "undo_log",
    metadata,
    Column("id", _LOG_ID, primary_key=True, autoincrement=True),
    Column("unit", Text, nullable=False),
    Column("trace_id", Text, nullable=False),
    Column("step", Text, nullable=False),
    Column("before", Text, nullable=True),
    Column("after_version", Integer, nullable=True),
    Column("at", Float, nullable=False),
    Column("undone_at", Float, nullable=True),
    Index("ix_undo_unit", "unit", "id"),
    Index("ix_undo_trace", "trace_id", "id"),
    sqlite_autoincrement=True,
)

inbox_turns = Table(
    "inbox_turns",
    metadata,
    Column("id", Text, primary_key=True),
    # Whose turn it is (as in its payload): an idempotency key is unique per tenant.
    Column("scope", Text, nullable=False),
    Column("scope_id", Text, nullable=False),
    Column("idempotency_key", Text, nullable=True),
    Column("payload", Text, nullable=False),
    Column("status", Text, nullable=False, server_default=text("'pending'")),
    Column("attempts", Integer, nullable=False, server_default=text("0")),
    Column("last_error", Text, nullable=True),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("processed_at", Float, nullable=True),
    Index("ix_inbox_status", "status", "created_at"),
    Index("ix_inbox_key", "scope", "scope_id", "idempotency_key", unique=True),
)

coactivation_edges = Table(
    "coactivation_edges",
    metadata,
    Column("a", Text, ForeignKey("memory_traces.id", ondelete="CASCADE"), primary_key=True),
    Column("b", Text, ForeignKey("memory_traces.id", ondelete="CASCADE"), primary_key=True),
    Column("weight", Float, nullable=False),
    Column("count", Integer, nullable=False, server_default=text("1")),
    Column("updated_at", Float, nullable=False),
    Index("ix_edges_b", "b"),
)

consolidation_log = Table(
    "consolidation_log",
    metadata,
    Column("id", Text, primary_key=True),
    Column("started_at", Float, nullable=False),
    Column("finished_at", Float, nullable=True),
    Column("status", Text, nullable=False),
    Column("dry_run", Integer, nullable=False, server_default=text("0")),
    Column("counts", Text, nullable=False, server_default=text("'{}'")),
    Column("report_path", Text, nullable=True),
    Column("report", Text, nullable=True),  # the pass's report (JSON), as its file holds it
    Column("step_seconds", Text, nullable=True),  # each step's time (JSON), for the list
)

proposals = Table(
    "proposals",
    metadata,
    Column("id", Text, primary_key=True),
    Column("kind", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("pass_id", Text, nullable=True),
    Column("subject_key", Text, nullable=False),
    Column("file_sha256", Text, nullable=False),
    Column("summary", Text, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("decided_at", Float, nullable=True),
    # The traces' versions when proposed (JSON): a rejection holds until one changes.
    Column("versions", Text, nullable=True),
    Column("expires_at", Float, nullable=True),
    Index("ix_proposals_status", "status"),
    Index("ix_proposals_subject", "subject_key"),
)

retrieval_events = Table(
    "retrieval_events",
    metadata,
    Column("id", Text, primary_key=True),
    Column("trace_ids", Text, nullable=False),
    Column("at", Float, nullable=False),
    Column("consolidated", Integer, nullable=False, server_default=text("0")),
    # What was asked (a digest of the query, its filters and who asked): the same
    # query within the feedback window counts once.
    Column("query_key", Text, nullable=True),
    Index("ix_retrieval_events_at", "consolidated", "at"),
    Index("ix_retrieval_events_query", "query_key", "at"),
)

tokens = Table(
    "tokens",
    metadata,
    Column("id", Text, primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    Column("secret_sha256", Text, nullable=False),
    Column("capabilities", Text, nullable=False),  # JSON list
    Column("scope_ids", Text, nullable=True),  # JSON list; NULL: not pinned
    Column("created_at", Float, nullable=False),
    Column("revoked_at", Float, nullable=True),
)

# Named tag predicates (``@name`` in a tag expression), managed by admins.
tag_predicates = Table(
    "tag_predicates",
    metadata,
    Column("name", Text, primary_key=True),
    Column("expression", Text, nullable=False),
    Column("created_at", Float, nullable=False),
)

leases = Table(
    "leases",
    metadata,
    Column("name", Text, primary_key=True),
    Column("holder", Text, nullable=False),
    Column("expires_at", Float, nullable=False),
)

FTS_TABLE = "memory_traces_fts"
VOCAB_TABLE = "memory_traces_vocab"
# What the full-text index reads of each trace: its texts with each run of a script
# written without spaces cut into pairs of characters (memory_core.language.scripts;
# ``reverie_segmented`` is registered on every SQLite connection); migration 0020
# made the view.
INDEXED_VIEW = "memory_traces_indexed"

FTS_DDL = (
    f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5("
    f"content, tags, context, content='{INDEXED_VIEW}', content_rowid='seq', "
    "tokenize='porter unicode61')"
)
VOCAB_DDL = f"CREATE VIRTUAL TABLE {VOCAB_TABLE} USING fts5vocab({FTS_TABLE}, 'row')"


# The write rules the brain keeps itself: triggers the migrations create (0003,
# 0004, 0006), so that every write -- through any module, a raw cursor or an
# import -- keeps them, in the same transaction.  Code never does their work.
TRIGGERS = {
    # The vector index's change log: every vector stored, replaced or removed is an
    # event a process's in-memory index catches up from (retrieval.vector_index).
    "trace_embeddings_insert": "AFTER INSERT ON trace_embeddings: log an embedding event",
    "trace_embeddings_update": "AFTER UPDATE ON trace_embeddings: log an embedding event",
    "trace_embeddings_delete": "AFTER DELETE ON trace_embeddings: log an embedding event",
    # A soft-deleted trace never reaches the vector channel, and its vectors come
    # back with it when it is restored (traces.undo).
    "traces_deleted_lose_vectors": (
        "AFTER UPDATE OF deleted ON memory_traces, when a trace is deleted: archive its "
        "vectors in vector_archive under its content hash, then drop them"
    ),
    # A turn is indexed with the turn before it as context: when that turn's content
    # changes or it is deleted, the next turn's context (and full-text row) follows --
    # to the last active turn before it.
    "traces_context_follows": (
        "AFTER UPDATE OF content, deleted ON memory_traces: the next turn of the stream "
        "takes the new content, or the last active turn's, as its context"
    ),
}

# On PostgreSQL, the full-text index is a table of its own (migration 0012): these
# triggers run FTS5's commands written to it and keep its postings.
PG_INDEX_TRIGGERS = {
    "memory_traces_fts_command": (
        "BEFORE INSERT ON memory_traces_fts, naming a command (delete, rebuild, optimize, "
        "integrity-check): run it instead of adding a row"
    ),
    "memory_traces_postings_follow": (
        "AFTER INSERT, UPDATE, DELETE ON memory_traces_fts: each lexeme of the row, with "
        "its frequencies and the row's length, in memory_traces_postings"
    ),
}
