"""What every importer produces and returns: records, the result, and the writer.

An importer parses its source into :class:`Record` values and hands them to a
:class:`TraceWriter`, which validates, deduplicates and inserts them through
:func:`memory_core.traces.store.insert_trace` in batches of one transaction each, so
the full-text index is written alongside every trace and is consistent after
each commit.  A record that fails validation is listed in ``errors`` with its
place in the source; the rest still import.
"""

from __future__ import annotations

import logging
import time
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import Connection, Text, bindparam, text

from memory_core.brain.db import Brain
from memory_core.episodes import imported_fact
from memory_core.errors import InvalidArgument
from memory_core.extraction import ExtractTurn
from memory_core.ingest import fact_exists
from memory_core.textutil import content_hash
from memory_core.traces.model import KNOWN_SQL, NewTrace, check_new
from memory_core.traces.store import insert_trace

log = logging.getLogger(__name__)

BATCH_SIZE = 2000
MAX_ERRORS = 1000  # errors listed in a result; the count beyond is summarised

# Columns an importer may carry over from its source, beyond what NewTrace sets.
CARRIED_COLUMNS = (
    "strength",
    "stability",
    "created_at",
    "updated_at",
    "last_accessed",
    "retrieval_count",
    "deleted",
    "deleted_reason",
    "deleted_at",
    "version",
)

Progress = Callable[[int], None]


@dataclass(frozen=True)
class Embedding:
    """One stored vector of a trace, as the brain keeps it."""

    model: str
    dim: int
    vector: bytes
    created_at: float


@dataclass
class Record:
    """One trace to import, with where it came from for error messages."""

    trace: NewTrace
    place: str
    columns: dict[str, Any] = field(default_factory=dict)
    embeddings: list[Embedding] = field(default_factory=list)
    source_id: str | None = None
    # A conversation's exchange (what the user said, what the assistant answered):
    # an import with extraction mines its facts, as the ingest does a turn's.
    exchange: tuple[str, str] | None = None

    @property
    def deleted(self) -> bool:
        return bool(self.columns.get("deleted"))


@dataclass
class ImportResult:
    """What an import did: traces written, records skipped, and why others failed."""

    imported: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)
    unembedded_ids: list[str] = field(default_factory=list)
    edges: int = 0
    conversations: int = 0
    facts: int = 0
    id_map: dict[str, str] = field(default_factory=dict, repr=False)
    _dropped_errors: int = field(default=0, repr=False)

    def error(self, message: str) -> None:
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(message)
        else:
            self._dropped_errors += 1

    def to_dict(self) -> dict[str, Any]:
        errors = list(self.errors)
        if self._dropped_errors:
            errors.append(f"... and {self._dropped_errors} more errors")
        return {
            "imported": self.imported,
            "skipped": self.skipped,
            "errors": errors,
            "edges": self.edges,
            "conversations": self.conversations,
            "facts": self.facts,
            "unembedded_ids": self.unembedded_ids,
        }


def normalize_text(value: str) -> str:
    """Text as compared for a note's own trace: stripped, LF line breaks, NFC."""
    value = value.replace("\r\n", "\n").replace("\r", "\n").strip()
    return unicodedata.normalize("NFC", value)


def clean_scope_id(value: Any) -> str | None:
    """A source's scope id: a non-empty string, or None for '' and missing."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidArgument("scope_id must be a string")
    return value


_ID_CHUNK = 500  # values per IN (...) query
_BY_HASH = text(
    "SELECT id, content_hash, scope, scope_id FROM memory_traces WHERE content_hash IN :keys "
    f"AND {KNOWN_SQL}"
).bindparams(bindparam("keys", expanding=True, type_=Text))
_BY_ID = text(
    "SELECT id, scope, scope_id, content FROM memory_traces WHERE id IN :keys"
).bindparams(bindparam("keys", expanding=True, type_=Text))
_ADD_VECTOR = text(
    "INSERT INTO trace_embeddings (trace_id, model, dim, vector, created_at) "
    "VALUES (:id, :model, :dim, :vector, :at) ON CONFLICT (trace_id, model) DO NOTHING"
)

_Key = tuple[str, str, str | None]


@dataclass
class _Known:
    """The brain's traces a batch could collide with, read once per batch."""

    by_key: dict[_Key, str]
    by_id: dict[str, tuple[str, str | None, str]]


