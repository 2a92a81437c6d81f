"""What every dream-pass step shares: the pass context and the step result.

A step is a pair of functions: ``plan(ctx)`` reads the brain and decides,
``apply(ctx, plan)`` writes the decision in one transaction (so a step never
half-applies).  A dry run calls only ``plan``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import text

from memory_core.brain.db import Brain
from memory_core.consolidation.verify import WordSimilarity
from memory_core.embedders.base import Embedder
from memory_core.errors import EmbedderError
from memory_core.reasoners import chosen
from memory_core.settings import Settings

if TYPE_CHECKING:
    from memory_core.consolidation.judge import PassJudge


@dataclass
class StepResult:
    """What one step did (or, in a dry run, would do)."""

    name: str
    counts: dict[str, int] = field(default_factory=dict)
    items: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    proposals: list[str] = field(default_factory=list)
    duration_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "counts": self.counts,
            "items": self.items,
            "notes": self.notes,
            "proposals": self.proposals,
            "duration_s": round(self.duration_s, 3),
        }


@dataclass
class Vectors:
    """The brain's vectors for one model, with each trace's scope key and age."""

    ids: list[str]
    matrix: npt.NDArray[np.float32]
    groups: list[tuple[str, str | None]]
    created_at: npt.NDArray[np.float64]
    turns: npt.NDArray[np.bool_]  # verbatim turns (tagged ``turn``)

    def index(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.ids)}


class EmbeddingWordSimilarity:
    """Cosine of two words' embeddings, each word embedded once; None if the embedder fails."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._vectors: dict[str, npt.NDArray[np.float32] | None] = {}

    def _vector(self, word: str) -> npt.NDArray[np.float32] | None:
        if word not in self._vectors:
            try:
                self._vectors[word] = self._embedder.embed([word])[0]
            except EmbedderError:
                self._vectors[word] = None
        return self._vectors[word]

    def __call__(self, a: str, b: str) -> float | None:
        va, vb = self._vector(a), self._vector(b)
        if va is None or vb is None:
            return None
        return float(va @ vb)


@dataclass
class PassContext:
    """One pass: the brain, its settings, identity, clock and helpers."""

    brain: Brain
    settings: Settings
    pass_id: str
    dry_run: bool
    embedder: Embedder | None
    now: float = field(default_factory=time.time)
    last_pass_at: float | None = None
    renew: Callable[[], None] = lambda: None
    on_step: Callable[[str], None] | None = None  # told each step's name as it finishes

    @cached_property
    def vectors(self) -> Vectors | None:
        """Active traces' vectors of the configured model (None without any)."""
        if self.embedder is None:
            return None
        from memory_core.embeddings import load_vectors

        ids, matrix = load_vectors(self.brain, self.embedder.name)
        if not ids:
            return None
        meta: dict[str, tuple[str, str | None, float, bool]] = {}
        with self.brain.read() as conn:
            for tid, scope, scope_id, created, turn in conn.execute(
                text(
                    "SELECT id, scope, scope_id, created_at, EXISTS (SELECT 1 FROM json_each(tags) "
                    "WHERE value = 'turn') FROM memory_traces WHERE deleted = 0"
                )
            ):
                meta[tid] = (scope, scope_id, created, bool(turn))
        keep = [i for i, t in enumerate(ids) if t in meta]
        ids = [ids[i] for i in keep]
        return Vectors(
            ids=ids,
            matrix=matrix[keep],
            groups=[(meta[t][0], meta[t][1]) for t in ids],
            created_at=np.array([meta[t][2] for t in ids], dtype=np.float64),
            turns=np.array([meta[t][3] for t in ids], dtype=np.bool_),
        )

    @property
    def embedder_name(self) -> str | None:
        return None if self.embedder is None else self.embedder.name

    @cached_property
    def word_similarity(self) -> WordSimilarity | None:
        """Word-to-word similarity from the embedder, for the merge verifier's synonyms."""
        return None if self.embedder is None else EmbeddingWordSimilarity(self.embedder)

    @property
    def reasoner(self) -> str:
        """The reasoner the pass's judgements ask: ``chat``, ``host`` or ``offline``."""
        return chosen(self.settings)

    @cached_property
    def judge(self) -> PassJudge | None:
        """The configured reasoner's second opinion, cached and bounded
        (:mod:`.judge`); None when there is no reasoner, and in a dry run, which asks
        nothing outside."""
        if self.reasoner == "offline" or self.dry_run:
            return None
        from memory_core.consolidation.judge import PassJudge

        return PassJudge.from_settings(self.brain, self.settings, self.now)

    def spent(self) -> dict[str, Any] | None:
        """What the judge spent in this pass, if it was made."""
        judge = self.__dict__.get("judge")
        return None if judge is None else judge.spend.to_dict()

    def close(self) -> None:
        """Release what the pass opened (the reasoner, if the judge was made)."""
        judge = self.__dict__.get("judge")
        if judge is not None:
            judge.close()

    def forget_vectors(self) -> None:
        """Drop the cached vectors after a step deleted traces."""
        self.__dict__.pop("vectors", None)

    def is_new(self, created_at: float) -> bool:
        return self.last_pass_at is None or created_at >= self.last_pass_at
