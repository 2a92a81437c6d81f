"""What a worker process holds: its brain, extractor and embedder, made lazily.

Nothing is opened at import or declaration time: the API process declares the
actors only to send messages and never opens an embedding model.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from typing import TYPE_CHECKING, Any

from memory_core.db import Brain, open_brain
from memory_core.embedders import make_embedder
from memory_core.embedders.base import Embedder
from memory_core.errors import ReverieError
from memory_core.extraction import make_extract
from memory_core.extraction.base import Extraction
from memory_core.ingest import IngestReport
from memory_core.metrics import get_metrics
from memory_core.search import DEFAULT_EMBEDDER
from memory_core.settings import Settings

if TYPE_CHECKING:
    from memory_core.consolidation.dream import DreamReport

log = logging.getLogger(__name__)


class Runtime:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._brain: Brain | None = None
        self._embedder: Embedder | None = None
        self._embedder_made = False
        self._extract: Any = None
        self.stats: Counter[str] = Counter()

    def brain(self) -> Brain:
        if self._brain is None:
            with self._lock:
                if self._brain is None:
                    self._brain = open_brain(self.settings)
        return self._brain

    def embedder(self) -> Embedder | None:
        if not self._embedder_made:
            with self._lock:
                if not self._embedder_made:
                    self._embedder = make_embedder(self.settings)
                    self._embedder_made = True
        return self._embedder

    def search_embedder(self) -> Any:
        """What this process's searches embed their queries with: the embedder its
        jobs use (one model per process), or, when it cannot be made, the settings'
        default, which answers from BM25 alone and says why."""
        try:
            return self.embedder()
        except ReverieError as e:
            log.warning("searches embed nothing: %s", e)
            return DEFAULT_EMBEDDER

    def extract(self, user: str, assistant: str) -> Extraction:
        if self._extract is None:
            with self._lock:
                if self._extract is None:
                    self._extract = make_extract(self.settings)
        result: Extraction = self._extract(user, assistant)
        return result

    def observe_ingest(self, report: IngestReport) -> None:
        """Count what an ingest job did (fallbacks and LLM failures included)."""
        with self._lock:
            self.stats["turns_ingested"] += len(report.ingested)
            self.stats["duplicates_skipped"] += report.duplicates_skipped
            for category, n in report.facts_by_category.items():
                self.stats[f"facts_{category}"] += n
            for extraction in report.extractions:
                self.stats["llm_tokens"] += extraction.tokens
                if getattr(extraction, "fell_back", False):
                    self.stats["extractor_fallbacks"] += 1
                    self.stats["llm_failures"] += 1
        if self.settings.metrics_enabled:
            get_metrics().observe_ingest(report)

    def observe_embed(self, stored: int) -> None:
        """Count the vectors an embed job stored."""
        with self._lock:
            self.stats["embeddings_computed"] += stored
        if self.settings.metrics_enabled:
            get_metrics().embeddings_computed.inc(stored)

    def observe_dream(self, report: DreamReport) -> None:
        """Count a pass by its outcome, steps and durations."""
        with self._lock:
            self.stats[f"dream_{report.status}"] += 1
        if self.settings.metrics_enabled:
            get_metrics().observe_dream(report)
