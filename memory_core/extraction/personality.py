"""HEXACO traits -> what a turn's extraction may keep, and the filter that applies it.

The rules follow the AgentOS reference ("HEXACO Personality Modulation"):
start from a threshold of 0.4, three facts per turn and the five base
categories, then for each trait above 0.6:

* openness: lowers the threshold (floor 0.2), one more fact (up to 5), enables
  ``emotional_context``; openness below 0.4 raises the threshold (cap 0.7) and
  allows one fact fewer;
* conscientiousness: enables ``action_item`` with a 0.15 boost, +0.1 to ``goal``;
* agreeableness: +0.15 to ``user_preference``;
* emotionality: enables ``emotional_context`` with a 0.1 boost, +0.1 to ``episodic``;
* honesty: +0.2 to ``correction``.

Extraversion has no effect.  The pipeline then uses the LOWER of the
personality-derived and the configured threshold, and the lower of the two
limits per turn.

Amounts the reference leaves unspecified, and the values chosen here (they
match the upstream Wunderland ``PersonalityMemoryConfig.ts``):

* how much openness moves the threshold: ``(openness - 0.5) * 0.4`` down when
  openness > 0.6 (so 0.2 at openness 1.0, exactly the floor), and
  ``(0.5 - openness) * 0.4`` up when openness < 0.4 (0.6 at openness 0.0, so
  the 0.7 cap is never reached from the 0.4 start);
* how low "one fact fewer" may go: never below 1;
* traits outside [0, 1] are clamped; a missing trait is neutral (0.5);
* boosts of two traits on one category add up (none overlap today).

Consequence of the lower-of rule worth knowing: with the default configured
values (0.4, 3), low openness' higher threshold and fewer facts and high
openness' extra fact have no effect; only a lower threshold can win.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from memory_core.extraction.base import BASE_CATEGORIES, Fact
from memory_core.settings import Settings

BASE_THRESHOLD = 0.4
BASE_MAX_PER_TURN = 3
HIGH_TRAIT = 0.6
LOW_OPENNESS = 0.4
THRESHOLD_FLOOR = 0.2
THRESHOLD_CAP = 0.7
MAX_PER_TURN_CAP = 5
MAX_PER_TURN_FLOOR = 1
OPENNESS_THRESHOLD_SLOPE = 0.4

# Importances are compared after rounding so 0.25 + 0.15 is not 0.39999...
_DECIMALS = 6


@dataclass(frozen=True)
class HexacoTraits:
    """The six HEXACO traits, each 0..1 with 0.5 neutral."""

    honesty: float = 0.5
    emotionality: float = 0.5
    extraversion: float = 0.5
    agreeableness: float = 0.5
    conscientiousness: float = 0.5
    openness: float = 0.5


@dataclass(frozen=True)
class MemoryConfig:
    """What filter_facts keeps: threshold, limit, categories and their boosts."""

    importance_threshold: float = BASE_THRESHOLD
    max_per_turn: int = BASE_MAX_PER_TURN
    enabled_categories: frozenset[str] = frozenset(BASE_CATEGORIES)
    category_boosts: Mapping[str, float] = field(default_factory=dict)
    # What a fact the user asked to keep is raised to (the pruning pass's protection).
    keep_importance: float = 0.7


def _trait(value: float) -> float:
    if math.isnan(value):
        return 0.5
    return max(0.0, min(1.0, value))


def derive_memory_config(
    traits: HexacoTraits,
    base_threshold: float = BASE_THRESHOLD,
    base_max: int = BASE_MAX_PER_TURN,
) -> MemoryConfig:
    """The effective config for an agent with ``traits``.

    ``base_threshold`` and ``base_max`` are the configured values
    (``extract_importance_threshold``, ``extract_max_per_turn``); the result
    uses the lower of each and its personality-derived counterpart.
    """
    threshold = BASE_THRESHOLD
    max_per_turn = BASE_MAX_PER_TURN
    enabled = set(BASE_CATEGORIES)
    boosts: dict[str, float] = {}

    def boost(category: str, amount: float) -> None:
        boosts[category] = boosts.get(category, 0.0) + amount

    o = _trait(traits.openness)
    if o > HIGH_TRAIT:
        threshold = max(THRESHOLD_FLOOR, threshold - (o - 0.5) * OPENNESS_THRESHOLD_SLOPE)
        max_per_turn = min(MAX_PER_TURN_CAP, max_per_turn + 1)
        enabled.add("emotional_context")
    elif o < LOW_OPENNESS:
        threshold = min(THRESHOLD_CAP, threshold + (0.5 - o) * OPENNESS_THRESHOLD_SLOPE)
        max_per_turn = max(MAX_PER_TURN_FLOOR, max_per_turn - 1)

    if _trait(traits.conscientiousness) > HIGH_TRAIT:
        enabled.add("action_item")
        boost("action_item", 0.15)
        boost("goal", 0.1)
    if _trait(traits.agreeableness) > HIGH_TRAIT:
        boost("user_preference", 0.15)
    if _trait(traits.emotionality) > HIGH_TRAIT:
        enabled.add("emotional_context")
        boost("emotional_context", 0.1)
        boost("episodic", 0.1)
    if _trait(traits.honesty) > HIGH_TRAIT:
        boost("correction", 0.2)

    return MemoryConfig(
        importance_threshold=round(min(threshold, base_threshold), _DECIMALS),
        max_per_turn=max(0, min(max_per_turn, base_max)),
        enabled_categories=frozenset(enabled),
        category_boosts={k: round(v, _DECIMALS) for k, v in boosts.items()},
    )


def config_from_settings(settings: Settings) -> MemoryConfig:
    """The effective config from the ``personality_*`` and ``extract_*`` settings."""
    traits = HexacoTraits(
        honesty=settings.personality_honesty,
        emotionality=settings.personality_emotionality,
        extraversion=settings.personality_extraversion,
        agreeableness=settings.personality_agreeableness,
        conscientiousness=settings.personality_conscientiousness,
        openness=settings.personality_openness,
    )
    derived = derive_memory_config(
        traits, settings.extract_importance_threshold, settings.extract_max_per_turn
    )
    return replace(derived, keep_importance=settings.dream_protect_importance)


def _clamp_importance(value: float) -> float:
    if math.isnan(value):
        return 0.0
    return round(max(0.0, min(1.0, value)), _DECIMALS)


def filter_facts(facts: Iterable[Fact], config: MemoryConfig) -> list[Fact]:
    """The facts a turn keeps under ``config``, most important first.

    Drops facts of disabled categories, adds the category boost (the result,
    clamped to [0, 1], becomes the fact's importance), drops facts below the
    threshold and keeps at most ``max_per_turn``, highest importance first;
    ties keep their extraction order.  A fact the user asked to keep comes first
    and is always kept, at ``keep_importance`` or above.
    """
    kept: list[Fact] = []
    asked: list[Fact] = []
    for fact in facts:
        boosted = _clamp_importance(fact.importance + config.category_boosts.get(fact.category, 0))
        if fact.keep:  # the user's own word outranks every setting
            asked.append(replace(fact, importance=max(boosted, config.keep_importance)))
            continue
        if fact.category not in config.enabled_categories:
            continue
        if boosted < config.importance_threshold:
            continue
        kept.append(replace(fact, importance=boosted))
    kept.sort(key=lambda f: f.importance, reverse=True)  # sort is stable
    return asked + kept[: max(0, config.max_per_turn - len(asked))]
