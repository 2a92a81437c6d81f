"""A process's runtime loads its embedding model ahead of the first job or search."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import pytest

import memory_core as mc
from memory_core.embedders.base import Vectors
from memory_core.errors import EmbedderError
from memory_core.runtime import Runtime


class Recording:
    name = "recording"
    dim = 3

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.fail = fail

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        if self.fail:
            raise EmbedderError("the model file is missing")
        return np.ones((len(texts), self.dim), dtype=np.float32)


def _runtime(settings: mc.Settings, embedder: Recording) -> Runtime:
    runtime = Runtime.open(settings)
    runtime._embedder, runtime._embedder_made = embedder, True  # type: ignore[assignment]
    return runtime


def test_warming_up_embeds_once_in_the_background(settings: mc.Settings) -> None:
    embedder = Recording()
    runtime = _runtime(settings, embedder)
    try:
        thread = runtime.warm_up()
        thread.join(10)
        assert not thread.is_alive() and thread.daemon
        assert embedder.calls == [["warm-up"]]
    finally:
        runtime.close()


def test_a_model_that_will_not_load_is_only_logged(
    settings: mc.Settings, caplog: pytest.LogCaptureFixture
) -> None:
    runtime = _runtime(settings, Recording(fail=True))
    try:
        with caplog.at_level(logging.WARNING, logger="memory_core.runtime"):
            runtime.warm_up().join(10)
        assert "could not be loaded ahead" in caplog.text
    finally:
        runtime.close()
