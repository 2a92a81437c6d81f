"""A PostgreSQL brain: the whole schema of 0011, in PostgreSQL's terms.

Revisions 0001 to 0011 are the SQLite brain's history and do nothing on
PostgreSQL; a PostgreSQL brain starts here, with the schema they reached, and
every later revision runs on both.  What SQLite gives and PostgreSQL has not
is built here:

* ``rowid`` columns on the inbox and the proposals, the order they were
  written in (SQLite keeps one on every table);
* the full-text index ``memory_traces_fts``: a table of (rowid, content, tags,
  context) -- the same rows the code writes to FTS5 -- with a stored
  ``tsvector`` (text search configuration ``reverie``: Snowball's English
  stems, no stop words; content and tags weighted A, the previous turn B), its length
  in tokens, and a GIN index.  FTS5's commands keep their shape: an insert
  naming the command column (``'delete'``, ``'rebuild'``, ``'optimize'``,
  ``'integrity-check'``) runs the command instead of adding a row;
* ``memory_traces_postings``, the index's postings (lexeme, row, frequency in
  the row's words and in its context, row length) under a B-tree on the lexeme,
  kept by a trigger: BM25's term frequencies and document frequencies;
* the triggers of :data:`memory_core.brain.schema.TRIGGERS`, in PL/pgSQL;
* SQLite's ``json_each`` (over JSON text), ``json_extract`` and ``json_type``
  (``$.key`` paths), ``json_valid`` and ``instr``, so a statement reads the same on both backends.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04
"""

from __future__ import annotations

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

