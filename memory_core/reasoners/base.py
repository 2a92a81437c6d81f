"""What a reasoner is: something that reads a system prompt and an input and answers
text, within a deadline.

Reverie asks a reasoner to read what its offline code reads less well: the facts of
a turn, whether two memories state one fact, whether a later statement replaces an
earlier one, the digest of a cluster.  The prompts and the checking of answers live
with the callers (:mod:`memory_core.extraction.llm`); a reasoner only carries the
question and brings the answer back, the same way whatever answers it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from memory_core.reasoners.breaker import Breaker


@dataclass(frozen=True)
class Answer:
    """What a reasoner answered: its text, and the tokens it reports using (0: unknown)."""

    text: str
    tokens: int = 0


@runtime_checkable
class Reasoner(Protocol):
    """Answers a system prompt and an input with text, or raises
    :class:`~memory_core.errors.ReasonerError` (:class:`~memory_core.errors.BreakerOpen`
    when its breaker refuses the call) -- never later than ``timeout_s`` after it was
    asked, whatever the other side does.

    ``kind`` and ``model`` name what answers (``chat``/``gpt-4o-mini``,
    ``host``/``claude``): judgements cached under one never answer for another.
    """

    kind: str
    model: str
    timeout_s: float
    breaker: Breaker | None

    def ask(self, system: str, prompt: str) -> Answer:
        """The answer to ``prompt`` under the instructions ``system``."""
        ...

    def close(self) -> None:
        """Release what the reasoner holds (connections)."""
        ...


def nonnegative(value: object) -> int:
    """A token count a reasoner reported, or 0 when it is not a count."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return 0
    return value
