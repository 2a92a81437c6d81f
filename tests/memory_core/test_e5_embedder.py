"""The multilingual embedder (``REVERIE_EMBEDDER=e5``): the real model of the pinned
package, one space for every language, questions read as questions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.embedders import Embedder, QueryEmbedding, make_embedder
from memory_core.embedders.e5 import E5Embedder
from memory_core.embeddings import embed_missing
from memory_core.retrieval.query_embedding import query_embedder_for

# Ten turns in four languages; each question below has one answer among them.
TURNS = [
    "Ich trinke keinen Kaffee, nur grünen Tee.",
    "Im August machen wir Urlaub in Spanien.",
    "Mein Hund heißt Bruno.",
    "Soy alérgico a las nueces.",
    "Mi hermana vive en Valencia.",
    "我的女儿叫小梅。",
    "周末我喜欢去爬长城。",
    "私の猫の名前はタマです。",
    "I work as a nurse at the city hospital.",
    "My car broke down on the motorway last week.",
]


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    return E5Embedder(threads=2)


def test_the_registry_builds_it_and_loads_nothing_until_asked(tmp_path: Path) -> None:
    embedder = make_embedder(
        mc.load_settings(brain_url=f"sqlite:///{tmp_path}/b.db", embedder="e5")
    )
    assert isinstance(embedder, E5Embedder) and isinstance(embedder, Embedder)
    assert isinstance(embedder, QueryEmbedding)
    assert (embedder.name, embedder.dim) == ("multilingual-e5-small-q4", 384)
    assert embedder._model is None


def test_rows_are_normalised_in_input_order_and_questions_read_apart(e5: E5Embedder) -> None:
    v = e5.embed(TURNS[:3])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert np.allclose(e5.embed([TURNS[1]])[0], v[1], atol=1e-4)
    assert e5.embed([]).shape == (0, 384)
    asked = e5.embed_queries([TURNS[0]])[0]
    assert not np.allclose(asked, v[0], atol=1e-3)  # "query: " is not "passage: "
    with pytest.raises(TypeError):
        e5.embed("one string")


def test_a_question_finds_its_answer_in_another_language(tmp_path: Path, e5: E5Embedder) -> None:
    settings = mc.load_settings(
        brain_url=f"sqlite:///{tmp_path}/b.sqlite", data_dir=tmp_path / "data", embedder="e5"
    )
    brain = mc.open_brain(settings)
    ids = {text: mc.add_trace(brain, text, identity=SYSTEM) for text in TURNS}
    assert embed_missing(brain, e5) == len(TURNS)
    searcher = query_embedder_for(settings, e5)
    for question, answer in (
        ("does Bob drink coffee", "Ich trinke keinen Kaffee, nur grünen Tee."),
        ("vacation plans", "Im August machen wir Urlaub in Spanien."),
        ("alergia", "Soy alérgico a las nueces."),
    ):
        hits = mc.search(brain, question, embedder=searcher, identity=SYSTEM).results
        assert hits and hits[0].trace.id == ids[answer], (question, hits[0].trace.content)


def test_vectors_are_centred_so_unrelated_texts_meet_near_nothing(e5: E5Embedder) -> None:
    """The model's own vectors crowd in a cone (unrelated sentences near 0.8); taken
    from the shipped centre, unrelated ones meet near 0 and a paraphrase stays close."""
    raw = E5Embedder(centred=False)
    texts = [
        "My car broke down on the motorway.",
        "Mein Hund heißt Bruno.",
        "我的车在高速公路上坏了。",
    ]
    before, after = raw.embed(texts), e5.embed(texts)
    assert before[0] @ before[1] > 0.7
    assert after[0] @ after[1] < 0.2
    # The same news in Chinese stands out from the unrelated: the gap widens.
    gap_before = before[0] @ before[2] - before[0] @ before[1]
    gap_after = after[0] @ after[2] - after[0] @ after[1]
    assert gap_after > 0.2 and gap_after > 3 * gap_before


def test_the_nearest_of_ten_turns_in_four_languages(e5: E5Embedder) -> None:
    stored = e5.embed(TURNS)
    for question, answer in (
        ("what is my cat called", "私の猫の名前はタマです。"),
        ("does Bob drink coffee", "Ich trinke keinen Kaffee, nur grünen Tee."),
        ("where does my sister live", "Mi hermana vive en Valencia."),
    ):
        closest = stored @ e5.embed_queries([question])[0]
        assert TURNS[int(np.argmax(closest))] == answer, question
