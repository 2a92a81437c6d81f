"""Phatic turns: warm generic replies decay as small talk; a turn with content never does.

The word rules decide what the judgement may be asked about; the shipped
judgement (a logistic regression over MiniLM vectors) decides, on the real
model, through the real turn path and passes on a moving clock.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import text

import memory_core as mc
from memory_core import inbox, ingest, proposals
from memory_core.auth import SYSTEM
from memory_core.consolidation.dream import dream
from memory_core.consolidation.phatic import WEIGHTS, PhaticModel, model_for
from memory_core.consolidation.salience import may_be_phatic, salience
from memory_core.embedders import make_embedder
from memory_core.embedders.minilm import MiniLMEmbedder
from memory_core.extraction import make_extract
from memory_core.traces.decay import DAY

T0 = datetime(2026, 5, 4, 18, 0, tzinfo=UTC).timestamp()

# Past the word rules: long, warm and generic, or telling something.
WARM = [
    "Aw, that's so kind. Having people like you cheering me on makes it all feel easier.",
    "Honestly, hearing from you always brightens the day. You have such a calming way "
    "about you, and it never goes unnoticed.",
    "That is what good friends are for. Moments like these remind us what really matters.",
]
CONTENT = [
    "We went camping by the lake last weekend and the kids caught their first fish.",
    "The bakery on the corner does amazing sourdough now, we queued for ages.",
    "How did the interview go? Did they ask about the portfolio?",
]


@pytest.mark.parametrize(
    "text",
    [
        "User: Gina: Thanks, Tomasz. Having friends like you makes every hard week lighter.",
        *(f"User: {t}" for t in WARM + CONTENT),
    ],
)
def test_ordinary_turns_may_be_asked_about(text: str) -> None:
    assert may_be_phatic(text)


@pytest.mark.parametrize(
    "text",
    [
        "User: Thanks!",  # small talk by the word rules already
        "User: Thanks! I lent the ladder to Priya yesterday.",  # a name
        "User: Your support means a lot, see you on the 14th.",  # a number
        "User: Your support means a lot, I'll call the doctor.",  # durable cues
        "User: Wow. I'm lucky to have people who are always there for me.",  # of oneself
        "User: Sounds lovely.\n\nAssistant: " + "Here is what I found about it: " * 8,
        "",
    ],
)
def test_names_numbers_cues_and_long_replies_are_never_asked_about(text: str) -> None:
    assert not may_be_phatic(text)


def test_an_answer_to_a_question_is_never_asked_about() -> None:
    answer = "User: It's a mix of drama and romance, honestly."
    assert may_be_phatic(answer)
    assert may_be_phatic(answer, "User: Thanks! How's it going?")
    assert not may_be_phatic(answer, "User: Ooh, what genre is the new script?")


def test_thanks_before_what_was_asked_is_not_small_talk() -> None:
    # The genre of a screenplay, told after the thanks: the meaning alone reads it as
    # warm and generic; the statements model, of its words, does not.
    shipped = model_for(MiniLMEmbedder.name)
    assert shipped is not None
    (p,) = shipped.judge(
        ["User: Joanna: Thanks, Nate! It's a mix of drama and romance!"], MiniLMEmbedder().embed
    )
    assert p < shipped.threshold


def test_words_of_thanks_that_tell_something_are_not_small_talk() -> None:
    # Every word is one of thanks and warmth, but it tells how she feels about them.
    told = salience(
        "User: Melanie: Thanks, Caroline. They're a real support. Appreciate them a lot."
    )
    assert not told.smalltalk
    assert salience("User: Melanie: Thanks so much, Caroline!").smalltalk


def test_the_judgement_is_for_the_model_it_was_trained_on(tmp_path: Path) -> None:
    shipped = model_for(MiniLMEmbedder.name)
    assert shipped is not None and 0.0 < shipped.threshold < 1.0
    embed = MiniLMEmbedder().embed
    warm, content = shipped.judge(WARM, embed), shipped.judge(CONTENT, embed)
    assert min(warm) >= shipped.threshold > max(content)
    # A turn is as phatic as its least phatic sentence.
    mixed = WARM[0] + " " + CONTENT[0]
    assert shipped.judge([mixed], embed)[0] <= max(content)
    assert model_for("stub-embedder") is None
    assert model_for(MiniLMEmbedder.name, tmp_path / "missing.json") is None
    other = tmp_path / "other.json"
    other.write_text(PhaticModel("another", np.zeros(3, np.float32), 0.0, 0.5).to_json())
    assert model_for("another", other) is not None
    assert model_for(MiniLMEmbedder.name, other) is None
    assert WEIGHTS.exists()


def _brain(tmp_path: Path, embedder: str) -> tuple[mc.Brain, mc.Settings]:
    settings = mc.load_settings(
        brain_url=f"sqlite:///{tmp_path / 'brain.sqlite'}", data_dir=tmp_path, embedder=embedder
    )
    return mc.open_brain(settings), settings


def _post(brain: mc.Brain, settings: mc.Settings, texts: list[str]) -> dict[str, str]:
    """Each text as a turn through the write path; the episode's id of each."""
    extract = make_extract(settings)
    out = {}
    for k, user in enumerate(texts):
        accepted = inbox.accept_turn(
            brain,
            inbox.Turn(user=user, assistant="", scope="user", scope_id="ana", timestamp=T0),
            now=T0 + k,
            identity=SYSTEM,
        )
        ingest.ingest_turns(brain, [accepted.turn_id], extract, now=T0 + k)
        with brain.read() as conn:
            out[user] = conn.execute(
                text(
                    "SELECT id FROM memory_traces WHERE json_extract(metadata, '$.turn_id') = :t "
                    "AND EXISTS (SELECT 1 FROM json_each(tags) WHERE value = 'turn')"
                ),
                {"t": accepted.turn_id},
            ).scalar_one()
    return out


