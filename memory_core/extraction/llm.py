"""Fact extraction through an OpenAI-compatible chat-completions endpoint.

``POST {llm_base_url}/chat/completions`` (so the base URL includes the version
path, e.g. ``https://api.openai.com/v1``) with ``response_format`` set to
``json_object`` and a system prompt that fixes the schema.  Timeouts,
connection errors, 429 and 5xx are retried with exponential backoff and
jitter, all within one call's budget of ``timeout_s``, a wall-clock deadline
(:mod:`memory_core.deadline`): a hung or slow-dripping endpoint costs a call
that much and no more.  After ``breaker_failures`` failed calls in a row
a breaker (:mod:`memory_core.extraction.breaker`) refuses calls at once until a
probe succeeds.  Any failure, and any answer that does not fit the schema, is
an :class:`~memory_core.errors.ExtractionError` for the caller to fall back on.

The API key goes into the ``Authorization`` header only.  Log lines and error
messages never include it, the request URL or a response body unredacted.
"""

from __future__ import annotations

import json
import logging
import math
import random
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx

from memory_core import deadline
from memory_core.errors import BreakerOpen, ConfigError, ExtractionError
from memory_core.extraction.base import CATEGORIES, Extraction, Fact
from memory_core.extraction.breaker import Breaker
from memory_core.settings import Settings
from memory_core.wellformed import cleaned

log = logging.getLogger(__name__)

