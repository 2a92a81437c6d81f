"""Reasoners, chosen by name: ``chat`` (an OpenAI-compatible endpoint), ``host`` (the
host agent's own command line), or none (``offline``: the offline readings alone).

``REVERIE_REASONER=auto`` (the default) is ``chat`` when ``llm_base_url`` is set and
offline otherwise.  Extraction, the dream pass's judgements and its insight digests
all ask the one chosen.  Each provider's module is imported only when it is chosen
(httpx for ``chat``), and nothing here does work at import time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_core.errors import ConfigError
from memory_core.reasoners.base import Answer, Reasoner
from memory_core.reasoners.breaker import Breaker

if TYPE_CHECKING:
    from memory_core.settings import Settings

__all__ = ["REASONER_NAMES", "Answer", "Breaker", "Reasoner", "chosen", "make_reasoner"]

REASONER_NAMES = ("auto", "chat", "host", "offline")


def chosen(settings: Settings) -> str:
    """The reasoner ``settings`` choose: ``chat``, ``host`` or ``offline``."""
    if settings.reasoner == "auto":
        return "chat" if settings.llm_base_url else "offline"
    return settings.reasoner


def make_reasoner(settings: Settings) -> Reasoner | None:
    """The reasoner ``settings`` choose, or None for ``offline``.  Cheap: nothing is
    contacted or run before the first question."""
    choice = chosen(settings)
    if choice == "offline":
        return None
    if choice == "chat":
        from memory_core.reasoners.chat import ChatReasoner

        return ChatReasoner.from_settings(settings)
    if choice == "host":
        from memory_core.reasoners.host import HostReasoner

        return HostReasoner.from_settings(settings)
    raise ConfigError(f"unknown reasoner {choice!r}; choose one of {', '.join(REASONER_NAMES)}")
