"""Fact extraction and judgements by a reasoner: the prompts, and the checking of answers.

The questions Reverie asks a reasoner (:mod:`memory_core.reasoners`: a chat endpoint
or the host agent's command line) and how their answers are read live here, apart
from how they are carried: the facts of an exchange (:class:`LLMExtractor`), an
insight digest, whether two memories state the same facts, whether a later statement
replaces an earlier one (each a :class:`Question`).  Every answer is one JSON object
(a fenced block allowed) checked against the same schema whoever answered it; one
that does not fit is an :class:`~memory_core.errors.ExtractionError` for the caller
to fall back on, as is the reasoner's own failure.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memory_core.errors import ConfigError, ExtractionError
from memory_core.extraction.base import CATEGORIES, Extraction, Fact
from memory_core.language.reading import ATTRIBUTES, NONE
from memory_core.reasoners import Reasoner, make_reasoner
from memory_core.reasoners.breaker import Breaker
from memory_core.settings import Settings
from memory_core.wellformed import cleaned

log = logging.getLogger(__name__)

SYSTEM_PROMPT = f"""\
You extract facts worth remembering from one exchange between a user and an \
AI assistant, for the assistant's long-term memory.

Answer with one JSON object and nothing else:
{{"facts": [{{"content": "...", "category": "...", "importance": 0.0, "entities": ["..."], \
"attribute": "...", "keep": false}}]}}

- content: one concise sentence that reads on its own, naming who it is about \
("The user prefers tea to coffee.").
- category: one of {", ".join(CATEGORIES)}.
  user_preference: likes, dislikes, stated preferences; episodic: what happened;
  goal: what the user wants to achieve; knowledge: technical or domain facts, \
facts about the user's life; correction: the user correcting an earlier belief or \
statement; emotional_context: how the user feels; action_item: something to do or \
to be reminded of.
- importance: 0.0 to 1.0, how useful the fact is in future conversations.
- entities: names, places, products, dates and numbers the fact mentions.
- attribute: which attribute of a person the fact states, one of \
{", ".join(ATTRIBUTES)}.
- keep: true only when the user asked for it to be remembered ("please remember \
that ...", "don't forget ...", "note that ...").

Only what the user states or confirms is a fact about the user; what the assistant \
says is not, unless the user agrees with it. When the exchange says when it took \
place, write relative times ("yesterday", "next Friday", "last May") as the dates \
they mean ("on 7 May 2023").

Skip greetings, small talk and anything not useful later. \
When nothing is worth keeping, answer {{"facts": []}}."""

INSIGHT_PROMPT = """\
You consolidate an AI assistant's long-term memory. Given related memories, each \
with the day it was told in brackets, write what they say of the person or topic \
they are about as one digest: the name (or "The user"), an em dash, then claims \
separated by semicolons, each in the third person with its absolute date, e.g. \
"Caroline — went to an LGBTQ support group on 7 May 2023; is researching \
adoption agencies (25 May 2023)". State only what the memories say: no claim, \
name or number they do not contain, no advice, no relative dates. Answer with \
one JSON object and nothing else: {"insight": "..."}"""

SAME_FACT_PROMPT = """\
You check an AI assistant's long-term memory for duplicates. Given two memories, \
decide whether they state the same facts, so that one text could replace both. \
They do not if any number, quantity, date, time, person, place, object or \
polarity differs, or if either says something the other does not contradict but \
also does not contain. Answer with one JSON object and nothing else: \
{"same": true|false, "reason": "..."}"""

REPLACES_PROMPT = """\
You keep an AI assistant's long-term memory current. Given an older and a newer \
statement about the same person and the same thing (where they live or work, a \
relationship, a habit's amount, a dose), decide whether the newer one replaces the \
older: what the older said no longer holds once the newer was said. It does not if \
both can hold at once, if the newer only recalls the past, or if they are about \
different things. Answer with one JSON object and nothing else: \
{"replaces": true|false|null, "reason": "..."}; null when you cannot tell."""

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_DEFAULT_IMPORTANCE = 0.5
_MAX_INPUT_CHARS = 16_000


