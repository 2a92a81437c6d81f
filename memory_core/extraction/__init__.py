"""Fact extraction: pick the extractor, run it with a fallback, filter by personality.

The ingest worker calls :func:`extract_facts` once per turn.  A failing LLM
never loses a turn: its :class:`~memory_core.errors.ExtractionError` is logged
and the offline extractor answers instead, and the outcome records that it
did and why, for the metrics.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

from memory_core.errors import BreakerOpen, ExtractionError
from memory_core.extraction.base import (
    BASE_CATEGORIES,
    CATEGORIES,
    Extraction,
    Extractor,
    Fact,
)
from memory_core.extraction.offline import OfflineExtractor
from memory_core.extraction.personality import (
    HexacoTraits,
    MemoryConfig,
    config_from_settings,
    derive_memory_config,
    filter_facts,
)
from memory_core.reasoners import chosen
from memory_core.settings import Settings

log = logging.getLogger(__name__)

__all__ = [
    "BASE_CATEGORIES",
    "CATEGORIES",
    "ExtractTurn",
    "Extraction",
    "ExtractionOutcome",
    "Extractor",
    "Fact",
    "HexacoTraits",
    "MemoryConfig",
    "OfflineExtractor",
    "config_from_settings",
    "derive_memory_config",
    "extract_facts",
    "filter_facts",
    "make_extract",
    "make_extractor",
    "offline_extract",
]


@dataclass(frozen=True)
class ExtractionOutcome(Extraction):
    """What one turn's extraction kept, and how it got there.

    An :class:`Extraction` whose ``facts`` are filtered (boosted importance,
    most important first) and whose ``extractor`` names the one that answered.
    ``candidates`` counts its facts before filtering.  ``fell_back`` is true
    when the primary extractor failed, with ``primary_error`` saying why;
    ``tokens`` are those the answering extractor reported (a failed call's are
    unknown).
    """

    candidates: int = 0
    fell_back: bool = False
    primary_error: str | None = None
    # The primary extractor was not asked: its breaker is open (not a failed call).
    skipped: bool = False
    # The primary extractor's breaker is open after this turn (None: it has none).
    breaker_open: bool | None = None


def make_extractor(settings: Settings) -> Extractor:
    """An extractor asking the reasoner ``settings`` choose (``REVERIE_REASONER``: the
    chat endpoint, the host agent's command line), the offline one when none is."""
    if chosen(settings) != "offline":
        from memory_core.extraction.llm import LLMExtractor  # httpx loads only when used

        return LLMExtractor.from_settings(settings)
    return OfflineExtractor()


class ExtractTurn(Protocol):
    """What the ingest calls for a turn: its facts, kept and filtered."""

    def __call__(
        self, user: str, assistant: str, *, when: float | None = None
    ) -> ExtractionOutcome: ...


def make_extract(settings: Settings, *, offline: bool = False) -> ExtractTurn:
    """``extract(user, assistant, when=)`` for the ingest: the configured extractor (the
    offline one when ``offline``), the offline fallback and the personality filter, all
    built once from ``settings``."""
    extractor = OfflineExtractor() if offline else make_extractor(settings)
    fallback = OfflineExtractor()
    config = config_from_settings(settings)

    def extract(user: str, assistant: str, *, when: float | None = None) -> ExtractionOutcome:
        return extract_facts(extractor, fallback, user, assistant, config, when=when)

    return extract


def offline_extract(settings: Settings) -> ExtractTurn:
    """The offline extractor alone, filtered as :func:`make_extract`'s: what a turn is
    extracted with when the facts its LLM answered cannot be stored."""
    return make_extract(settings, offline=True)


def extract_facts(
    extractor: Extractor,
    fallback: Extractor,
    user: str,
    assistant: str,
    config: MemoryConfig,
    *,
    when: float | None = None,
) -> ExtractionOutcome:
    """Extract a turn's facts with ``extractor``, or ``fallback`` if it fails, and filter them.

    Only :class:`ExtractionError` triggers the fallback: extractors wrap their
    own failures in it, so anything else is a bug and propagates.  Should the
    fallback fail too, the turn keeps no facts (its verbatim trace is stored
    by the caller regardless).
    """
    primary_error: str | None = None
    skipped = False
    try:
        extraction = extractor.extract(user, assistant, when=when)
    except ExtractionError as e:
        primary_error = str(e)
        skipped = isinstance(e, BreakerOpen)
        log.warning("%s extractor failed, falling back to %s: %s", extractor.name, fallback.name, e)
        extraction = _run_fallback(fallback, extractor, user, assistant, when)
    return ExtractionOutcome(
        facts=filter_facts(extraction.facts, config),
        candidates=len(extraction.facts),
        extractor=extraction.extractor,
        tokens=extraction.tokens,
        fell_back=primary_error is not None,
        primary_error=primary_error,
        skipped=skipped,
        breaker_open=_breaker_open(extractor),
    )


def _breaker_open(extractor: Extractor) -> bool | None:
    breaker = getattr(extractor, "breaker", None)
    if breaker is None:
        return None
    from memory_core.reasoners.breaker import CLOSED

    return bool(breaker.state != CLOSED)


def _run_fallback(
    fallback: Extractor, failed: Extractor, user: str, assistant: str, when: float | None
) -> Extraction:
    if fallback is not failed:
        try:
            return fallback.extract(user, assistant, when=when)
        except ExtractionError as e:
            log.error("fallback extractor %s failed too: %s", fallback.name, e)
    return Extraction(facts=[], extractor=fallback.name)
