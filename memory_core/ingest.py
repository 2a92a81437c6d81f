"""The durable inbox and turn ingestion.

A posted turn is first a row in ``inbox_turns`` (committed before the API
answers), then, in a worker, an episodic trace holding the exchange verbatim
plus one trace per extracted fact.  The brain is the truth: ingestion reads
the inbox row, and writes the traces and marks the row done in one
transaction that first re-checks the row is still pending, so a redelivered
or duplicated job is a harmless no-op and no turn is ingested twice.

Workers ingest in batches: a job for one turn also takes other pending turns,
so that one commit (one fsync) serves many turns; the jobs for those turns
then find them done.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, text

from memory_core.auth import WRITE, Identity, acting
from memory_core.db import Brain
from memory_core.errors import Forbidden, InvalidArgument, NotFound
from memory_core.extraction.base import Extraction, Fact
from memory_core.timeref import parse_time
from memory_core.traces import (
    KNOWN_SQL,
    NewTrace,
    check_content,
    check_scope,
    content_hash,
    insert_trace,
)

log = logging.getLogger(__name__)

# Which kind of trace each fact category becomes.
CATEGORY_TYPES = {
    "user_preference": "semantic",
    "episodic": "episodic",
    "goal": "prospective",
    "knowledge": "semantic",
    "correction": "semantic",
    "emotional_context": "episodic",
    "action_item": "prospective",
}
MAX_ID_LENGTH = 256

Extract = Callable[[str, str], Extraction]


@dataclass(frozen=True)
class Turn:
    """One posted exchange, validated."""

    user: str
    assistant: str
    scope: str
    scope_id: str
    conversation_id: str | None = None
    timestamp: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    idempotency_key: str | None = None
    # The exchange as a message list, when it was posted as one: each message verbatim
    # with its role and speaker; ``user`` and ``assistant`` then hold the user's and the
    # assistant's messages joined (what facts are mined from: never system or tool).
    messages: list[dict[str, str]] | None = None

    def payload(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "idempotency_key"}
        if self.messages is None:
            out.pop("messages")
        return out

    @classmethod
    def from_messages(cls, messages: list[dict[str, str]], **fields: Any) -> Turn:
        """A turn of a chat's messages (``{"role", "content", "name"?}``, the OpenAI shape)."""
        checked = [check_message(m, k) for k, m in enumerate(messages)]
        if not checked:
            raise InvalidArgument("messages: at least one message")

        def said(role: str) -> str:
            return "\n\n".join(m["content"] for m in checked if m["role"] == role)

        return cls(user=said("user"), assistant=said("assistant"), messages=checked, **fields)

    @classmethod
    def posted(
        cls,
        user: str | None,
        assistant: str | None,
        messages: list[dict[str, str]] | None,
        **fields: Any,
    ) -> Turn:
        """A turn as an adapter receives it: ``user`` and ``assistant``, or ``messages``."""
        if messages is not None:
            return cls.from_messages(messages, **fields)
        return cls(user=user or "", assistant=assistant or "", **fields)


ROLES = ("system", "user", "assistant", "tool")
MAX_NAME_LENGTH = 256


def check_message(message: Any, k: int) -> dict[str, str]:
    """One message of a list, refused with the field at fault."""
    if not isinstance(message, dict):
        raise InvalidArgument(f"messages[{k}]: must be an object")
    role, content, name = message.get("role"), message.get("content"), message.get("name")
    if role not in ROLES:
        raise InvalidArgument(f"messages[{k}].role: one of {', '.join(ROLES)}; got {role!r}")
    if not isinstance(content, str):
        raise InvalidArgument(f"messages[{k}].content: must be a string")
    out = {"role": role, "content": content}
    if name is not None:
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_LENGTH:
            raise InvalidArgument(f"messages[{k}].name: 1 to {MAX_NAME_LENGTH} characters")
        out["name"] = name
    return out


def parse_timestamp(value: str | float | None) -> float | None:
    """ISO 8601 (a naive time is taken as UTC) or epoch seconds, to epoch seconds."""
    return parse_time(value, "timestamp")


