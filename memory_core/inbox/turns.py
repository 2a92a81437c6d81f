"""The durable inbox: posted turns as rows of ``inbox_turns``, before ingestion.

A posted turn is checked, then written in one transaction (one fsync) with
any others posted meanwhile (:mod:`memory_core.inbox.group_commit`), before
the API answers: a turn accepted is a turn kept.  Ingestion
(:mod:`memory_core.ingest`) later turns each row into traces and marks it
done; a row still pending after a while is found again by reconcile
(:func:`stale_pending`), and a row that keeps failing is marked failed -- and tried
again, alone, a few times after a growing back-off (:func:`due_again`).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text

from memory_core.auth import WRITE, Identity, acting
from memory_core.brain.db import Brain
from memory_core.errors import Forbidden, InvalidArgument, NotFound
from memory_core.timeref import parse_time
from memory_core.traces.model import check_scope
from memory_core.wellformed import check_text, cleaned

MAX_ID_LENGTH = 256


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
    for name in ("user", "assistant", "messages", "scope_id", "conversation_id", "metadata"):
        check_text(getattr(turn, name), name)
    check_text(turn.idempotency_key, "idempotency_key")
    return turn


@dataclass(frozen=True)
class Accepted:
    turn_id: str
    duplicate: bool


# A key is the caller's own: it is looked up, and unique, within the turn's scope id.
_FIND_KEY = text(
    "SELECT id FROM inbox_turns WHERE scope = :scope AND scope_id = :scope_id "
    "AND idempotency_key = :key"
)
_INSERT_TURN = text(
    "INSERT INTO inbox_turns (id, scope, scope_id, idempotency_key, payload, status, "
    "attempts, created_at, updated_at) "
    "VALUES (:id, :scope, :scope_id, :key, :payload, 'pending', 0, :now, :now)"
)


def accept_turns(
    brain: Brain,
    turns: Sequence[Turn],
    *,
    identity: Identity,
    now: float | None = None,
) -> list[Accepted]:
    """Write turns to the inbox in one transaction (one fsync), durably.

    A turn whose idempotency key its tenant (scope and scope id) already used -- in
    the inbox, or earlier in this batch -- answers that turn's id and writes nothing.
    Another tenant's key is neither found nor shown: each tenant's keys are its own.
    """
    acting(identity, WRITE)
    for turn in turns:
        check_turn(turn)
        if not identity.sees(turn.scope_id, turn.scope):
            raise Forbidden(f"scope_id: {turn.scope_id!r} is not a scope id this caller may write")
    now = time.time() if now is None else now
    accepted: list[Accepted] = []
    with brain.transaction() as conn:
        for turn in turns:
            whose = {"scope": turn.scope, "scope_id": turn.scope_id}
            if turn.idempotency_key is not None:
                existing = conn.execute(_FIND_KEY, {**whose, "key": turn.idempotency_key}).scalar()
                if existing is not None:
                    accepted.append(Accepted(str(existing), duplicate=True))
                    continue
            turn_id = f"turn_{uuid.uuid4()}"
            conn.execute(
                _INSERT_TURN,
                {
                    **whose,
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


def turn_status(brain: Brain, turn_id: str, *, identity: Identity) -> dict[str, Any]:
    """The inbox row of a turn, for the API's status route and for tests.

    Another's turn than ``identity``'s is not found.
    """
    acting(identity)
    with brain.read() as conn:
        row = conn.execute(
            text(
                "SELECT id, status, attempts, last_error, created_at, processed_at, "
                "scope, scope_id FROM inbox_turns WHERE id = :id"
            ),
            {"id": turn_id},
        ).first()
    if row is None or not identity.sees(row.scope_id, row.scope):
        raise NotFound(f"no turn {turn_id}")
    status = dict(row._mapping)
    del status["scope"], status["scope_id"]
    return status


def record_failure(brain: Brain, turn_ids: Sequence[str], error: str, *, max_attempts: int) -> None:
    """Count a failed attempt; a turn past ``max_attempts`` is marked failed (reconcile
    tries it again later, :func:`due_again`)."""
    now = time.time()
    with brain.transaction() as conn:
        for turn_id in turn_ids:
            conn.execute(
                text(
                    "UPDATE inbox_turns SET attempts = attempts + 1, last_error = :err, "
                    "updated_at = :now, status = CASE WHEN attempts + 1 >= :max "
                    "THEN 'failed' ELSE status END WHERE id = :id AND status = 'pending'"
                ),
                # The error may quote what could not be written: only storable text.
                {"err": cleaned(error)[:2000], "now": now, "max": max_attempts, "id": turn_id},
            )


def due_again(
    brain: Brain,
    *,
    max_attempts: int,
    tries: int,
    after_s: float,
    limit: int = 1_000,
    now: float | None = None,
) -> list[str]:
    """Failed turns whose back-off has passed, made pending again (for reconcile).

    A turn is failed after ``max_attempts``; it is then tried again up to ``tries``
    times, one attempt each, the first ``after_s`` after it failed and each later one
    after twice the wait before.  A turn that failed because of what else was
    ingested with it, or of an endpoint or a bug since mended, is so not lost.
    """
    now = time.time() if now is None else now
    with brain.transaction() as conn:
        rows = conn.execute(
            text(
                "SELECT id, attempts, updated_at FROM inbox_turns WHERE status = 'failed' "
                "AND attempts < :most ORDER BY updated_at LIMIT :n"
            ),
            {"most": max_attempts + tries, "n": limit},
        ).all()
        due = [
            r.id
            for r in rows
            if now - r.updated_at >= after_s * 2.0 ** max(r.attempts - max_attempts, 0)
        ]
        for turn_id in due:
            conn.execute(
                text(
                    "UPDATE inbox_turns SET status = 'pending', updated_at = :now "
                    "WHERE id = :id AND status = 'failed'"
                ),
                {"now": now, "id": turn_id},
            )
    return due


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
