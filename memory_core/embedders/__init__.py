"""Embedders, chosen by name: ``minilm`` (local ONNX), ``e5`` (local, multilingual),
``openai``, ``stub``, ``none``.

Each provider's module is imported only when it is chosen, so choosing the
stub or a remote endpoint never imports onnxruntime, and nothing here does
work at import time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_core.embedders.base import Embedder, QueryEmbedding, Vectors
from memory_core.errors import ConfigError

if TYPE_CHECKING:
    from memory_core.settings import Settings

__all__ = ["EMBEDDER_NAMES", "Embedder", "QueryEmbedding", "Vectors", "make_embedder"]

EMBEDDER_NAMES = ("minilm", "e5", "openai", "stub", "none")


def make_embedder(settings: Settings) -> Embedder | None:
    """The embedder ``settings.embedder`` names, or None for ``none``.

    Cheap: a model is loaded, or an endpoint contacted, only on first embed.
    """
    choice = settings.embedder
    if choice == "none":
        return None
    if choice == "stub":
        from memory_core.embedders.stub import StubEmbedder

        return StubEmbedder()
    if choice == "minilm":
        from memory_core.embedders.minilm import MiniLMEmbedder

        return MiniLMEmbedder.from_settings(settings)
    if choice == "e5":
        from memory_core.embedders.e5 import E5Embedder

        return E5Embedder.from_settings(settings)
    if choice == "openai":
        from memory_core.embedders.openai import OpenAIEmbedder

        return OpenAIEmbedder.from_settings(settings)
    raise ConfigError(f"unknown embedder {choice!r}; choose one of {', '.join(EMBEDDER_NAMES)}")
