"""The pass's judge: the configured reasoner's second opinion, cached and bounded.

A dream pass asks the reasoner (``REVERIE_REASONER``: the chat endpoint or the host
agent's command line) three things: whether a pair the verifier passed is one fact
(its "no" wins), whether a later statement replaces an earlier one, and the digest
of a cluster.  Each question is first looked up in the brain's judgement cache
(:mod:`memory_core.reasoners.cache`): a question asked before is answered from it,
at no cost.  The rest are asked, at most ``REVERIE_DREAM_MAX_JUDGE_CALLS`` a pass;
past that bound, after three failures in a pass, or while the reasoner's breaker is
open, the pass keeps its offline verdict.  :class:`Spend` says what the pass spent:
questions asked and answered from the cache, tokens, seconds, and what it did not
ask and why; it goes into the pass's report and metrics.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from typing import Any

from memory_core.brain.db import Brain
from memory_core.consolidation.verify import Verdict
from memory_core.errors import BreakerOpen, ExtractionError
from memory_core.extraction.llm import (
    LLMExtractor,
    Question,
    insight_question,
    replaces_question,
    same_fact_question,
)
from memory_core.reasoners.cache import JudgementCache, question_key
from memory_core.settings import Settings

log = logging.getLogger(__name__)


@dataclass
class Spend:
    """What one pass's judge spent, and what it left to the offline verdicts."""

    reasoner: str  # kind:model
    max_calls: int
    calls: int = 0  # questions the reasoner was asked
    cached: int = 0  # answered from the judgement cache
    failed: int = 0  # asked, without a usable answer
    over_budget: int = 0  # not asked: the pass's calls were spent
    not_asked: int = 0  # not asked: too many failures in the pass, or the breaker open
    tokens: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["seconds"] = round(self.seconds, 3)
        return doc


class PassJudge:
    """Asks one pass's questions; see the module docstring.  A question that cannot be
    answered is None to the caller, which keeps its own verdict."""

    MAX_FAILURES = 3

    def __init__(self, extractor: LLMExtractor, cache: JudgementCache, max_calls: int) -> None:
        self._extractor = extractor
        self._cache = cache
        self._failures = 0
        reasoner = extractor.reasoner
        self._answerer = f"{reasoner.kind}:{reasoner.model}"
        self.spend = Spend(self._answerer, max_calls)

    @classmethod
    def from_settings(cls, brain: Brain, settings: Settings, now: float) -> PassJudge:
        return cls(
            LLMExtractor.from_settings(settings),
            JudgementCache(brain, settings, now),
            settings.dream_max_judge_calls,
        )

    def __call__(
        self, older: str, newer: str, verdict: Verdict, *, scope: str, scope_id: str | None
    ) -> Verdict:
        """The verifier's ``verdict`` on a pair, unless the reasoner judges them
        different facts."""
        answer = self._answer(same_fact_question(older, newer), scope, scope_id)
        if answer is None or answer[0]:
            return verdict
        return Verdict(False, "llm", f"the LLM judged them different: {answer[1] or 'no reason'}")

    def replaces(
        self, older: str, newer: str, *, scope: str, scope_id: str | None
    ) -> tuple[bool | None, str]:
        """Whether ``newer`` replaces ``older`` and why; None when the reasoner cannot
        tell or is not asked."""
        answer = self._answer(replaces_question(older, newer), scope, scope_id)
        if answer is None:
            return None, self._why_not
        return answer[0], str(answer[1])

    def summarize(self, memories: list[str], *, scope: str, scope_id: str | None) -> str | None:
        """The reasoner's digest of dated memories; None when there is none."""
        answer = self._answer(insight_question(memories), scope, scope_id)
        return None if answer is None else str(answer)

    def close(self) -> None:
        self._extractor.close()

    @property
    def _why_not(self) -> str:
        if self._failures >= self.MAX_FAILURES:
            return "the LLM failed too often in this pass"
        if self.spend.over_budget:
            return "the pass's judge calls are spent (REVERIE_DREAM_MAX_JUDGE_CALLS)"
        return "the LLM could not be asked"

    def _answer(self, question: Question, scope: str, scope_id: str | None) -> Any | None:
        """``question``'s checked answer, from the cache or asked; None without one."""
        key = question_key(
            self._answerer, question.kind, question.prompt_version, question.input, scope, scope_id
        )
        kept = self._cache.get(key)
        if kept is not None:
            self.spend.cached += 1
            return kept
        if self._failures >= self.MAX_FAILURES:
            self.spend.not_asked += 1
            return None
        if self.spend.calls >= self.spend.max_calls:
            self.spend.over_budget += 1
            return None
        started = time.perf_counter()
        try:
            answer, tokens = self._extractor.ask(question)
        except BreakerOpen as e:
            self._failures += 1
            self.spend.not_asked += 1
            log.warning("%s judgement not asked, keeping the pass's own: %s", question.kind, e)
            return None
        except ExtractionError as e:  # it was asked: the call counts
            self._failures += 1
            self.spend.calls += 1
            self.spend.failed += 1
            log.warning("%s judgement failed, keeping the pass's own: %s", question.kind, e)
            return None
        finally:
            self.spend.seconds += time.perf_counter() - started
        self.spend.calls += 1
        self.spend.tokens += tokens
        self._cache.put(key, question.kind, scope, scope_id, answer)
        return answer