def check_turn(turn: Turn) -> Turn:
    """Refuse a turn that cannot be ingested, naming the field."""
    if turn.messages is not None:
        if not any(m["content"].strip() for m in turn.messages):
            raise InvalidArgument("messages: every message is empty")
    elif not (turn.user.strip() or turn.assistant.strip()):
        raise InvalidArgument("user: user and assistant are both empty")
    check_scope(turn.scope)
    for name in ("scope_id", "conversation_id", "idempotency_key"):
        value = getattr(turn, name)
        if value is not None and (not value.strip() or len(value) > MAX_ID_LENGTH):
            raise InvalidArgument(f"{name}: must be 1 to {MAX_ID_LENGTH} characters")
    if not isinstance(turn.metadata, dict):
        raise InvalidArgument("metadata: must be an object")
    return turn


@dataclass(frozen=True)
class Accepted:
    turn_id: str
    duplicate: bool


_FIND_KEY = text("SELECT id FROM inbox_turns WHERE idempotency_key = :k")
_INSERT_TURN = text(
    "INSERT INTO inbox_turns (id, idempotency_key, payload, status, attempts, "
    "created_at, updated_at) VALUES (:id, :key, :payload, 'pending', 0, :now, :now)"
)


def accept_turns(
    brain: Brain,
    turns: Sequence[Turn],
    *,
    identity: Identity,
    now: float | None = None,
) -> list[Accepted]:
    """Write turns to the inbox in one transaction (one fsync), durably.

    A turn whose idempotency key is already in the inbox -- or earlier in this
    batch -- answers the first turn's id and writes nothing.
    """
    acting(identity, WRITE)
    for turn in turns:
        check_turn(turn)
        if not identity.sees(turn.scope_id):
            raise Forbidden(f"scope_id: {turn.scope_id!r} is not a scope id this caller may write")
    now = time.time() if now is None else now
    accepted: list[Accepted] = []
    with brain.transaction() as conn:
        for turn in turns:
            if turn.idempotency_key is not None:
                existing = conn.execute(_FIND_KEY, {"k": turn.idempotency_key}).scalar()
                if existing is not None:
                    accepted.append(Accepted(str(existing), duplicate=True))
                    continue
            turn_id = f"turn_{uuid.uuid4()}"
            conn.execute(
                _INSERT_TURN,
                {
                    "id": turn_id,
                    "key": turn.idempotency_key,
                    "payload": json.dumps(turn.payload(), ensure_ascii=False),
                    "now": now,
                },
            )
            accepted.append(Accepted(turn_id, duplicate=False))
    return accepted


def accept_turn(
    brain: Brain, turn: Turn, *, identity: Identity, now: float | None = None
) -> Accepted:
    """Write one turn to the inbox, durably (see :func:`accept_turns`)."""
    return accept_turns(brain, [turn], identity=identity, now=now)[0]


@dataclass
class IngestReport:
    """What one ingestion call did, for metrics and the embed job."""

    ingested: list[str] = field(default_factory=list)  # turn ids newly ingested
    already_done: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    new_trace_ids: list[str] = field(default_factory=list)
    facts_by_category: dict[str, int] = field(default_factory=dict)
    duplicates_skipped: int = 0
    extractions: list[Extraction] = field(default_factory=list)
    lag_seconds: list[float] = field(default_factory=list)  # accepted -> committed


def turn_status(brain: Brain, turn_id: str, *, identity: Identity) -> dict[str, Any]:
    """The inbox row of a turn, for the API's status route and for tests.

    Another's turn than ``identity``'s is not found.
    """
    acting(identity)
    with brain.read() as conn:
        row = conn.execute(
            text(
                "SELECT id, status, attempts, last_error, created_at, processed_at, "
                "json_extract(payload, '$.scope_id') AS scope_id FROM inbox_turns WHERE id = :id"
            ),
            {"id": turn_id},
        ).first()
    if row is None or not identity.sees(row.scope_id):
        raise NotFound(f"no turn {turn_id}")
    status = dict(row._mapping)
    del status["scope_id"]
    return status


def _pending(conn: Connection, turn_ids: Sequence[str], extra: int) -> list[tuple[str, str, float]]:
    """The given turns plus up to ``extra`` other pending ones, oldest first."""
    rows: list[Any] = []
    if turn_ids:
        marks = ", ".join(f":t{i}" for i in range(len(turn_ids)))
        rows = list(
            conn.execute(
                text(
                    f"SELECT id, payload, created_at, status FROM inbox_turns WHERE id IN ({marks})"
                ),
                {f"t{i}": t for i, t in enumerate(turn_ids)},
            )
        )
    given = {r.id for r in rows if r.status == "pending"}
    if extra > 0:
        rows += conn.execute(
            text(
                "SELECT id, payload, created_at, status FROM inbox_turns "
                "WHERE status = 'pending' ORDER BY created_at LIMIT :n"
            ),
            {"n": extra + len(given)},
        ).all()
    seen: dict[str, tuple[str, str, float]] = {}
    for r in rows:
        if r.status == "pending" and r.id not in seen and len(seen) < len(given) + extra:
            seen[r.id] = (r.id, r.payload, r.created_at)
    return list(seen.values())