TABLES = [
    """
    CREATE TABLE brain_meta (
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (key)
    )
    """,
    """
    CREATE TABLE consolidation_log (
        id TEXT NOT NULL,
        started_at DOUBLE PRECISION NOT NULL,
        finished_at DOUBLE PRECISION,
        status TEXT NOT NULL,
        dry_run INTEGER DEFAULT 0 NOT NULL,
        counts TEXT DEFAULT '{}' NOT NULL,
        report_path TEXT,
        PRIMARY KEY (id)
    )
    """,
    """
    CREATE TABLE embedding_events (
        id BIGSERIAL NOT NULL,
        trace_id TEXT NOT NULL,
        model TEXT NOT NULL,
        PRIMARY KEY (id)
    )
    """,
    """
    CREATE TABLE inbox_turns (
        rowid BIGSERIAL NOT NULL UNIQUE,
        id TEXT NOT NULL,
        idempotency_key TEXT,
        payload TEXT NOT NULL,
        status TEXT DEFAULT 'pending' NOT NULL,
        attempts INTEGER DEFAULT 0 NOT NULL,
        last_error TEXT,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        processed_at DOUBLE PRECISION,
        PRIMARY KEY (id),
        UNIQUE (idempotency_key)
    )
    """,
    """
    CREATE INDEX ix_inbox_status ON inbox_turns (status, created_at)
    """,
    """
    CREATE TABLE leases (
        name TEXT NOT NULL,
        holder TEXT NOT NULL,
        expires_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (name)
    )
    """,
    """
    CREATE TABLE memory_traces (
        seq SERIAL NOT NULL,
        id TEXT NOT NULL,
        brain_id TEXT NOT NULL,
        type TEXT NOT NULL,
        scope TEXT NOT NULL,
        scope_id TEXT,
        content TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        tags TEXT DEFAULT '[]' NOT NULL,
        importance DOUBLE PRECISION DEFAULT 0.5 NOT NULL,
        strength DOUBLE PRECISION DEFAULT 1.0 NOT NULL,
        stability DOUBLE PRECISION DEFAULT 1.0 NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        occurred_at DOUBLE PRECISION NOT NULL,
        last_accessed DOUBLE PRECISION,
        retrieval_count INTEGER DEFAULT 0 NOT NULL,
        metadata TEXT DEFAULT '{}' NOT NULL,
        sources TEXT DEFAULT '[]' NOT NULL,
        deleted INTEGER DEFAULT 0 NOT NULL,
        deleted_reason TEXT,
        deleted_at DOUBLE PRECISION,
        version INTEGER DEFAULT 1 NOT NULL,
        stream TEXT,
        prev_seq INTEGER,
        context TEXT DEFAULT '' NOT NULL,
        learnt_at DOUBLE PRECISION,
        slot TEXT,
        valid_until DOUBLE PRECISION,
        superseded_by TEXT,
        PRIMARY KEY (seq),
        UNIQUE (id)
    )
    """,
    """
    CREATE INDEX ix_traces_stream_said ON memory_traces (stream, occurred_at, seq)
    """,
    """
    CREATE INDEX ix_traces_scope ON memory_traces (scope, scope_id)
    """,
    """
    CREATE INDEX ix_traces_type ON memory_traces (type)
    """,
    """
    CREATE INDEX ix_traces_scope_id ON memory_traces (scope_id)
    """,
    """
    CREATE INDEX ix_traces_superseded_by ON memory_traces (superseded_by)
    """,
    """
    CREATE INDEX ix_traces_stream ON memory_traces (stream, seq)
    """,
    """
    CREATE INDEX ix_traces_slot ON memory_traces (scope_id, slot, occurred_at)
    """,
    """
    CREATE INDEX ix_traces_occurred ON memory_traces (occurred_at)
    """,
    """
    CREATE INDEX ix_traces_hash ON memory_traces (content_hash, scope, scope_id)
    """,
    """
    CREATE TABLE proposals (
        rowid BIGSERIAL NOT NULL UNIQUE,
        id TEXT NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        pass_id TEXT,
        subject_key TEXT NOT NULL,
        file_sha256 TEXT NOT NULL,
        summary TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        decided_at DOUBLE PRECISION,
        versions TEXT,
        expires_at DOUBLE PRECISION,
        PRIMARY KEY (id)
    )
    """,
    """
    CREATE INDEX ix_proposals_subject ON proposals (subject_key)
    """,
    """
    CREATE INDEX ix_proposals_status ON proposals (status)
    """,
    """
    CREATE TABLE retrieval_events (
        id TEXT NOT NULL,
        trace_ids TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL,
        consolidated INTEGER DEFAULT 0 NOT NULL,
        query_key TEXT,
        PRIMARY KEY (id)
    )
    """,
    """
    CREATE INDEX ix_retrieval_events_query ON retrieval_events (query_key, at)
    """,
    """
    CREATE INDEX ix_retrieval_events_at ON retrieval_events (consolidated, at)
    """,
    """
    CREATE TABLE tokens (
        id TEXT NOT NULL,
        name TEXT NOT NULL,
        secret_sha256 TEXT NOT NULL,
        capabilities TEXT NOT NULL,
        scope_ids TEXT,
        created_at DOUBLE PRECISION NOT NULL,
        revoked_at DOUBLE PRECISION,
        PRIMARY KEY (id),
        UNIQUE (name)
    )
    """,
    """
    CREATE TABLE undo_log (
        id BIGSERIAL NOT NULL,
        unit TEXT NOT NULL,
        trace_id TEXT NOT NULL,
        step TEXT NOT NULL,
        before TEXT,
        after_version INTEGER,
        at DOUBLE PRECISION NOT NULL,
        undone_at DOUBLE PRECISION,
        PRIMARY KEY (id)
    )
    """,
    """
    CREATE INDEX ix_undo_unit ON undo_log (unit, id)
    """,
    """
    CREATE INDEX ix_undo_trace ON undo_log (trace_id, id)
    """,
    """
    CREATE TABLE coactivation_edges (
        a TEXT NOT NULL,
        b TEXT NOT NULL,
        weight DOUBLE PRECISION NOT NULL,
        count INTEGER DEFAULT 1 NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (a, b),
        FOREIGN KEY(a) REFERENCES memory_traces (id) ON DELETE CASCADE,
        FOREIGN KEY(b) REFERENCES memory_traces (id) ON DELETE CASCADE
    )
    """,
    """
    CREATE INDEX ix_edges_b ON coactivation_edges (b)
    """,
    """
    CREATE TABLE said_embeddings (
        trace_id TEXT NOT NULL,
        model TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        vector BYTEA NOT NULL,
        PRIMARY KEY (trace_id, model),
        FOREIGN KEY(trace_id) REFERENCES memory_traces (id) ON DELETE CASCADE
    )
    """,
    """
    CREATE TABLE trace_embeddings (
        trace_id TEXT NOT NULL,
        model TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BYTEA NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (trace_id, model),
        FOREIGN KEY(trace_id) REFERENCES memory_traces (id) ON DELETE CASCADE
    )
    """,
    """
    CREATE TABLE trace_judgements (
        trace_id TEXT NOT NULL,
        judge TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        judged_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (trace_id, judge),
        FOREIGN KEY(trace_id) REFERENCES memory_traces (id) ON DELETE CASCADE
    )
    """,
    """
    CREATE TABLE vector_archive (
        trace_id TEXT NOT NULL,
        model TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BYTEA NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (trace_id, model, content_hash),
        FOREIGN KEY(trace_id) REFERENCES memory_traces (id) ON DELETE CASCADE
    )
    """,
    "CREATE INDEX ix_inbox_pending ON inbox_turns (status, rowid)",
]

