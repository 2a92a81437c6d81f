"""Scripts written without spaces are found by their words: a run of Chinese,
Japanese or Korean is indexed, and asked, as its pairs of characters, on SQLite and
on PostgreSQL alike."""

from __future__ import annotations

import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.brain.maintenance import doctor
from memory_core.language.scripts import segmented
from memory_core.textutil import content_words

TEXTS = [
    "我对花生过敏。",
    "周末我喜欢去爬长城",
    "私は東京に行きたいです",
    "저는 서울에 살아요",
    "Soy alérgico a las nueces.",
    "I moved to Lisbon last month.",
]


def _lexical_first(brain: mc.Brain, query: str) -> str:
    response = mc.search(brain, query, embedder=None, identity=SYSTEM)
    top = response.results[0]
    assert "bm25" in top.channels
    return top.trace.content


def test_a_run_is_cut_into_its_pairs_of_characters() -> None:
    assert segmented("我对花生过敏。") == " 我对 对花 花生 生过 过敏 。"
    assert segmented("abc東京def") == "abc 東京 def"
    assert segmented("去 A 国") == " 去  A  国 "
    assert segmented("no such script, é and ü kept") == "no such script, é and ü kept"
    assert segmented(None) is None
    assert content_words("过敏") == ["过敏"]
    assert content_words("我对什么过敏？") == ["我对", "对什", "什么", "么过", "过敏"]


def test_words_inside_a_run_are_found_by_the_lexical_channel(brain: mc.Brain) -> None:
    mc.add_traces(brain, [mc.NewTrace(t) for t in TEXTS], identity=SYSTEM)
    assert _lexical_first(brain, "过敏") == "我对花生过敏。"
    assert _lexical_first(brain, "我对什么过敏？") == "我对花生过敏。"
    assert _lexical_first(brain, "长城") == "周末我喜欢去爬长城"
    assert _lexical_first(brain, "東京") == "私は東京に行きたいです"
    assert _lexical_first(brain, "東京に行きたい") == "私は東京に行きたいです"
    assert _lexical_first(brain, "서울") == "저는 서울에 살아요"
    assert _lexical_first(brain, "Lisbon") == "I moved to Lisbon last month."


def test_the_index_follows_edits_deletions_and_contexts(brain: mc.Brain) -> None:
    first, second, third = (
        mc.add_trace(brain, text, stream="c", identity=SYSTEM)
        for text in ("我对花生过敏。", "那你要小心一点。", "谢谢你的提醒")
    )
    mc.update_trace(brain, first, content="我对猫过敏。", identity=SYSTEM)
    mc.delete_trace(brain, second, identity=SYSTEM)
    assert not [p for p in doctor(brain) if p.check == "fts"]
    assert not mc.search(brain, "花生", embedder=None, identity=SYSTEM).results
    assert not mc.search(brain, "小心", embedder=None, identity=SYSTEM).results
    # The turn after the deleted one is indexed with the turn before it as its context:
    # found below the edited turn that says it.
    found = [h.trace.id for h in mc.search(brain, "猫过敏", embedder=None, identity=SYSTEM).results]
    assert found == [first, third]


@pytest.mark.parametrize("brain_url", ["postgresql"], indirect=True)
def test_postgresql_cuts_as_the_package_does(brain: mc.Brain) -> None:
    samples = [
        *TEXTS,
        "",
        "a",
        "国",
        "去 A 国",
        "東京タワーは333メートル、ソウルは서울。\n新しい行",
        "𠀀𠀁 ext B, and ｶﾀｶﾅ half-width",
        "mixed東京mixed 北京",
    ]
    with brain.read() as conn:
        for sample in samples:
            cut = conn.execute(text("SELECT reverie_segmented(:t)"), {"t": sample}).scalar()
            assert cut == segmented(sample), sample