def _read_known(conn: Connection, batch: list[tuple[Record, str]]) -> _Known:
    hashes = list({digest for _, digest in batch})
    ids = list({r.trace.id for r, _ in batch if r.trace.id is not None})
    known = _Known({}, {})
    for lo in range(0, len(hashes), _ID_CHUNK):
        for tid, digest, scope, sid in conn.execute(
            _BY_HASH, {"keys": hashes[lo : lo + _ID_CHUNK]}
        ):
            known.by_key.setdefault((digest, scope, sid), tid)
    for lo in range(0, len(ids), _ID_CHUNK):
        for tid, scope, sid, content in conn.execute(_BY_ID, {"keys": ids[lo : lo + _ID_CHUNK]}):
            known.by_id[tid] = (scope, sid, content)
    return known


# The ingest's fact extraction, as an import runs it.
Extract = ExtractTurn
# Whose an import is: every record goes to this (scope, scope id); None keeps the files'.
Owner = tuple[str, str] | None


class TraceWriter:
    """Validates, deduplicates and inserts records in batched transactions.

    With ``owner`` every record is stored for that scope and scope id (an
    import assigned to a user).  With ``dedup`` a record is skipped when a
    trace of its scope and scope id has the same content SHA-256 -- a trace a
    person deleted included, so an import never brings a deleted trace back,
    but not one a dream pass pruned for disuse, which the import learns again
    -- or when its id names a trace of its scope whose text is the record's (a
    note exported from it).  A record whose id names another trace is written
    under a new id.

    With ``extract``, each imported record that is a conversation's exchange has
    its facts extracted (after its batch is committed, outside the write lock)
    and stored as traces citing it, as the ingest does a posted turn's.
    """

    def __init__(
        self,
        brain: Brain,
        *,
        dedup: bool = True,
        batch_size: int | None = None,
        progress: Progress | None = None,
        now: float | None = None,
        owner: Owner = None,
        extract: Extract | None = None,
    ) -> None:
        self.brain = brain
        self.owner = owner
        self.dedup = dedup
        self.batch_size = batch_size or BATCH_SIZE
        self.progress = progress
        self.now = time.time() if now is None else now
        self.result = ImportResult()
        self.extract = extract
        self._batch: list[Record] = []
        self._mined: list[tuple[str, NewTrace, tuple[str, str]]] = []

    def add(self, record: Record) -> None:
        """Queue one record (validated now); writes a batch when it is full."""
        if self.owner is not None:
            scope, scope_id = self.owner
            record = replace(record, trace=replace(record.trace, scope=scope, scope_id=scope_id))
        try:
            checked = check_new(record.trace)
        except InvalidArgument as e:
            self.result.error(f"{record.place}: {e}")
            return
        self._batch.append(replace(record, trace=checked))
        if len(self._batch) >= self.batch_size:
            self.flush()

    def add_all(self, records: Iterable[Record]) -> None:
        for record in records:
            self.add(record)

    def flush(self) -> None:
        """Write the queued records in one transaction."""
        if not self._batch:
            return
        batch = [(r, content_hash(r.trace.content)) for r in self._batch]
        self._batch = []
        with self.brain.transaction() as conn:
            known = _read_known(conn, batch)
            for record, digest in batch:
                self._write(conn, known, record, digest)
        self._mine()
        if self.progress is not None:
            self.progress(len(batch))

    def _mine(self) -> None:
        """The facts of the exchanges just written, each a trace citing its episode."""
        if self.extract is None or not self._mined:
            return
        extract = self.extract
        found = [(tid, t, extract(*said, when=t.occurred_at).facts) for tid, t, said in self._mined]
        self._mined = []
        with self.brain.transaction() as conn:
            for episode_id, episode, facts in found:
                seen: set[str] = set()
                for fact in facts:
                    digest = content_hash(fact.content)
                    if digest in seen or fact_exists(conn, digest, episode.scope, episode.scope_id):
                        continue
                    seen.add(digest)
                    item = imported_fact(fact, episode, episode_id)
                    self.result.unembedded_ids.append(
                        insert_trace(conn, self.brain, item, self.now)
                    )
                    self.result.facts += 1

    def finish(self) -> ImportResult:
        self.flush()
        return self.result

    @staticmethod
    def _duplicate_of(known: _Known, item: NewTrace, key: _Key) -> str | None:
        found = known.by_key.get(key)
        if found is not None:
            return found
        own = known.by_id.get(item.id) if item.id is not None else None
        if (
            own is not None
            and (own[0], own[1]) == (item.scope, item.scope_id)
            and normalize_text(own[2]) == normalize_text(item.content)
        ):
            return item.id
        return None

    def _write(self, conn: Connection, known: _Known, record: Record, digest: str) -> None:
        item = record.trace
        key = (digest, item.scope, item.scope_id)
        if self.dedup:
            existing = self._duplicate_of(known, item, key)
            if existing is not None:
                self.result.skipped += 1
                if record.source_id is not None:
                    self.result.id_map[record.source_id] = existing
                return
        if item.id is not None and item.id in known.by_id:
            item = replace(item, id=None)
        trace_id = insert_trace(conn, self.brain, item, self.now)
        known.by_key.setdefault(key, trace_id)
        known.by_id[trace_id] = (item.scope, item.scope_id, item.content)
        columns = {k: v for k, v in record.columns.items() if k in CARRIED_COLUMNS}
        if columns:
            assignments = ", ".join(f"{k} = :{k}" for k in columns)
            conn.execute(
                text(f"UPDATE memory_traces SET {assignments} WHERE id = :id"),
                {**columns, "id": trace_id},
            )
        for emb in record.embeddings:
            conn.execute(
                _ADD_VECTOR,
                {
                    "id": trace_id,
                    "model": emb.model,
                    "dim": emb.dim,
                    "vector": emb.vector,
                    "at": emb.created_at,
                },
            )
        if not record.embeddings and not record.deleted:
            self.result.unembedded_ids.append(trace_id)
        if record.exchange is not None and not record.deleted:
            self._mined.append((trace_id, item, record.exchange))
        self.result.imported += 1
        if record.source_id is not None:
            self.result.id_map[record.source_id] = trace_id


