"""Fact extraction: HEXACO config, filtering, the offline extractor, the LLM client."""

from __future__ import annotations

import logging
import socket
import time
from typing import Any

import pytest

import memory_core as mc
from memory_core.errors import ExtractionError
from memory_core.extraction import (
    BASE_CATEGORIES,
    Extraction,
    ExtractionOutcome,
    Fact,
    HexacoTraits,
    MemoryConfig,
    OfflineExtractor,
    config_from_settings,
    derive_memory_config,
    extract_facts,
    filter_facts,
    make_extract,
    make_extractor,
)
from memory_core.extraction.llm import LLMExtractor
from memory_core.reasoners.breaker import Breaker
from memory_core.reasoners.chat import ChatReasoner
from tests.fakes import FakeLLM

# ---------------------------------------------------------------- HEXACO rules

# A configured threshold of 1.0 and limit of 20 never win the lower-of rule,
# so these show the personality-derived values alone.
OPEN = {"base_threshold": 1.0, "base_max": 20}


def test_neutral_traits_give_the_reference_starting_config() -> None:
    config = derive_memory_config(HexacoTraits(), **OPEN)
    assert config.importance_threshold == pytest.approx(0.4)
    assert config.max_per_turn == 3
    assert config.enabled_categories == frozenset(BASE_CATEGORIES)
    assert dict(config.category_boosts) == {}


def test_high_openness_lowers_threshold_allows_one_more_fact_and_enables_emotions() -> None:
    config = derive_memory_config(HexacoTraits(openness=0.8), **OPEN)
    assert config.importance_threshold == pytest.approx(0.4 - 0.3 * 0.4)
    assert config.max_per_turn == 4
    assert "emotional_context" in config.enabled_categories
    assert "emotional_context" not in config.category_boosts


def test_openness_threshold_never_falls_below_the_floor() -> None:
    assert derive_memory_config(HexacoTraits(openness=1.0), **OPEN).importance_threshold == (
        pytest.approx(0.2)
    )
    out_of_range = derive_memory_config(HexacoTraits(openness=7.0), **OPEN)
    assert out_of_range.importance_threshold == pytest.approx(0.2)
    assert out_of_range.max_per_turn <= 5


def test_low_openness_raises_threshold_and_allows_one_fact_fewer() -> None:
    config = derive_memory_config(HexacoTraits(openness=0.2), **OPEN)
    assert config.importance_threshold == pytest.approx(0.4 + 0.3 * 0.4)
    assert config.max_per_turn == 2
    assert "emotional_context" not in config.enabled_categories


def test_low_openness_threshold_stays_under_the_cap_and_limit_above_one() -> None:
    config = derive_memory_config(HexacoTraits(openness=-3.0), **OPEN)
    assert config.importance_threshold == pytest.approx(0.6)
    assert config.importance_threshold <= 0.7
    assert config.max_per_turn == 2


@pytest.mark.parametrize("openness", [0.4, 0.5, 0.6])
def test_openness_from_0_4_to_0_6_inclusive_changes_nothing(openness: float) -> None:
    config = derive_memory_config(HexacoTraits(openness=openness), **OPEN)
    assert config == derive_memory_config(HexacoTraits(), **OPEN)


def test_high_conscientiousness_enables_action_items_and_boosts_goals() -> None:
    config = derive_memory_config(HexacoTraits(conscientiousness=0.9), **OPEN)
    assert "action_item" in config.enabled_categories
    assert dict(config.category_boosts) == {"action_item": 0.15, "goal": 0.1}
    assert config.importance_threshold == pytest.approx(0.4)


def test_high_agreeableness_boosts_user_preferences() -> None:
    config = derive_memory_config(HexacoTraits(agreeableness=0.7), **OPEN)
    assert dict(config.category_boosts) == {"user_preference": 0.15}
    assert config.enabled_categories == frozenset(BASE_CATEGORIES)


def test_high_emotionality_enables_and_boosts_emotions_and_boosts_episodes() -> None:
    config = derive_memory_config(HexacoTraits(emotionality=0.61), **OPEN)
    assert "emotional_context" in config.enabled_categories
    assert dict(config.category_boosts) == {"emotional_context": 0.1, "episodic": 0.1}


def test_high_honesty_boosts_corrections() -> None:
    config = derive_memory_config(HexacoTraits(honesty=0.95), **OPEN)
    assert dict(config.category_boosts) == {"correction": 0.2}