@dataclass(frozen=True)
class Question:
    """One judgement to ask a reasoner: its prompt, its input, and ``read``, which turns
    the answer's text into the checked value (JSON-able) or raises ExtractionError."""

    kind: str
    prompt: str
    input: str
    read: Callable[[str], Any]

    @property
    def prompt_version(self) -> str:
        """A digest of the prompt: a reworded prompt never reuses an old answer."""
        return hashlib.sha256(self.prompt.encode()).hexdigest()[:16]


class LLMExtractor:
    """Asks a reasoner for the facts of an exchange, and for judgements; see the module
    docstring."""

    def __init__(self, reasoner: Reasoner) -> None:
        self.reasoner = reasoner
        # The chat endpoint's extractor has always been called "llm" (metrics, logs).
        self.name = "llm" if reasoner.kind == "chat" else reasoner.kind

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMExtractor:
        """An extractor over the reasoner ``settings`` choose; ConfigError for none."""
        reasoner = make_reasoner(settings)
        if reasoner is None:
            raise ConfigError("no reasoner is configured (REVERIE_REASONER, llm_base_url)")
        return cls(reasoner)

    @property
    def breaker(self) -> Breaker | None:
        return self.reasoner.breaker

    def __repr__(self) -> str:  # the reasoner's repr never shows a key
        return f"LLMExtractor({self.reasoner!r})"

    def close(self) -> None:
        """Release what the reasoner holds."""
        self.reasoner.close()

    def extract(self, user: str, assistant: str, *, when: float | None = None) -> Extraction:
        """The facts the reasoner finds in the exchange, validated against the schema."""
        exchange = f"User: {user[:_MAX_INPUT_CHARS]}\n\nAssistant: {assistant[:_MAX_INPUT_CHARS]}"
        if when is not None:
            said = datetime.fromtimestamp(when, UTC).strftime("%A %d %B %Y, %H:%M UTC")
            exchange = f"Said on {said}.\n\n{exchange}"
        answer = self.reasoner.ask(SYSTEM_PROMPT, exchange)
        return Extraction(facts=parse_facts(answer.text), extractor=self.name, tokens=answer.tokens)

    def ask(self, question: Question) -> tuple[Any, int]:
        """``question``'s checked answer, and the tokens it cost."""
        answer = self.reasoner.ask(question.prompt, question.input)
        return question.read(answer.text), answer.tokens

    def summarize(self, memories: list[str]) -> tuple[str, int]:
        """An insight digest of related memories (each dated), and tokens used.

        Used by the dream pass's derive step; raises ExtractionError like
        :meth:`extract` so the caller can fall back to its offline digest.
        """
        insight, tokens = self.ask(insight_question(memories))
        return str(insight), tokens

    def same_fact(self, older: str, newer: str) -> tuple[bool, str]:
        """Whether two memories state the same facts, and why, as the reasoner judges.

        Raises :class:`ExtractionError` when it fails or the answer is not
        ``{"same": bool, "reason": str}``; the merge step then keeps its own verdict.
        """
        (same, reason), _ = self.ask(same_fact_question(older, newer))
        return bool(same), str(reason)

    def replaces(self, older: str, newer: str) -> tuple[bool | None, str]:
        """Whether the newer statement replaces the older, as the reasoner judges (None:
        it cannot tell), and why.

        Raises :class:`ExtractionError` when it fails or the answer is not
        ``{"replaces": bool | null, "reason": str}``.
        """
        (replaces, reason), _ = self.ask(replaces_question(older, newer))
        return replaces, str(reason)


def insight_question(memories: list[str]) -> Question:
    """The digest of related memories, each dated: ``{"insight": str}``, non-empty."""
    listing = "\n".join(f"- {m[:2_000]}" for m in memories[:20])
    return Question("insight", INSIGHT_PROMPT, listing[:_MAX_INPUT_CHARS], _read_insight)


def same_fact_question(older: str, newer: str) -> Question:
    """Whether two memories state the same facts: ``{"same": bool, "reason": str}``."""
    return Question("same_fact", SAME_FACT_PROMPT, _pair(older, newer), _read_same)


def replaces_question(older: str, newer: str) -> Question:
    """Whether the newer replaces the older: ``{"replaces": bool | null, "reason": str}``."""
    return Question("replaces", REPLACES_PROMPT, _pair(older, newer), _read_replaces)


def _pair(older: str, newer: str) -> str:
    return json.dumps({"older": older[:4_000], "newer": newer[:4_000]})