# The index's text search configuration: PostgreSQL's English, stemmed by Snowball's
# English stemmer but keeping every word -- as FTS5's porter tokenizer does: "other",
# "before" or "again" may be just what a search is about.
CONFIGURATION = [
    "CREATE TEXT SEARCH DICTIONARY reverie_stem (TEMPLATE = snowball, Language = english)",
    "CREATE TEXT SEARCH CONFIGURATION reverie (COPY = english)",
    "ALTER TEXT SEARCH CONFIGURATION reverie ALTER MAPPING FOR asciiword, asciihword, "
    "hword_asciipart, word, hword, hword_part WITH reverie_stem",
]

FUNCTIONS = [
    # SQLite's JSON functions over JSON text: array elements (strings unquoted) and
    # the value at a $.key path, as text.  Metadata may hold an escaped NUL, which
    # PostgreSQL cannot turn into text: it is read as U+FFFD (the stored text keeps it).
    "CREATE FUNCTION reverie_json(text) RETURNS json LANGUAGE sql IMMUTABLE PARALLEL SAFE "
    "AS $$ SELECT replace($1, '\\u0000', '\\ufffd')::json $$",
    "CREATE FUNCTION json_each(text) RETURNS TABLE (value text) LANGUAGE sql IMMUTABLE "
    "PARALLEL SAFE AS $$ SELECT json_array_elements_text(reverie_json($1)) $$",
    "CREATE FUNCTION json_extract(text, text) RETURNS text LANGUAGE sql IMMUTABLE "
    "PARALLEL SAFE AS $$ SELECT json_extract_path_text(reverie_json($1), "
    "VARIADIC string_to_array(substr($2, 3), '.')) $$",
    """
    CREATE FUNCTION json_type(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE json_typeof(reverie_json($1))
            WHEN 'string' THEN 'text'
            WHEN 'boolean' THEN btrim($1)
            WHEN 'number' THEN CASE WHEN btrim($1) ~ '^-?[0-9]+$' THEN 'integer' ELSE 'real' END
            ELSE json_typeof(reverie_json($1)) END
    $$
    """,
    "CREATE FUNCTION json_type(text, text) RETURNS text LANGUAGE sql IMMUTABLE "
    "PARALLEL SAFE AS $$ SELECT json_type(json_extract_path(reverie_json($1), "
    "VARIADIC string_to_array(substr($2, 3), '.'))::text) $$",
    """
    CREATE FUNCTION json_valid(text) RETURNS integer LANGUAGE plpgsql IMMUTABLE AS $$
    BEGIN
        PERFORM reverie_json($1);
        RETURN 1;
    EXCEPTION WHEN others THEN
        RETURN 0;
    END $$
    """,
    "CREATE FUNCTION instr(text, text) RETURNS integer LANGUAGE sql IMMUTABLE "
    "PARALLEL SAFE AS $$ SELECT strpos($1, $2) $$",
    # The full-text document of a trace, and its length in tokens.
    "CREATE FUNCTION reverie_fts_doc(text, text, text) RETURNS tsvector LANGUAGE sql "
    "IMMUTABLE PARALLEL SAFE AS $$ SELECT setweight(to_tsvector('reverie', $1), 'A') "
    "|| setweight(to_tsvector('reverie', $2), 'A') "
    "|| setweight(to_tsvector('reverie', $3), 'B') $$",
    "CREATE FUNCTION reverie_fts_len(tsvector) RETURNS integer LANGUAGE sql IMMUTABLE "
    "PARALLEL SAFE AS $$ SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0)"
    "::integer FROM unnest($1) $$",
]