def ingest_turns(
    brain: Brain,
    turn_ids: Sequence[str],
    extract: Extract,
    *,
    batch_extra: int = 0,
    now: float | None = None,
) -> IngestReport:
    """Ingest these turns (and up to ``batch_extra`` other pending ones).

    Extraction runs before the write transaction (an LLM may be slow); the
    transaction then writes only turns still pending, so concurrent workers
    never ingest a turn twice.
    """
    report = IngestReport()
    with brain.read() as conn:
        todo = _pending(conn, turn_ids, batch_extra)
        known = {r[0] for r in todo}
        if turn_ids:
            marks = ", ".join(f":t{i}" for i in range(len(turn_ids)))
            present = {
                r[0]
                for r in conn.execute(
                    text(f"SELECT id FROM inbox_turns WHERE id IN ({marks})"),
                    {f"t{i}": t for i, t in enumerate(turn_ids)},
                )
            }
            report.missing = [t for t in turn_ids if t not in present]
            report.already_done = [t for t in turn_ids if t in present and t not in known]
    extracted = []
    for turn_id, payload, created_at in todo:
        data = json.loads(payload)
        extraction = extract(data["user"], data["assistant"])
        extracted.append((turn_id, data, created_at, extraction))
    if not extracted:
        return report
    with brain.transaction() as conn:
        stamp = time.time() if now is None else now
        for turn_id, data, created_at, extraction in extracted:
            still = _one(conn, "SELECT status FROM inbox_turns WHERE id = ?", (turn_id,))
            if still != "pending":
                if turn_id in turn_ids:
                    report.already_done.append(turn_id)
                continue
            _write_turn(conn, brain, turn_id, data, created_at, extraction, stamp, report)
            report.extractions.append(extraction)
            report.lag_seconds.append(max(stamp - created_at, 0.0))
    return report


def _write_turn(
    conn: Connection,
    brain: Brain,
    turn_id: str,
    data: dict[str, Any],
    created_at: float,
    extraction: Extraction,
    now: float,
    report: IngestReport,
) -> None:
    scope, scope_id = data["scope"], data["scope_id"]
    occurred = data.get("timestamp") or created_at
    meta = {
        "turn_id": turn_id,
        **({"conversation_id": c} if (c := data.get("conversation_id")) else {}),
    }
    metadata = {**data.get("metadata", {}), **meta}
    conversation = metadata.get("conversation_id")
    episode = NewTrace(
        content=turn_text(data),
        type="episodic",
        scope=scope,
        scope_id=scope_id,
        tags=[TURN_TAG],
        metadata=metadata,
        sources=[{"turn": turn_id}],
        occurred_at=occurred,
        stream=turn_stream(scope, scope_id, str(conversation) if conversation else None),
    )
    episode_id = insert_trace(conn, brain, episode, now)
    report.new_trace_ids.append(episode_id)
    seen: set[str] = set()
    for fact in extraction.facts:
        digest = content_hash(fact.content)
        if digest in seen or fact_exists(conn, digest, scope, scope_id):
            report.duplicates_skipped += 1
            continue
        seen.add(digest)
        fact_id = insert_trace(
            conn, brain, fact_trace(fact, scope, scope_id, turn_id, episode_id, occurred, meta), now
        )
        report.new_trace_ids.append(fact_id)
        report.facts_by_category[fact.category] = report.facts_by_category.get(fact.category, 0) + 1
    _one(
        conn,
        "UPDATE inbox_turns SET status = 'done', processed_at = ?, updated_at = ?, "
        "attempts = attempts + 1, last_error = NULL WHERE id = ? AND status = 'pending'",
        (now, now, turn_id),
    )
    report.ingested.append(turn_id)


def turn_stream(scope: str, scope_id: str | None, conversation_id: str | None) -> str:
    """The stream of a conversation's turns: scope, scope id and conversation id."""
    stream = f"{scope}:{scope_id or ''}"
    return f"{stream}:{conversation_id}" if conversation_id else stream


TURN_TAG = "turn"  # the tag of a verbatim turn's episode


