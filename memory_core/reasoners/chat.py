"""The ``chat`` reasoner: an OpenAI-compatible chat-completions endpoint.

``POST {llm_base_url}/chat/completions`` (so the base URL includes the version
path, e.g. ``https://api.openai.com/v1``) with ``response_format`` set to
``json_object``, temperature 0, the system prompt and the input as two messages.
Timeouts, connection errors, 429 and 5xx are retried with exponential backoff and
jitter, all within one call's budget of ``timeout_s``, a wall-clock deadline
(:mod:`memory_core.deadline`): a hung or slow-dripping endpoint costs a call
that much and no more.  After ``breaker_failures`` failed calls in a row
a breaker (:mod:`memory_core.reasoners.breaker`) refuses calls at once until a
probe succeeds.  Any failure is a :class:`~memory_core.errors.ReasonerError`.

The API key goes into the ``Authorization`` header only.  Log lines and error
messages never include it, the request URL or a response body unredacted.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Callable
from typing import Any

import httpx

from memory_core import deadline
from memory_core.errors import BreakerOpen, ConfigError, ReasonerError
from memory_core.reasoners.base import Answer, nonnegative
from memory_core.reasoners.breaker import Breaker
from memory_core.settings import Settings

log = logging.getLogger(__name__)

_RETRY_STATUSES = frozenset({408, 429})
_SNIPPET_CHARS = 200


class ChatReasoner:
    """Asks a chat model over HTTP; see the module docstring."""

    kind = "chat"

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
    def from_settings(cls, settings: Settings) -> ChatReasoner:
        """A reasoner for ``llm_base_url``; :class:`ConfigError` when it is not set."""
        if not settings.llm_base_url:
            raise ConfigError("the chat reasoner needs REVERIE_LLM_BASE_URL")
        return cls(
            settings.llm_base_url,
            settings.llm_model,
            api_key=settings.llm_api_key,
            timeout_s=settings.llm_timeout_s,
            max_retries=settings.llm_max_retries,
            breaker=Breaker(settings.llm_breaker_failures, settings.llm_breaker_probe_s),
        )

    def __repr__(self) -> str:  # never show the key
        return f"ChatReasoner(model={self.model!r})"

    def close(self) -> None:
        """Release the connection pool."""
        self._client.close()

    def ask(self, system: str, prompt: str) -> Answer:
        """The model's message for ``prompt`` under ``system``, and the tokens it used."""
        body = self._post(self._payload(system, prompt))
        try:
            text = body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as e:
            raise ReasonerError("LLM answer has no choices[0].message.content") from e
        if not isinstance(text, str):
            raise ReasonerError("LLM message content is not text")
        usage = body.get("usage") if isinstance(body, dict) else None
        tokens = nonnegative(usage.get("total_tokens") if isinstance(usage, dict) else None)
        return Answer(text, tokens)

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

    def _post(self, payload: dict[str, Any]) -> Any:
        """The endpoint's JSON answer, through the breaker; ReasonerError otherwise."""
        breaker = self.breaker
        if breaker is not None and not breaker.allow():
            raise BreakerOpen("LLM endpoint's breaker is open: extracting offline")
        try:
            body = self._call(payload)
        except ReasonerError:
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
                raise ReasonerError(f"LLM endpoint gave no answer within {self.timeout_s:g} s")
            try:
                with deadline.within(left):
                    response = self._client.post(self._url, json=payload, timeout=left)
            except httpx.TransportError as e:  # timeouts, refused and reset connections
                problem = f"{type(e).__name__}: {self._redact(str(e))}"
            except (httpx.HTTPError, httpx.InvalidURL) as e:  # not worth retrying
                raise ReasonerError(f"LLM request failed ({type(e).__name__})") from e
            else:
                status = response.status_code
                if status < 300:
                    try:
                        return response.json()
                    except ValueError as e:
                        raise ReasonerError("LLM endpoint answered with non-JSON") from e
                problem = f"HTTP {status}: {self._redact(response.text[:_SNIPPET_CHARS])}"
                if status < 500 and status not in _RETRY_STATUSES:
                    raise ReasonerError(f"LLM endpoint refused the request ({problem})")
                retry_after = _retry_after(response)
            if attempt == attempts:
                raise ReasonerError(f"LLM endpoint failed after {attempts} attempts ({problem})")
            delay = self._backoff(attempt, retry_after)
            if delay >= end - self._clock():
                raise ReasonerError(
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