def test_extraversion_has_no_effect() -> None:
    for value in (0.0, 1.0):
        config = derive_memory_config(HexacoTraits(extraversion=value), **OPEN)
        assert config == derive_memory_config(HexacoTraits(), **OPEN)


def test_a_trait_of_exactly_0_6_is_not_high() -> None:
    config = derive_memory_config(
        HexacoTraits(honesty=0.6, emotionality=0.6, agreeableness=0.6, conscientiousness=0.6),
        **OPEN,
    )
    assert dict(config.category_boosts) == {}
    assert config.enabled_categories == frozenset(BASE_CATEGORIES)


def test_every_high_trait_at_once_combines_all_effects() -> None:
    everything = HexacoTraits(1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
    config = derive_memory_config(everything, **OPEN)
    assert config.enabled_categories == frozenset(
        (*BASE_CATEGORIES, "emotional_context", "action_item")
    )
    assert dict(config.category_boosts) == {
        "action_item": 0.15,
        "goal": 0.1,
        "user_preference": 0.15,
        "emotional_context": 0.1,
        "episodic": 0.1,
        "correction": 0.2,
    }


def test_the_lower_of_configured_and_personality_threshold_is_used() -> None:
    low_openness = HexacoTraits(openness=0.2)  # personality says 0.52
    assert derive_memory_config(low_openness, 0.4, 3).importance_threshold == pytest.approx(0.4)
    high_openness = HexacoTraits(openness=0.9)  # personality says 0.24
    assert derive_memory_config(high_openness, 0.4, 3).importance_threshold == pytest.approx(0.24)
    assert derive_memory_config(HexacoTraits(), 0.1, 3).importance_threshold == pytest.approx(0.1)


def test_the_lower_of_configured_and_personality_limit_is_used() -> None:
    assert derive_memory_config(HexacoTraits(openness=0.9), 0.4, 3).max_per_turn == 3
    assert derive_memory_config(HexacoTraits(openness=0.9), 0.4, 10).max_per_turn == 4
    assert derive_memory_config(HexacoTraits(openness=0.1), 0.4, 3).max_per_turn == 2
    assert derive_memory_config(HexacoTraits(), 0.4, 0).max_per_turn == 0


def test_config_from_settings_reads_personality_and_extract_settings() -> None:
    settings = mc.load_settings(
        personality_openness=0.9,
        personality_honesty=0.8,
        extract_importance_threshold=0.3,
        extract_max_per_turn=10,
    )
    config = config_from_settings(settings)
    assert config.importance_threshold == pytest.approx(0.24)
    assert config.max_per_turn == 4
    assert dict(config.category_boosts) == {"correction": 0.2}
    assert config_from_settings(mc.load_settings()) == MemoryConfig()


# ------------------------------------------------------------------ filtering


def fact(category: str, importance: float, content: str | None = None) -> Fact:
    return Fact(content or f"{category} {importance}", category, importance)


def test_filter_drops_categories_the_config_does_not_enable() -> None:
    facts = [fact("action_item", 0.9), fact("emotional_context", 0.9), fact("goal", 0.9)]
    assert [f.category for f in filter_facts(facts, MemoryConfig())] == ["goal"]


def test_filter_adds_the_boost_before_the_threshold_and_keeps_the_boosted_value() -> None:
    config = derive_memory_config(HexacoTraits(agreeableness=0.9))
    kept = filter_facts([fact("user_preference", 0.25), fact("goal", 0.39)], config)
    assert [(f.category, f.importance) for f in kept] == [("user_preference", 0.4)]


def test_filter_clamps_importance_to_zero_and_one() -> None:
    config = MemoryConfig(importance_threshold=0.0, category_boosts={"correction": 0.2})
    kept = filter_facts([fact("correction", 0.95), fact("goal", -0.5)], config)
    assert [f.importance for f in kept] == [1.0, 0.0]


def test_filter_keeps_the_most_important_up_to_the_limit_ties_in_order() -> None:
    facts = [
        fact("goal", 0.5, "a"),
        fact("knowledge", 0.9, "b"),
        fact("episodic", 0.5, "c"),
        fact("correction", 0.7, "d"),
        fact("goal", 0.5, "e"),
    ]
    kept = filter_facts(facts, MemoryConfig(max_per_turn=4))
    assert [f.content for f in kept] == ["b", "d", "a", "c"]
    assert filter_facts(facts, MemoryConfig(max_per_turn=0)) == []


def test_filter_drops_everything_below_the_threshold() -> None:
    assert filter_facts([fact("goal", 0.39), fact("knowledge", 0.0)], MemoryConfig()) == []


def test_a_fact_asked_to_be_kept_passes_every_setting_at_the_keep_importance() -> None:
    asked = Fact("My PIN is 4471.", "action_item", 0.2, keep=True)  # a disabled category
    config = MemoryConfig(max_per_turn=1, keep_importance=0.75)
    kept = filter_facts([fact("knowledge", 0.9, "b"), asked], config)
    assert [(f.content, f.importance) for f in kept] == [("My PIN is 4471.", 0.75)]
    high = Fact("My PIN is 4471.", "knowledge", 0.9, keep=True)
    assert filter_facts([high], config)[0].importance == 0.9  # raised, never lowered


# ---------------------------------------------------------- offline extractor

offline = OfflineExtractor()

EXCHANGES: list[tuple[str, str, list[tuple[str, str]]]] = [
    (
        "Hi! I love sushi, especially salmon nigiri.",
        "Great choice!",
        [("user_preference", "User: I love sushi, especially salmon nigiri.")],
    ),
    (
        "I prefer tea over coffee in the morning. I hate waking up early.",
        "Noted, tea it is.",
        [
            ("user_preference", "User: I prefer tea over coffee in the morning."),
            ("user_preference", "User: I hate waking up early."),
        ],
    ),
    (
        "I'm planning to run the Berlin marathon in September.",
        "The Berlin Marathon is held every September and is known for its flat course.",
        # what the assistant says is not a fact about the user
        [("goal", "User: I'm planning to run the Berlin marathon in September.")],
    ),
    (
        "My goal this year is to read 30 books.",
        "That's a great goal.",
        [("goal", "User: My goal this year is to read 30 books.")],
    ),
    (
        "Actually, my daughter's name is Maya, not Mia.",
        "Sorry about that.",
        [("correction", "User: Actually, my daughter's name is Maya, not Mia.")],
    ),
    (
        "No, I meant the meeting is on Tuesday.",
        "Got it.",
        [("correction", "User: No, I meant the meeting is on Tuesday.")],
    ),
    (
        "Yesterday I visited my grandmother in Porto.",
        "That sounds lovely.",
        [("episodic", "User: Yesterday I visited my grandmother in Porto.")],
    ),
    (
        "I've been feeling really stressed about work lately.",
        "I'm sorry to hear that.",
        [("emotional_context", "User: I've been feeling really stressed about work lately.")],
    ),
    (
        "Remind me to call the dentist on Friday.",
        "Sure, I'll remind you on Friday.",
        [("action_item", "User: Remind me to call the dentist on Friday.")],
    ),
    (
        "I work at Acme Corp as a data engineer.",
        "Nice!",
        [("knowledge", "User: I work at Acme Corp as a data engineer.")],
    ),
    ("hey", "Hello! How can I help you today?", []),
    ("Thanks, that helps!", "You're welcome. Anything else?", []),
    ("ok cool", "Great. Let me know if you need anything.", []),
    ("What's the weather like?", "It is sunny.", []),
]


@pytest.mark.parametrize(("user", "assistant", "expected"), EXCHANGES)
def test_offline_extractor_finds_the_facts_of_realistic_exchanges(
    user: str, assistant: str, expected: list[tuple[str, str]]
) -> None:
    extraction = offline.extract(user, assistant)
    assert extraction.extractor == "offline"
    assert extraction.tokens == 0
    got = [(f.category, f.content) for f in extraction.facts]
    assert len(got) == len(expected), got
    for (category, content), (want_category, want_start) in zip(got, expected, strict=True):
        assert category == want_category
        assert content.startswith(want_start)
    assert all(0.0 <= f.importance <= 1.0 for f in extraction.facts)


def test_offline_user_facts_about_themselves_pass_the_default_filter() -> None:
    for user, assistant, expected in EXCHANGES:
        kept = filter_facts(offline.extract(user, assistant).facts, MemoryConfig())
        wanted = {c for c, text in expected if text.startswith("User:") and c in BASE_CATEGORIES}
        assert wanted <= {f.category for f in kept}, user


def test_offline_extractor_ignores_assistant_preferences_and_feelings() -> None:
    facts = offline.extract("Tell me a joke.", "I love puns. I feel great today!").facts
    assert facts == []


def test_offline_sentences_end_at_punctuation_and_a_space_not_inside_numbers() -> None:
    text = "Yesterday I ran 3.5 km in Berlin. I was exhausted!\nI love jazz"
    facts = offline.extract(text, "").facts
    assert [f.content for f in facts] == [
        "User: Yesterday I ran 3.5 km in Berlin.",
        "User: I was exhausted!",
        "User: I love jazz",
    ]


def test_offline_extractor_handles_empty_and_huge_input() -> None:
    assert offline.extract("", "").facts == []
    started = time.perf_counter()
    offline.extract("not but, actually I went " * 5000, "x" * 100_000)
    assert time.perf_counter() - started < 2.0


def test_offline_entities_are_names_and_numbers_not_sentence_starters() -> None:
    facts = offline.extract("Yesterday I met Ana Lopez at the Lisbon office at 9:30.", "").facts
    assert facts[0].entities == ["Ana Lopez", "Lisbon", "9:30"]
    assert offline.extract("Remind me to call Bob.", "").facts[0].entities == ["Bob"]


def test_specific_first_person_facts_score_higher_than_vague_ones() -> None:
    vague = offline.extract("I like music.", "").facts[0]
    specific = offline.extract("I really like the Beatles, especially Abbey Road from 1969.", "")
    assert specific.facts[0].importance > vague.importance


def test_offline_extractor_is_deterministic() -> None:
    for user, assistant, _ in EXCHANGES:
        assert offline.extract(user, assistant) == OfflineExtractor().extract(user, assistant)


# --------------------------------------------------------- fake LLM endpoint

API_KEY = "sk-test-SECRET-0123456789"


def client(url: str, **kwargs: Any) -> LLMExtractor:
    options: dict[str, Any] = {
        "api_key": API_KEY,
        "timeout_s": 2.0,
        "max_retries": 2,
        "backoff_s": 0.01,
    }
    options.update(kwargs)
    return LLMExtractor(ChatReasoner(url, "test-model", **options))


def free_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


GOOD = {
    "facts": [
        {
            "content": "The user is vegetarian.",
            "category": "user_preference",
            "importance": 0.8,
            "entities": [],
        },
        {
            "content": "The user moves to  Oslo in May.",
            "category": "episodic",
            "importance": "0.6",
            "entities": ["Oslo", "May", 2025, None],
        },
        {"content": "Loves cats.", "category": "mood", "importance": 0.9},
        {"content": "The user must call Bo.", "category": " Action_Item ", "importance": 1.7},
    ]
}


def test_llm_good_answer_becomes_validated_facts_with_tokens(llm_server: FakeLLM) -> None:
    llm_server.answer(GOOD, tokens=321)
    extraction = client(llm_server.url).extract("I'm vegetarian.", "Noted!")
    assert extraction.extractor == "llm"
    assert extraction.tokens == 321
    assert extraction.facts == [
        Fact("The user is vegetarian.", "user_preference", 0.8, []),
        Fact("The user moves to Oslo in May.", "episodic", 0.6, ["Oslo", "May", "2025"]),
        Fact("The user must call Bo.", "action_item", 1.0, []),
    ]
    request = llm_server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {API_KEY}"
    body = request["json"]
    assert body["model"] == "test-model"
    assert body["response_format"] == {"type": "json_object"}
    assert "user_preference" in body["messages"][0]["content"]
    assert body["messages"][1]["content"] == "User: I'm vegetarian.\n\nAssistant: Noted!"


def test_llm_facts_say_their_attribute_and_whether_they_were_asked_to_be_kept(
    llm_server: FakeLLM,
) -> None:
    items = [
        {
            "content": "The user is allergic to penicillin.",
            "category": "knowledge",
            "attribute": "Health",
            "keep": True,
        },
        {
            "content": "The user drives a Polo.",
            "category": "knowledge",
            "attribute": "spaceship",
            "keep": "yes",
        },
    ]
    llm_server.answer({"facts": items})
    facts = client(llm_server.url).extract("Please remember I'm allergic to penicillin.", "").facts
    assert [(f.attribute, f.keep) for f in facts] == [("health", True), (None, False)]
    prompt = llm_server.requests[0]["json"]["messages"][0]["content"]
    assert '"keep"' in prompt and "medication" in prompt


def test_llm_empty_fact_list_and_fenced_json_are_accepted(llm_server: FakeLLM) -> None:
    llm_server.answer({"facts": []})
    llm_server.answer('```json\n{"facts": [{"content": "x y z", "category": "goal"}]}\n```')
    extractor = client(llm_server.url)
    assert extractor.extract("hi", "hello").facts == []
    assert extractor.extract("a", "b").facts == [Fact("x y z", "goal", 0.5, [])]


@pytest.mark.parametrize(
    "message",
    [
        "Sure! Here are the facts: the user likes tea.",
        [{"content": "a list, not an object", "category": "goal"}],
        {"memories": []},
        {"facts": "the user likes tea"},
        {"facts": ["the user likes tea"]},
        {"facts": [{"category": "goal", "importance": 0.5}]},
        {"facts": [{"content": "   ", "category": "goal"}]},
        {"facts": [{"content": "x", "category": "goal", "importance": "very"}]},
        {"facts": [{"content": "x", "category": "goal", "entities": {"a": 1}}]},
    ],
)
def test_llm_garbage_or_wrong_shape_is_an_extraction_error(
    llm_server: FakeLLM, message: Any
) -> None:
    llm_server.answer(message)
    with pytest.raises(ExtractionError):
        client(llm_server.url).extract("I like tea.", "Noted.")
    assert len(llm_server.requests) == 1  # a bad answer is not retried


@pytest.mark.parametrize(
    "body", [b"<html>oops</html>", {"id": "x", "choices": []}, {"choices": [{"message": {}}]}]
)
def test_llm_response_without_a_message_is_an_extraction_error(
    llm_server: FakeLLM, body: Any
) -> None:
    llm_server.reply(200, body)
    with pytest.raises(ExtractionError):
        client(llm_server.url).extract("I like tea.", "Noted.")


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_llm_retries_transient_errors_then_succeeds(llm_server: FakeLLM, status: int) -> None:
    llm_server.reply(status, {"error": "busy"})
    llm_server.answer(GOOD)
    extraction = client(llm_server.url).extract("I'm vegetarian.", "Noted!")
    assert len(extraction.facts) == 3
    assert len(llm_server.requests) == 2


def test_llm_gives_up_after_the_configured_retries(llm_server: FakeLLM) -> None:
    for _ in range(5):
        llm_server.reply(503, {"error": "down"})
    with pytest.raises(ExtractionError, match="3 attempts"):
        client(llm_server.url, max_retries=2).extract("I like tea.", "Noted.")
    assert len(llm_server.requests) == 3


def test_llm_client_errors_are_not_retried(llm_server: FakeLLM) -> None:
    llm_server.reply(401, {"error": "bad key"})
    with pytest.raises(ExtractionError, match="401"):
        client(llm_server.url).extract("I like tea.", "Noted.")
    assert len(llm_server.requests) == 1


def test_llm_timeout_is_honoured_quickly(llm_server: FakeLLM) -> None:
    llm_server.reply(200, {"choices": []}, delay=5.0)
    started = time.monotonic()
    with pytest.raises(ExtractionError, match="Timeout"):
        client(llm_server.url, timeout_s=0.2, max_retries=0).extract("a b c", "d e f")
    assert time.monotonic() - started < 1.5


def test_llm_retry_backoff_grows_and_is_capped() -> None:
    chat = ChatReasoner("http://127.0.0.1:9/v1", "m", backoff_s=1.0, backoff_max_s=4.0)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (6, 4.0)]:
        delay = chat._backoff(attempt, None)
        assert ceiling / 2 <= delay <= ceiling
    assert chat._backoff(1, 30.0) == 4.0  # Retry-After, capped


