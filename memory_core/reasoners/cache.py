"""Judgements kept by their question, so that no pass pays twice for one.

A question is keyed by a digest of who answers it (the reasoner's kind and model),
what was asked (the kind of question and a digest of its prompt, so a reworded
prompt asks afresh) and its input, for one scope and scope id.  The row holds the
*checked* answer -- what the caller's validation made of it -- so a cached
judgement is exactly what asking again would have given when it was asked.

Rows older than ``REVERIE_JUDGE_CACHE_DAYS`` are not read; the re-index step of a
pass deletes them and trims the table to ``REVERIE_JUDGE_CACHE_MAX`` rows, the
oldest first.  Forgetting a scope id deletes its rows with the rest of its words.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlalchemy import Connection, text

from memory_core.brain.db import Brain
from memory_core.settings import Settings

DAY_S = 86_400.0


def question_key(
    answerer: str, question: str, prompt_version: str, asked: str, scope: str, scope_id: str | None
) -> str:
    """The digest a question is kept under (``answerer``: the reasoner's kind and model)."""
    parts = [answerer, question, prompt_version, scope, scope_id or "", asked]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


class JudgementCache:
    """Reads and writes kept judgements in the brain (nothing, when the age bound is 0)."""

    def __init__(self, brain: Brain, settings: Settings, now: float) -> None:
        self._brain = brain
        self._now = now
        self._max_age_s = settings.judge_cache_days * DAY_S
        self.enabled = settings.judge_cache_days > 0 and settings.judge_cache_max > 0

    def get(self, key: str) -> Any | None:
        """The answer kept under ``key`` and young enough, or None."""
        if not self.enabled:
            return None
        with self._brain.read() as conn:
            raw = conn.execute(
                text("SELECT answer FROM judgement_cache WHERE key = :k AND created_at >= :since"),
                {"k": key, "since": self._now - self._max_age_s},
            ).scalar()
        return None if raw is None else json.loads(raw)

    def put(self, key: str, question: str, scope: str, scope_id: str | None, answer: Any) -> None:
        """Keep ``answer`` (JSON-able) under ``key``, replacing an older one."""
        if not self.enabled:
            return
        with self._brain.transaction() as conn:
            conn.execute(
                text(
                    "INSERT INTO judgement_cache (key, question, scope, scope_id, answer, "
                    "created_at) VALUES (:k, :q, :scope, :sid, :a, :at) ON CONFLICT (key) "
                    "DO UPDATE SET answer = excluded.answer, created_at = excluded.created_at"
                ),
                {
                    "k": key,
                    "q": question,
                    "scope": scope,
                    "sid": scope_id,
                    "a": json.dumps(answer, ensure_ascii=False),
                    "at": self._now,
                },
            )


def trim(conn: Connection, settings: Settings, now: float) -> int:
    """Delete kept judgements past their age, then the oldest beyond the size bound;
    how many went."""
    gone = conn.execute(
        text("DELETE FROM judgement_cache WHERE created_at < :since"),
        {"since": now - settings.judge_cache_days * DAY_S},
    ).rowcount
    if settings.judge_cache_max == 0:
        return int(gone + conn.execute(text("DELETE FROM judgement_cache")).rowcount)
    gone += conn.execute(  # all but the newest max
        text(
            "DELETE FROM judgement_cache WHERE key NOT IN (SELECT key FROM judgement_cache "
            "ORDER BY created_at DESC, key LIMIT :n)"
        ),
        {"n": settings.judge_cache_max},
    ).rowcount
    return int(gone)


def forget(conn: Connection, scope_id: str, scope: str | None) -> int:
    """Delete the judgements asked for ``scope_id`` (of ``scope`` only, when given)."""
    return int(
        conn.execute(
            text(
                "DELETE FROM judgement_cache WHERE scope_id = :sid "
                "AND (CAST(:scope AS TEXT) IS NULL OR scope = :scope)"
            ),
            {"sid": scope_id, "scope": scope},
        ).rowcount
    )