def live_first(records: list[Record]) -> list[Record]:
    """Live records before forgotten ones, so a text stored again is kept live."""
    return sorted(records, key=lambda r: r.deleted)


_ADD_EDGE = text(
    "INSERT INTO coactivation_edges (a, b, weight, count, updated_at) "
    "VALUES (:a, :b, :w, :n, :at) ON CONFLICT (a, b) DO NOTHING"
)


def write_edges(
    brain: Brain, result: ImportResult, edges: Iterable[dict[str, Any]], now: float
) -> None:
    """Co-activation edges between source ids, mapped to the traces the import wrote
    or matched; an edge the brain already has, or naming no such trace, is left out."""
    with brain.transaction() as conn:
        for i, edge in enumerate(edges):
            a = result.id_map.get(str(edge.get("a")))
            b = result.id_map.get(str(edge.get("b")))
            if a is None or b is None or a == b:
                continue
            try:
                weight = float(edge.get("weight", 1.0))
                count = int(edge.get("count", 1))
                at = float(edge.get("updated_at", now))
            except (TypeError, ValueError):
                result.error(f"edges[{i}]: weight, count and updated_at must be numbers")
                continue
            lo, hi = sorted((a, b))
            params = {"a": lo, "b": hi, "w": weight, "n": count, "at": at}
            result.edges += conn.execute(_ADD_EDGE, params).rowcount