FTS = [
    """
    CREATE TABLE memory_traces_fts (
        rowid BIGINT PRIMARY KEY,
        content TEXT NOT NULL DEFAULT '',
        tags TEXT NOT NULL DEFAULT '',
        context TEXT NOT NULL DEFAULT '',
        memory_traces_fts TEXT,
        rank INTEGER,
        doc TSVECTOR GENERATED ALWAYS AS (reverie_fts_doc(content, tags, context)) STORED,
        doclen INTEGER GENERATED ALWAYS AS
            (reverie_fts_len(reverie_fts_doc(content, tags, context))) STORED
    )
    """,
    "CREATE INDEX ix_fts_doc ON memory_traces_fts USING gin (doc)",
    # The index's postings: each lexeme of each row, with how often it stands in the
    # row's own words (weight A) and in the previous turn (B), and the row's length.
    # BM25 sums them (a B-tree read in lexeme order, never the rows themselves).
    """
    CREATE TABLE memory_traces_postings (
        lexeme TEXT NOT NULL,
        seq BIGINT NOT NULL,
        n_own SMALLINT NOT NULL,
        n_context SMALLINT NOT NULL,
        doclen INTEGER NOT NULL
    )
    """,
    "CREATE INDEX ix_postings_lexeme ON memory_traces_postings (lexeme) "
    "INCLUDE (seq, n_own, n_context, doclen)",
    "CREATE INDEX ix_postings_seq ON memory_traces_postings (seq, lexeme) "
    "INCLUDE (n_own, n_context, doclen)",
    """
    CREATE FUNCTION memory_traces_postings_follow() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            DELETE FROM memory_traces_postings WHERE seq = OLD.rowid;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            INSERT INTO memory_traces_postings (lexeme, seq, n_own, n_context, doclen)
                SELECT u.lexeme, NEW.rowid,
                    cardinality(u.weights) - cardinality(array_positions(u.weights, 'B')),
                    cardinality(array_positions(u.weights, 'B')), NEW.doclen
                FROM unnest(NEW.doc) AS u;
        END IF;
        RETURN NULL;
    END $$
    """,
    "CREATE TRIGGER memory_traces_postings_follow AFTER INSERT OR DELETE OR UPDATE "
    "ON memory_traces_fts FOR EACH ROW EXECUTE FUNCTION memory_traces_postings_follow()",
    # FTS5's commands, written as inserts naming the command column.
    """
    CREATE FUNCTION memory_traces_fts_command() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.memory_traces_fts IS NULL THEN
            RETURN NEW;
        ELSIF NEW.memory_traces_fts = 'delete' THEN
            DELETE FROM memory_traces_fts WHERE rowid = NEW.rowid;
        ELSIF NEW.memory_traces_fts = 'rebuild' THEN
            DELETE FROM memory_traces_fts;
            INSERT INTO memory_traces_fts (rowid, content, tags, context)
                SELECT seq, content, tags, context FROM memory_traces;
        ELSIF NEW.memory_traces_fts = 'integrity-check' THEN
            IF EXISTS (
                SELECT 1 FROM memory_traces t FULL JOIN memory_traces_fts f ON f.rowid = t.seq
                WHERE t.seq IS NULL OR f.rowid IS NULL OR f.content IS DISTINCT FROM t.content
                    OR f.tags IS DISTINCT FROM t.tags OR f.context IS DISTINCT FROM t.context
            ) THEN
                RAISE EXCEPTION 'database disk image is malformed: the full-text index is '
                    'out of step with memory_traces';
            END IF;
        ELSIF NEW.memory_traces_fts <> 'optimize' THEN
            RAISE EXCEPTION 'unknown full-text command %', NEW.memory_traces_fts;
        END IF;
        RETURN NULL;
    END $$
    """,
    "CREATE TRIGGER memory_traces_fts_command BEFORE INSERT ON memory_traces_fts "
    "FOR EACH ROW EXECUTE FUNCTION memory_traces_fts_command()",
]

