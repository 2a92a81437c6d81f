"""What a fact extractor is, and the facts it returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

CATEGORIES = (
    "user_preference",
    "episodic",
    "goal",
    "knowledge",
    "correction",
    "emotional_context",
    "action_item",
)
BASE_CATEGORIES = CATEGORIES[:5]


@dataclass(frozen=True)
class Fact:
    """One fact worth keeping from a turn."""

    content: str
    category: str
    importance: float
    entities: list[str] = field(default_factory=list)
    # Which attribute of a person it states (one of language.reading.ATTRIBUTES),
    # when the extractor read one.
    attribute: str | None = None
    # The user asked for it to be kept ("Please remember that ..."): it is stored at
    # or above the protect importance and tagged to keep.
    keep: bool = False


@dataclass(frozen=True)
class Extraction:
    """What an extractor answered: its facts, who made them, tokens spent."""

    facts: list[Fact]
    extractor: str
    tokens: int = 0


@runtime_checkable
class Extractor(Protocol):
    """Reads one user/assistant exchange and returns candidate facts.

    Implementations raise :class:`~memory_core.errors.ExtractionError` when
    they fail; the caller falls back to the offline extractor.
    """

    name: str

    def extract(self, user: str, assistant: str, *, when: float | None = None) -> Extraction:
        """The exchange's facts; ``when`` (epoch seconds) is when it was said, against
        which relative times ("yesterday", "next Friday") are resolved."""
        ...