def test_server_down_falls_back_to_offline_and_records_why() -> None:
    llm = client(free_port_url(), max_retries=1)
    outcome = extract_facts(
        llm, OfflineExtractor(), "I love hiking in the Alps.", "Nice!", MemoryConfig()
    )
    assert isinstance(outcome, ExtractionOutcome)
    assert outcome.fell_back is True
    assert outcome.extractor == "offline"
    assert outcome.primary_error is not None and "ConnectError" in outcome.primary_error
    assert [f.content for f in outcome.facts] == ["User: I love hiking in the Alps."]


def test_working_llm_outcome_is_filtered_and_not_a_fallback(llm_server: FakeLLM) -> None:
    llm_server.answer(GOOD, tokens=99)
    config = MemoryConfig(max_per_turn=1)
    outcome = extract_facts(client(llm_server.url), OfflineExtractor(), "u", "a", config)
    assert outcome.fell_back is False
    assert outcome.primary_error is None
    assert (outcome.extractor, outcome.tokens, outcome.candidates) == ("llm", 99, 3)
    assert [f.content for f in outcome.facts] == ["The user is vegetarian."]


def test_api_key_never_appears_in_logs_or_errors(
    llm_server: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    llm_server.reply(500, f"invalid key {API_KEY}".encode())
    llm_server.reply(401, f"invalid key {API_KEY}".encode())
    llm = client(llm_server.url)
    outcome = extract_facts(llm, OfflineExtractor(), "I love tea.", "ok", MemoryConfig())
    assert outcome.fell_back
    assert "401" in (outcome.primary_error or "")
    assert "retry 1/2" in caplog.text
    assert API_KEY not in caplog.text
    assert API_KEY not in (outcome.primary_error or "")
    assert API_KEY not in repr(llm)


def test_make_extract_runs_the_configured_pipeline_and_returns_an_extraction() -> None:
    settings = mc.load_settings(llm_base_url=free_port_url(), llm_max_retries=0)
    extract = make_extract(settings)
    outcome = extract("I love hiking in the Alps. I hate rain.", "ok")
    assert isinstance(outcome, Extraction)
    assert isinstance(outcome, ExtractionOutcome) and outcome.fell_back
    assert [f.category for f in outcome.facts] == ["user_preference", "user_preference"]
    offline_outcome = make_extract(mc.load_settings())("I love hiking.", "ok")
    assert not offline_outcome.fell_back and offline_outcome.extractor == "offline"


def test_make_extractor_picks_llm_only_when_a_base_url_is_set() -> None:
    assert isinstance(make_extractor(mc.load_settings()), OfflineExtractor)
    llm = make_extractor(mc.load_settings(llm_base_url="http://127.0.0.1:9/v1", llm_max_retries=0))
    assert isinstance(llm, LLMExtractor) and isinstance(llm.reasoner, ChatReasoner)
    assert llm.name == "llm" and llm.reasoner.max_retries == 0


# -- a hung endpoint and the breaker ------------------------------------------------


def test_a_hung_endpoint_costs_a_call_its_timeout_and_no_more(llm_server: FakeLLM) -> None:
    for _ in range(3):  # every attempt would hang for a minute
        llm_server.reply(200, {"choices": []}, delay=60)
    extractor = client(llm_server.url, timeout_s=0.5, max_retries=2)
    started = time.monotonic()
    with pytest.raises(ExtractionError, match=r"0\.5 s"):
        extractor.extract("I'm vegetarian.", "Noted!")
    assert time.monotonic() - started < 1.0


def test_failures_in_a_row_open_the_breaker_and_a_probe_closes_it(llm_server: FakeLLM) -> None:
    now = [0.0]
    breaker = Breaker(failures=2, probe_after_s=30.0, clock=lambda: now[0])
    extractor = client(llm_server.url, timeout_s=0.3, max_retries=0, breaker=breaker)
    for _ in range(2):
        llm_server.reply(200, {"choices": []}, delay=60)
        with pytest.raises(ExtractionError):
            extractor.extract("I'm vegetarian.", "Noted!")
    assert breaker.state == "open" and breaker.opened == 1
    asked = len(llm_server.requests)
    started = time.monotonic()
    with pytest.raises(ExtractionError, match="breaker is open"):
        extractor.extract("I'm vegetarian.", "Noted!")
    assert time.monotonic() - started < 0.1 and len(llm_server.requests) == asked
    now[0] += 30.0  # time for a probe, which fails: open again, for another while
    llm_server.reply(503, b"down")
    with pytest.raises(ExtractionError):
        extractor.extract("I'm vegetarian.", "Noted!")
    assert breaker.state == "open" and breaker.opened == 2
    now[0] += 30.0
    llm_server.answer(GOOD)
    assert extractor.extract("I'm vegetarian.", "Noted!").facts
    assert breaker.state == "closed"


def test_with_the_breaker_open_turns_are_extracted_offline_at_once(llm_server: FakeLLM) -> None:
    settings = mc.load_settings(
        llm_base_url=llm_server.url, llm_timeout_s=0.3, llm_max_retries=0, llm_breaker_failures=1
    )
    extract = make_extract(settings)
    llm_server.reply(200, {"choices": []}, delay=60)
    first = extract("I love green tea and I work as a nurse.", "Nice!")
    assert first.fell_back
    started = time.monotonic()
    second = extract("I prefer window seats on trains.", "Noted.")
    assert time.monotonic() - started < 0.1
    assert second.fell_back and "breaker" in (second.primary_error or "")
    assert len(llm_server.requests) == 1
