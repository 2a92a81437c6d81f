"""What a posted turn becomes: its episode's words, and a trace for each of its facts.

The episode holds the exchange verbatim, one speaker a paragraph ("User (Ana):
...", "Assistant: ..."); a fact is labelled with who said it ("Ana: ...") and
becomes a trace of the kind its category names, citing its turn and episode.
"""

from __future__ import annotations

from typing import Any

from memory_core.extraction.base import Fact
from memory_core.traces.model import FACT_TAG, KEEP_TAG, NewTrace, check_content

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


def attributed(content: str, speaker: str | None) -> str:
    """A fact's words labelled with who said them: "User: ..." becomes "Ana: ..." when
    the turn names its user."""
    if speaker and content.startswith("User: "):
        said = content.removeprefix("User: ")
        # A turn whose text opens with its speaker's name ("Jon: I'm reading ...") is
        # labelled once, not "Jon: Jon: ...".
        return f"{speaker}: {said.removeprefix(f'{speaker}: ')}"
    return content


def turn_stream(scope: str, scope_id: str | None, conversation_id: str | None) -> str:
    """The stream of a conversation's turns: scope, scope id and conversation id."""
    stream = f"{scope}:{scope_id or ''}"
    return f"{stream}:{conversation_id}" if conversation_id else stream


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


def _tags(fact: Fact) -> list[str]:
    """A fact's category and mark; "keep" too when the user asked for it to be kept."""
    return [fact.category, FACT_TAG, *([KEEP_TAG] if fact.keep else [])]


def _read(fact: Fact) -> dict[str, Any]:
    """What the extractor read of a fact, for its metadata."""
    read: dict[str, Any] = {"category": fact.category, "entities": fact.entities}
    if fact.attribute is not None:
        read["attribute"] = fact.attribute
    return read


def fact_trace(
    fact: Fact,
    scope: str,
    scope_id: str,
    turn_id: str,
    episode_id: str,
    occurred: float,
    meta: dict[str, Any],
) -> NewTrace:
    content = attributed(fact.content, meta.get("speaker"))
    check_content(content, "fact content")
    return NewTrace(
        content=content,
        type=CATEGORY_TYPES.get(fact.category, "semantic"),
        scope=scope,
        scope_id=scope_id,
        tags=_tags(fact),
        importance=min(max(fact.importance, 0.0), 1.0),
        metadata={**meta, **_read(fact)},
        sources=[{"turn": turn_id}, {"trace": episode_id}],
        occurred_at=occurred,
    )


def imported_fact(fact: Fact, episode: NewTrace, episode_id: str) -> NewTrace:
    """A fact mined from an imported exchange: its episode's scope, time and origin."""
    check_content(fact.content, "fact content")
    origin = {k: v for k, v in episode.metadata.items() if k in ("source", "conversation_id")}
    return NewTrace(
        content=fact.content,
        type=CATEGORY_TYPES.get(fact.category, "semantic"),
        scope=episode.scope,
        scope_id=episode.scope_id,
        tags=_tags(fact),
        importance=min(max(fact.importance, 0.0), 1.0),
        metadata={**origin, **_read(fact)},
        sources=[{"trace": episode_id}],
        occurred_at=episode.occurred_at,
    )