def turn_text(data: dict[str, Any]) -> str:
    """A turn's episode: its messages verbatim, one a paragraph, with role and speaker
    ("User (Ana): ...", "System: ..."), or the user's and the assistant's parts."""
    messages = data.get("messages")
    if not messages:
        return episode_text(data["user"], data["assistant"])
    return "\n\n".join(
        f"{m['role'].title()}{f' ({n})' if (n := m.get('name')) else ''}: {m['content']}"
        for m in messages
        if m["content"].strip()
    )


def episode_text(user: str, assistant: str) -> str:
    """The exchange verbatim, one speaker a paragraph."""
    parts = []
    if user.strip():
        parts.append(f"User: {user}")
    if assistant.strip():
        parts.append(f"Assistant: {assistant}")
    return "\n\n".join(parts)


def fact_trace(
    fact: Fact,
    scope: str,
    scope_id: str,
    turn_id: str,
    episode_id: str,
    occurred: float,
    meta: dict[str, Any],
) -> NewTrace:
    check_content(fact.content, "fact content")
    return NewTrace(
        content=fact.content,
        type=CATEGORY_TYPES.get(fact.category, "semantic"),
        scope=scope,
        scope_id=scope_id,
        tags=[fact.category, "auto_ingest"],
        importance=min(max(fact.importance, 0.0), 1.0),
        metadata={**meta, "category": fact.category, "entities": fact.entities},
        sources=[{"turn": turn_id}, {"trace": episode_id}],
        occurred_at=occurred,
    )


def fact_exists(conn: Connection, digest: str, scope: str, scope_id: str | None) -> bool:
    """A fact already stored in this scope: active, or deleted by a person (a fact a
    person deleted stays forgotten).  One a dream pass pruned for disuse is learnt
    again when it is said again."""
    sql = (
        "SELECT 1 FROM memory_traces WHERE content_hash = ? AND scope = ? AND scope_id IS ? "
        f"AND {KNOWN_SQL} LIMIT 1"
    )
    return _one(conn, sql, (digest, scope, scope_id)) is not None


def imported_fact(fact: Fact, episode: NewTrace, episode_id: str) -> NewTrace:
    """A fact mined from an imported exchange: its episode's scope, time and origin."""
    check_content(fact.content, "fact content")
    origin = {k: v for k, v in episode.metadata.items() if k in ("source", "conversation_id")}
    return NewTrace(
        content=fact.content,
        type=CATEGORY_TYPES.get(fact.category, "semantic"),
        scope=episode.scope,
        scope_id=episode.scope_id,
        tags=[fact.category, "auto_ingest"],
        importance=min(max(fact.importance, 0.0), 1.0),
        metadata={**origin, "category": fact.category, "entities": fact.entities},
        sources=[{"trace": episode_id}],
        occurred_at=episode.occurred_at,
    )


def _one(conn: Connection, sql: str, params: tuple[Any, ...]) -> Any:
    """First column of the first row, on the driver's cursor (the ingest hot path)."""
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        row = cursor.execute(sql, params).fetchone()
    finally:
        cursor.close()
    return None if row is None else row[0]


def record_failure(brain: Brain, turn_ids: Sequence[str], error: str, *, max_attempts: int) -> None:
    """Count a failed attempt; a turn past ``max_attempts`` is marked failed."""
    now = time.time()
    with brain.transaction() as conn:
        for turn_id in turn_ids:
            conn.execute(
                text(
                    "UPDATE inbox_turns SET attempts = attempts + 1, last_error = :err, "
                    "updated_at = :now, status = CASE WHEN attempts + 1 >= :max "
                    "THEN 'failed' ELSE status END WHERE id = :id AND status = 'pending'"
                ),
                {"err": error[:2000], "now": now, "max": max_attempts, "id": turn_id},
            )


def stale_pending(brain: Brain, *, older_than: float, limit: int = 10_000) -> list[str]:
    """Pending turns accepted more than ``older_than`` seconds ago (for reconcile)."""
    cutoff = time.time() - older_than
    with brain.read() as conn:
        rows = conn.execute(
            text(
                "SELECT id FROM inbox_turns WHERE status = 'pending' AND created_at < :c "
                "ORDER BY created_at LIMIT :n"
            ),
            {"c": cutoff, "n": limit},
        ).all()
    return [r[0] for r in rows]


__all__ = [
    "Accepted",
    "IngestReport",
    "Turn",
    "accept_turn",
    "ingest_turns",
    "parse_timestamp",
    "record_failure",
    "stale_pending",
]
