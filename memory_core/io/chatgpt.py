"""ChatGPT ``conversations.json``: each user/assistant exchange an episodic trace.

A conversation's ``mapping`` is a tree of nodes (``parent``, ``children``,
``message`` or null); the branch shown to the user is the path from the root
to ``current_node`` (edits and regenerations live on other branches), else
the path that follows each node's last child.  System and tool messages, and
messages without text, are skipped.  A user message and the assistant
messages that answer it become one trace, ``User: ...\\nAssistant: ...``,
created at the user message's time and tagged ``chatgpt``; an unanswered user
message is skipped.  Deduplication makes a re-imported conversation add
nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_core.brain.db import Brain
from memory_core.errors import InvalidArgument
from memory_core.io.records import Extract, ImportResult, Owner, Progress, Record, TraceWriter
from memory_core.traces.model import NewTrace

_KEPT_ROLES = ("user", "assistant")


@dataclass
class _Exchange:
    user: str
    at: float | None
    message_id: str | None
    answers: list[str] = field(default_factory=list)


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or {}
    parts = content.get("parts") if isinstance(content, dict) else None
    if isinstance(parts, list):
        return "\n".join(p for p in parts if isinstance(p, str)).strip()
    text = content.get("text") if isinstance(content, dict) else None
    return text.strip() if isinstance(text, str) else ""


def _branch(mapping: dict[str, Any], current: Any) -> list[dict[str, Any]]:
    """The nodes from the root to the current node, in order."""
    if not isinstance(current, str) or current not in mapping:
        roots = [k for k, n in mapping.items() if not (n or {}).get("parent")]
        current = roots[0] if roots else None
        while current is not None and (mapping[current].get("children") or []):
            child = mapping[current]["children"][-1]
            current = child if child in mapping else None
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    while isinstance(current, str) and current in mapping and current not in seen:
        seen.add(current)
        path.append(mapping[current])
        current = mapping[current].get("parent")
    return path[::-1]


def _exchanges(conversation: dict[str, Any]) -> tuple[list[_Exchange], int]:
    """The conversation's answered exchanges, and how many user messages went unanswered."""
    mapping = conversation.get("mapping")
    if not isinstance(mapping, dict):
        raise InvalidArgument("no 'mapping' object")
    exchanges: list[_Exchange] = []
    for node in _branch(mapping, conversation.get("current_node")):
        message = node.get("message") if isinstance(node, dict) else None
        if not isinstance(message, dict):
            continue
        role = (message.get("author") or {}).get("role")
        text = _text(message)
        if role not in _KEPT_ROLES or not text:
            continue
        if role == "user":
            at = message.get("create_time")
            at = float(at) if isinstance(at, int | float) else None
            exchanges.append(_Exchange(text, at, message.get("id")))
        elif exchanges:
            exchanges[-1].answers.append(text)
    answered = [e for e in exchanges if e.answers]
    return answered, len(exchanges) - len(answered)


def _load(path: Path) -> list[Any]:
    try:
        doc = json.loads(path.read_bytes())
    except OSError as e:
        raise InvalidArgument(f"cannot read {path}: {e.strerror}") from e
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InvalidArgument(f"{path} is not valid JSON: {e}; nothing was imported") from e
    if isinstance(doc, dict):
        doc = [doc]
    if not isinstance(doc, list):
        raise InvalidArgument(f"{path}: expected a list of conversations")
    return doc


def _record(conv: dict[str, Any], ex: _Exchange, place: str) -> Record:
    fallback = conv.get("create_time")
    at = ex.at if ex.at is not None else fallback if isinstance(fallback, int | float) else None
    metadata = {
        "source": "chatgpt",
        "conversation_id": conv.get("conversation_id") or conv.get("id"),
        "title": conv.get("title"),
        "message_id": ex.message_id,
    }
    answer = "\n".join(ex.answers)
    content = f"User: {ex.user}\nAssistant: {answer}"
    trace = NewTrace(content, tags=["chatgpt"], metadata=metadata, occurred_at=at)
    columns = {"created_at": float(at), "updated_at": float(at)} if at is not None else {}
    return Record(trace, place, columns, exchange=(ex.user, answer))


def import_chatgpt(
    brain: Brain,
    path: Path,
    *,
    dedup: bool = True,
    progress: Progress | None = None,
    owner: Owner = None,
    extract: Extract | None = None,
) -> ImportResult:
    """Import a ChatGPT data export's ``conversations.json``; with ``extract``, each
    exchange's facts too (mined from what the user said, as the ingest does)."""
    conversations = _load(path)
    writer = TraceWriter(brain, dedup=dedup, progress=progress, owner=owner, extract=extract)
    for i, conv in enumerate(conversations):
        place = f"conversations[{i}]"
        if not isinstance(conv, dict):
            writer.result.error(f"{place}: not an object")
            continue
        try:
            exchanges, unanswered = _exchanges(conv)
        except (InvalidArgument, AttributeError, TypeError) as e:
            writer.result.error(f"{place}: {e}")
            continue
        writer.result.skipped += unanswered
        for ex in exchanges:
            writer.add(_record(conv, ex, f"{place} message {ex.message_id}"))
    return writer.finish()