TRIGGERS = [
    """
    CREATE FUNCTION trace_embeddings_log() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            INSERT INTO embedding_events (trace_id, model) VALUES (OLD.trace_id, OLD.model);
        ELSE
            INSERT INTO embedding_events (trace_id, model) VALUES (NEW.trace_id, NEW.model);
        END IF;
        RETURN NULL;
    END $$
    """,
    *(
        f"CREATE TRIGGER trace_embeddings_{event.lower()} AFTER {event} ON trace_embeddings "
        "FOR EACH ROW EXECUTE FUNCTION trace_embeddings_log()"
        for event in ("INSERT", "UPDATE", "DELETE")
    ),
    """
    CREATE FUNCTION traces_deleted_lose_vectors() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO vector_archive AS a (trace_id, model, content_hash, dim, vector, created_at)
            SELECT e.trace_id, e.model, NEW.content_hash, e.dim, e.vector, e.created_at
            FROM trace_embeddings AS e WHERE e.trace_id = NEW.id
            ON CONFLICT (trace_id, model, content_hash) DO UPDATE SET dim = excluded.dim,
                vector = excluded.vector, created_at = excluded.created_at;
        DELETE FROM trace_embeddings WHERE trace_id = NEW.id;
        RETURN NULL;
    END $$
    """,
    "CREATE TRIGGER traces_deleted_lose_vectors AFTER UPDATE OF deleted ON memory_traces "
    "FOR EACH ROW WHEN (NEW.deleted = 1 AND OLD.deleted = 0) "
    "EXECUTE FUNCTION traces_deleted_lose_vectors()",
    """
    CREATE FUNCTION traces_context_follows() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE memory_traces SET context = CASE WHEN NEW.deleted = 1 THEN
            coalesce((SELECT p.content FROM memory_traces AS p WHERE p.stream = NEW.stream
                AND p.seq < NEW.seq AND p.deleted = 0 ORDER BY p.seq DESC LIMIT 1), '')
            ELSE NEW.content END
            WHERE prev_seq = NEW.seq;
        UPDATE memory_traces_fts AS f SET context = t.context
            FROM memory_traces AS t WHERE t.prev_seq = NEW.seq AND f.rowid = t.seq;
        RETURN NULL;
    END $$
    """,
    "CREATE TRIGGER traces_context_follows AFTER UPDATE OF content, deleted ON memory_traces "
    "FOR EACH ROW WHEN (NEW.content IS DISTINCT FROM OLD.content "
    "OR NEW.deleted IS DISTINCT FROM OLD.deleted) EXECUTE FUNCTION traces_context_follows()",
]


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return  # a SQLite brain has all of this from 0001 to 0011
    for statement in (*TABLES, *CONFIGURATION, *FUNCTIONS, *FTS, *TRIGGERS):
        op.execute(statement)


def downgrade() -> None:
    raise NotImplementedError("a PostgreSQL brain has no schema before 0012")