def answered_object(text: str) -> Any:
    """The JSON the reasoner answered (a fenced block allowed); ExtractionError if none."""
    fenced = _FENCE.match(text.strip())
    try:
        return json.loads(fenced.group(1) if fenced else text)
    except ValueError as e:
        raise ExtractionError("LLM message is not JSON") from e


def _read_insight(text: str) -> str:
    answer = answered_object(text)
    insight = answer.get("insight") if isinstance(answer, dict) else None
    if not isinstance(insight, str):
        raise ExtractionError("LLM answered no usable insight")
    if not cleaned(insight).strip():
        raise ExtractionError("LLM answered an empty insight")
    return cleaned(insight).strip()


def _read_pair(text: str, key: str, what: str) -> tuple[Any, str]:
    """The value under ``key`` of a judgement about a pair, and its reason (at most 300
    characters); :class:`ExtractionError` when there is none."""
    answer = answered_object(text)
    if not isinstance(answer, dict) or key not in answer:
        raise ExtractionError(f"LLM answered no usable {what} judgement")
    reason = answer.get("reason", "")
    if not isinstance(reason, str):
        raise ExtractionError(f"LLM's {what} judgement gave a reason that is not text")
    return answer[key], cleaned(reason).strip()[:300]


def _read_same(text: str) -> list[Any]:
    same, reason = _read_pair(text, "same", "duplicate")
    if not isinstance(same, bool):
        raise ExtractionError("LLM's duplicate judgement is not {same: bool, reason: str}")
    return [same, reason]


def _read_replaces(text: str) -> list[Any]:
    replaces, reason = _read_pair(text, "replaces", "change")
    if not (replaces is None or isinstance(replaces, bool)):
        raise ExtractionError("LLM's change judgement is not {replaces: bool | null, reason: str}")
    return [replaces, reason]


def parse_facts(text: str) -> list[Fact]:
    """The facts of an answer to the extraction prompt; ExtractionError if unusable.

    Strict about the shape: the answer must be a JSON object with a ``facts``
    list whose items are objects with non-empty string ``content``.  Lenient
    about values: an unknown category drops that fact, importance is coerced to
    a float and clamped to [0, 1] (missing: 0.5), entities keep their strings, an
    unknown attribute is none, and only ``"keep": true`` asks for a fact to be kept.
    Text is cleaned of what no brain stores (NUL, control characters, lone
    surrogates): a fact left with no words is dropped.
    """
    data = answered_object(text)
    if not isinstance(data, dict) or not isinstance(data.get("facts"), list):
        raise ExtractionError('LLM message is not an object with a "facts" list')
    return [f for f in (_fact(item) for item in data["facts"]) if f is not None]


def _fact(item: Any) -> Fact | None:
    if not isinstance(item, dict):
        raise ExtractionError("LLM fact is not an object")
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ExtractionError("LLM fact has no content")
    content = " ".join(cleaned(content).split())  # no NUL, control or lone surrogate
    if not content:
        log.debug("dropping an LLM fact with nothing but unusable characters")
        return None
    category = item.get("category")
    category = category.strip().lower() if isinstance(category, str) else None
    if category not in CATEGORIES:
        log.debug("dropping an LLM fact of unknown category %r", item.get("category"))
        return None
    attribute = item.get("attribute")
    attribute = attribute.strip().lower() if isinstance(attribute, str) else None
    return Fact(
        content=content,
        category=category,
        importance=_importance(item.get("importance")),
        entities=_entities(item.get("entities")),
        attribute=attribute if attribute in ATTRIBUTES and attribute != NONE else None,
        keep=item.get("keep") is True,
    )


def _importance(value: Any) -> float:
    if value is None:
        return _DEFAULT_IMPORTANCE
    if isinstance(value, bool):
        raise ExtractionError("LLM fact importance is not a number")
    try:
        number = float(value)
    except (TypeError, ValueError) as e:
        raise ExtractionError("LLM fact importance is not a number") from e
    if math.isnan(number):
        raise ExtractionError("LLM fact importance is not a number")
    return max(0.0, min(1.0, number))


def _entities(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise ExtractionError("LLM fact entities is not a list")
    found = [
        cleaned(str(e)).strip()
        for e in value
        if isinstance(e, (str, int, float)) and not isinstance(e, bool)
    ]
    found = [e for e in found if e]
    return list(dict.fromkeys(found))
