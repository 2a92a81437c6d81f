"""What every embedder is: a name, a dimension and a batch embed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors, one row per text.

    ``name`` is stored with every vector (``trace_embeddings.model``), so two
    models never mix in one similarity search.  Implementations raise
    :class:`~memory_core.errors.EmbedderError` when they cannot embed.
    """

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Vectors: ...


@runtime_checkable
class QueryEmbedding(Protocol):
    """An embedder that reads a question otherwise than what is stored (E5's "query: "
    and "passage: "): questions asked of memory go through :meth:`embed_queries`."""

    def embed_queries(self, texts: Sequence[str]) -> Vectors: ...
