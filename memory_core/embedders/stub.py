"""A deterministic embedder for tests: a hashed bag of words, no model.

Each lower-cased word adds a fixed pseudo-random unit vector chosen by its
hash, so texts that share words score a higher cosine than texts that do not,
and the same text always gives the same vector, in any process.  A small
component seeded by the whole text keeps texts without words (``""``,
``"?!"``) apart.  It also counts its calls, so a test can tell whether
anything was embedded.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence

import numpy as np

from memory_core.embedders.base import Vectors

_WORD = re.compile(r"\w+")
_WHOLE_TEXT_WEIGHT = 0.1


def _seeded_unit(key: str, dim: int) -> Vectors:
    seed = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "little")
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.float32(np.linalg.norm(v))


class StubEmbedder:
    """Hashed bag-of-words vectors of ``dim`` dimensions (64 by default)."""

    def __init__(self, dim: int = 64, name: str = "stub") -> None:
        if dim < 2:
            raise ValueError("dim must be at least 2")
        self.dim = dim
        self.name = name
        self.calls = 0
        self.texts_embedded = 0
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        with self._lock:
            self.calls += 1
            self.texts_embedded += len(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            v = _WHOLE_TEXT_WEIGHT * _seeded_unit("text:" + text, self.dim)
            for word in _WORD.findall(text.lower()):
                v += _seeded_unit("word:" + word, self.dim)
            out[row] = v / np.linalg.norm(v)
        return out