SYSTEM_PROMPT = f"""\
You extract facts worth remembering from one exchange between a user and an \
AI assistant, for the assistant's long-term memory.

Answer with one JSON object and nothing else:
{{"facts": [{{"content": "...", "category": "...", "importance": 0.0, "entities": ["..."]}}]}}

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

_RETRY_STATUSES = frozenset({408, 429})
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_DEFAULT_IMPORTANCE = 0.5
_MAX_INPUT_CHARS = 16_000
_SNIPPET_CHARS = 200


class LLMExtractor:
    """Asks a chat model for the facts of an exchange; see the module docstring."""

    name = "llm"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 20.0,
        max_retries: int = 2,
        backoff_s: float = 0.5,
        backoff_max_s: float = 8.0,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        transport: httpx.BaseTransport | None = None,
        breaker: Breaker | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.model = model
        self.timeout_s = timeout_s
        self.breaker = breaker
        self._clock = clock
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self._api_key = api_key
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._sleep = sleep
        self._rng = rng or random.Random()
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        if transport is None:  # every call's timeout a deadline, not one per read
            self._client = deadline.client(timeout=timeout_s, headers=headers)
        else:
            self._client = httpx.Client(
                timeout=httpx.Timeout(timeout_s), headers=headers, transport=transport
            )

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMExtractor:
        """An extractor for ``llm_base_url``; the caller checks it is set."""
        if not settings.llm_base_url:
            raise ConfigError("llm_base_url is not set")
        return cls(
            settings.llm_base_url,
            settings.llm_model,
            api_key=settings.llm_api_key,
            timeout_s=settings.llm_timeout_s,
            max_retries=settings.llm_max_retries,
            breaker=Breaker(settings.llm_breaker_failures, settings.llm_breaker_probe_s),
        )

    def __repr__(self) -> str:  # never show the key
        return f"LLMExtractor(model={self.model!r})"

    def close(self) -> None:
        """Release the connection pool."""
        self._client.close()

    def extract(self, user: str, assistant: str, *, when: float | None = None) -> Extraction:
        """The facts the model finds in the exchange, validated against the schema."""
        exchange = f"User: {user[:_MAX_INPUT_CHARS]}\n\nAssistant: {assistant[:_MAX_INPUT_CHARS]}"
        if when is not None:
            said = datetime.fromtimestamp(when, UTC).strftime("%A %d %B %Y, %H:%M UTC")
            exchange = f"Said on {said}.\n\n{exchange}"
        body = self._post(self._payload(SYSTEM_PROMPT, exchange))
        facts, tokens = parse_completion(body)
        return Extraction(facts=facts, extractor=self.name, tokens=tokens)

    def summarize(self, memories: list[str]) -> tuple[str, int]:
        """An insight digest of related memories (each dated), and tokens used.

        Used by the dream pass's derive step; raises ExtractionError like
        :meth:`extract` so the caller can fall back to its offline digest.
        """
        listing = "\n".join(f"- {m[:2_000]}" for m in memories[:20])
        body = self._post(self._payload(INSIGHT_PROMPT, listing[:_MAX_INPUT_CHARS]))
        try:
            insight = self._answer(body)["insight"]
            tokens = int((body.get("usage") or {}).get("total_tokens") or 0)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
            raise ExtractionError("LLM answered no usable insight") from e
        if not isinstance(insight, str) or not cleaned(insight).strip():
            raise ExtractionError("LLM answered an empty insight")
        return cleaned(insight).strip(), tokens

    def same_fact(self, older: str, newer: str) -> tuple[bool, str]:
        """Whether two memories state the same facts, and why, as the LLM judges.

        Raises :class:`ExtractionError` when the endpoint fails or the answer is not
        ``{"same": bool, "reason": str}``; the merge step then keeps its own verdict.
        """
        same, reason = self._judge_pair(SAME_FACT_PROMPT, older, newer, "same", "duplicate")
        if not isinstance(same, bool):
            raise ExtractionError("LLM's duplicate judgement is not {same: bool, reason: str}")
        return same, reason

    def replaces(self, older: str, newer: str) -> tuple[bool | None, str]:
        """Whether the newer statement replaces the older, as the LLM judges (None: it
        cannot tell), and why.

        Raises :class:`ExtractionError` when the endpoint fails or the answer is not
        ``{"replaces": bool | null, "reason": str}``.
        """
        replaces, reason = self._judge_pair(REPLACES_PROMPT, older, newer, "replaces", "change")
        if not (replaces is None or isinstance(replaces, bool)):
            raise ExtractionError(
                "LLM's change judgement is not {replaces: bool | null, reason: str}"
            )
        return replaces, reason

    def _judge_pair(
        self, prompt: str, older: str, newer: str, key: str, what: str
    ) -> tuple[Any, str]:
        """The LLM's answer under ``key`` about an older and a newer memory, and its
        reason (at most 300 characters); :class:`ExtractionError` when there is none."""
        pair = json.dumps({"older": older[:4_000], "newer": newer[:4_000]})
        body = self._post(self._payload(prompt, pair))
        try:
            answer = self._answer(body)
            value, reason = answer[key], answer.get("reason", "")
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
            raise ExtractionError(f"LLM answered no usable {what} judgement") from e
        if not isinstance(reason, str):
            raise ExtractionError(f"LLM's {what} judgement gave a reason that is not text")
        return value, cleaned(reason).strip()[:300]

    def _payload(self, system: str, user: str) -> dict[str, Any]:
        """A deterministic chat request asking for one JSON object."""
        return {
            "model": self.model,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
        }

    @staticmethod
    def _answer(body: Any) -> Any:
        """The JSON object the model answered (a fenced block allowed)."""
        content = body["choices"][0]["message"]["content"]
        return json.loads(_FENCE.sub(r"\1", content.strip()))

    def _post(self, payload: dict[str, Any]) -> Any:
        """The endpoint's JSON answer, through the breaker; ExtractionError otherwise."""
        breaker = self.breaker
        if breaker is not None and not breaker.allow():
            raise BreakerOpen("LLM endpoint's breaker is open: extracting offline")
        try:
            body = self._call(payload)
        except ExtractionError:
            if breaker is not None:
                breaker.failed()
            raise
        if breaker is not None:
            breaker.succeeded()
        return body

    def _call(self, payload: dict[str, Any]) -> Any:
        """Attempts and retries within one budget of ``timeout_s``."""
        end = self._clock() + self.timeout_s
        attempts = self.max_retries + 1
        for attempt in range(1, attempts + 1):
            retry_after: float | None = None
            left = end - self._clock()
            if left <= 0:
                raise ExtractionError(f"LLM endpoint gave no answer within {self.timeout_s:g} s")
            try:
                with deadline.within(left):
                    response = self._client.post(self._url, json=payload, timeout=left)
            except httpx.TransportError as e:  # timeouts, refused and reset connections
                problem = f"{type(e).__name__}: {self._redact(str(e))}"
            except (httpx.HTTPError, httpx.InvalidURL) as e:  # not worth retrying
                raise ExtractionError(f"LLM request failed ({type(e).__name__})") from e
            else:
                status = response.status_code
                if status < 300:
                    try:
                        return response.json()
                    except ValueError as e:
                        raise ExtractionError("LLM endpoint answered with non-JSON") from e
                problem = f"HTTP {status}: {self._redact(response.text[:_SNIPPET_CHARS])}"
                if status < 500 and status not in _RETRY_STATUSES:
                    raise ExtractionError(f"LLM endpoint refused the request ({problem})")
                retry_after = _retry_after(response)
            if attempt == attempts:
                raise ExtractionError(f"LLM endpoint failed after {attempts} attempts ({problem})")
            delay = self._backoff(attempt, retry_after)
            if delay >= end - self._clock():
                raise ExtractionError(
                    f"LLM endpoint failed and its {self.timeout_s:g} s are spent ({problem})"
                )
            log.warning(
                "LLM call failed (%s); retry %d/%d in %.2fs",
                problem,
                attempt,
                self.max_retries,
                delay,
            )
            self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        """Exponential backoff with equal jitter; a server's Retry-After wins, capped."""
        if retry_after is not None:
            return min(retry_after, self.backoff_max_s)
        ceiling = min(self.backoff_max_s, self.backoff_s * 2.0 ** (attempt - 1))
        return ceiling / 2 + self._rng.uniform(0, ceiling / 2)

    def _redact(self, text: str) -> str:
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return text


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After", "")
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def parse_completion(body: Any) -> tuple[list[Fact], int]:
    """Facts and total tokens from a chat-completions answer; ExtractionError if unusable.

    Strict about the shape: the message must be a JSON object with a ``facts``
    list whose items are objects with non-empty string ``content``.  Lenient
    about values: an unknown category drops that fact, importance is coerced to
    a float and clamped to [0, 1] (missing: 0.5), entities keep their strings.
    Text is cleaned of what no brain stores (NUL, control characters, lone
    surrogates): a fact left with no words is dropped.
    """
    try:
        text = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as e:
        raise ExtractionError("LLM answer has no choices[0].message.content") from e
    if not isinstance(text, str):
        raise ExtractionError("LLM message content is not text")
    fenced = _FENCE.match(text.strip())
    try:
        data = json.loads(fenced.group(1) if fenced else text)
    except ValueError as e:
        raise ExtractionError("LLM message is not JSON") from e
    if not isinstance(data, dict) or not isinstance(data.get("facts"), list):
        raise ExtractionError('LLM message is not an object with a "facts" list')
    facts = [f for f in (_fact(item) for item in data["facts"]) if f is not None]
    usage = body.get("usage") if isinstance(body, dict) else None
    tokens = usage.get("total_tokens") if isinstance(usage, dict) else None
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
        tokens = 0
    return facts, tokens


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
    return Fact(
        content=content,
        category=category,
        importance=_importance(item.get("importance")),
        entities=_entities(item.get("entities")),
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
