"""What a statement says is embedded once: the vectors supersession compares.

A one-sentence message and the fact taken from it say the same words, and a
memory written as is says its whole content, whose vector the embed job has just
stored; neither costs the model a second pass over the same text.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sqlalchemy import text

import memory_core as mc
from memory_core import embeddings, inbox, ingest
from memory_core.auth import SYSTEM
from memory_core.embedders.base import Vectors
from memory_core.embedders.stub import StubEmbedder
from memory_core.extraction.base import Extraction, Fact
from memory_core.supersession import semantic


class Recording(StubEmbedder):
    """A stub embedder that keeps the texts of every call."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.batches.append(list(texts))
        return super().embed(texts)


def _said_vectors(brain: mc.Brain) -> list[np.ndarray]:
    """The vectors kept of what the user said in turns."""
    with brain.read() as conn:
        blobs = conn.execute(text("SELECT vector FROM said_embeddings")).scalars()
        return [embeddings.from_blob(b) for b in blobs]


def test_each_text_a_statement_says_is_embedded_once(brain: mc.Brain) -> None:
    def extract(user: str, assistant: str, *, when: float | None = None) -> Extraction:
        return Extraction([Fact(f"User: {user}", "fact", 0.8, [])], "fake")

    said = "I moved to Leeds in May."
    accepted = inbox.accept_turn(
        brain,
        inbox.Turn(user=said, assistant="Congratulations!", scope="user", scope_id="ana"),
        identity=SYSTEM,
    )
    report = ingest.ingest_turns(brain, [accepted.turn_id], extract)
    [memory] = mc.add_traces(
        brain,
        [mc.NewTrace("Ana now works night shifts at the depot.", scope_id="ana")],
        identity=SYSTEM,
    )
    trace_ids = [*report.new_trace_ids, memory]
    assert len(trace_ids) == 3  # the turn, its fact, the memory

    embedder = Recording()
    brain.state(semantic.Examples).of(embedder)  # the examples' vectors, made once
    embeddings.embed_traces(brain, embedder, trace_ids)
    embedder.batches.clear()
    semantic.follow(brain, embedder, trace_ids)

    # The turn's user part and its fact say the same sentence: one text, embedded once;
    # the memory is its whole content, whose stored vector serves.
    assert embedder.batches == [[said]]
    [kept] = _said_vectors(brain)  # the turn's
    assert np.allclose(kept, StubEmbedder().embed([said])[0])


def test_a_memory_edited_since_its_vector_was_made_is_embedded_afresh(brain: mc.Brain) -> None:
    [memory] = mc.add_traces(
        brain, [mc.NewTrace("Ana drinks three coffees a day.", scope_id="ana")], identity=SYSTEM
    )
    embedder = Recording()
    brain.state(semantic.Examples).of(embedder)
    embeddings.embed_traces(brain, embedder, [memory])
    # The words change after the vector was stored, and the next vector is not made yet.
    mc.update_trace(brain, memory, content="Ana drinks one coffee a day now.", identity=SYSTEM)
    embedder.batches.clear()
    semantic.follow(brain, embedder, [memory])
    assert embedder.batches == [["Ana drinks one coffee a day now."]]