def _proposed_within(brain: mc.Brain, settings: mc.Settings, days: int) -> set[str]:
    embedder = make_embedder(settings)
    seen: set[str] = set()
    for day in range(1, days + 1):
        dream(brain, settings, embedder=embedder, now=T0 + day * DAY)
        for p in proposals.list_proposals(brain, settings, identity=SYSTEM):
            if p.kind == "prune":
                seen |= set(p.trace_ids)
    return seen


def test_warm_generic_turns_decay_as_small_talk_and_turns_with_content_do_not(
    tmp_path: Path,
) -> None:
    brain, settings = _brain(tmp_path, "minilm")
    ids = _post(brain, settings, WARM + CONTENT)
    proposed = _proposed_within(brain, settings, 30)
    assert {ids[t] for t in WARM} <= proposed
    assert not {ids[t] for t in CONTENT} & proposed
    reasons = [
        p["reason"] for p in proposals.review(brain, settings, kind="prune", identity=SYSTEM)
    ]
    assert any("judged content-free" in r for r in reasons)


def test_without_the_model_a_warm_turn_decays_as_an_ordinary_one(tmp_path: Path) -> None:
    brain, settings = _brain(tmp_path, "stub")
    ids = _post(brain, settings, WARM)
    assert not {ids[t] for t in WARM} & _proposed_within(brain, settings, 30)


def _judgements(brain: mc.Brain) -> dict[str, float]:
    with brain.read() as conn:
        return {
            r.trace_id: r.judged_at
            for r in conn.execute(text("SELECT trace_id, judged_at FROM trace_judgements"))
        }


def test_each_turn_is_judged_once_until_its_text_changes_and_a_dry_run_keeps_nothing(
    tmp_path: Path,
) -> None:
    brain, settings = _brain(tmp_path, "minilm")
    ids = _post(brain, settings, WARM[:2])
    embedder = make_embedder(settings)
    dream(brain, settings, embedder=embedder, dry_run=True, now=T0 + 20 * DAY)
    assert _judgements(brain) == {}
    dream(brain, settings, embedder=embedder, now=T0 + 20 * DAY)
    first = _judgements(brain)
    assert set(first) == set(ids.values())
    dream(brain, settings, embedder=embedder, now=T0 + 21 * DAY)
    assert _judgements(brain) == first
    changed = ids[WARM[0]]
    mc.update_trace(
        brain, changed, content="We repainted the hallway a deep green.", identity=SYSTEM
    )
    dream(brain, settings, embedder=embedder, now=T0 + 22 * DAY)
    again = _judgements(brain)
    assert again[ids[WARM[1]]] == first[ids[WARM[1]]]
    assert again[changed] > first[changed]
