"""Reading by level, and the context call: what an agent puts in its prompt.

:func:`read_at` answers one memory at the depth asked (:data:`levels.LEVELS`):
its abstract, an outline, the whole trace, or the raw turns and traces it came
from.  :func:`context` searches and writes the best memories into one block,
dated and with their ids, within a token budget: whole while they fit, by their
abstract when only that fits, and says how many it left out.
"""

from __future__ import annotations

import json
import math
from typing import Any

from sqlalchemy import text

from memory_core import timeref
from memory_core.auth import Identity
from memory_core.brain.db import Brain
from memory_core.errors import InvalidArgument
from memory_core.retrieval.query_embedding import SearchEmbedder
from memory_core.retrieval.rerank import Reranker
from memory_core.retrieval.search import search
from memory_core.traces import levels
from memory_core.traces.model import TURN_TAG, Trace
from memory_core.traces.store import MAX_PAGE, fetch_trace, get_trace, list_traces, visible

# How many of a search's best the context call considers.
CONTEXT_CANDIDATES = 20
MIN_BUDGET, MAX_BUDGET = 50, 32_000


def _line(trace: Trace, words: str) -> str:
    """A memory as a line of a block: when it happened, its id, its words."""
    return f"- [{timeref.iso(trace.occurred_at)[:10]}] ({trace.id}) {words}"


def estimate_tokens(words: str) -> int:
    """An LLM's tokens for a text, estimated at four characters each (what common
    tokenizers average on English; no model's own tokenizer is assumed)."""
    return math.ceil(len(words) / 4)


def read_at(brain: Brain, trace_id: str, level: str, *, identity: Identity) -> dict[str, Any]:
    """One memory at ``level``: ``full`` is the trace as :func:`get_trace` gives it; the
    others are its id, kind and dates with its abstract (``abstract``), a line per
    paragraph (``outline``), or the verbatim turns and the traces it came from
    (``sources``)."""
    if level not in levels.LEVELS:
        raise InvalidArgument(f"level must be one of {', '.join(levels.LEVELS)}; got {level!r}")
    trace = get_trace(brain, trace_id, identity=identity)
    if level == "full":
        return trace.to_dict()
    out: dict[str, Any] = {
        "id": trace.id,
        "level": level,
        "type": trace.type,
        "scope": trace.scope,
        "scope_id": trace.scope_id,
        "occurred_at": timeref.iso(trace.occurred_at),
        "abstract": levels.abstract(trace),
    }
    if level == "outline":
        out["outline"] = levels.outline(trace)
    if level == "sources":
        out.update(_sources(brain, trace, identity))
    return out


def _sources(brain: Brain, trace: Trace, identity: Identity) -> dict[str, Any]:
    """The turns a trace was taken from, verbatim, and the traces it cites."""
    cited = [str(s["trace"]) for s in trace.sources if isinstance(s, dict) and "trace" in s]
    turn_ids = [str(s["turn"]) for s in trace.sources if isinstance(s, dict) and "turn" in s]
    own = trace.metadata.get("turn_id")
    if isinstance(own, str) and own not in turn_ids:  # a turn's episode: its own turn
        turn_ids.append(own)
    with brain.read() as conn:
        traces = [fetch_trace(conn, i) for i in dict.fromkeys(cited)]
        rows = conn.execute(
            text(
                "SELECT id, payload FROM inbox_turns "
                "WHERE id IN (SELECT value FROM json_each(:ids))"
            ),
            {"ids": json.dumps(turn_ids)},
        ).all()
    turns = []
    for r in sorted(rows, key=lambda r: turn_ids.index(r.id)):
        payload = json.loads(r.payload)
        if not identity.sees(payload.get("scope_id"), payload.get("scope")):
            continue
        said = {k: payload[k] for k in ("user", "assistant", "messages") if payload.get(k)}
        at = payload.get("timestamp")
        turns.append({"turn_id": r.id, "timestamp": timeref.iso(at) if at else None, **said})
    return {
        "turns": turns,
        "traces": [
            {"id": t.id, "type": t.type, "content": t.content}
            for t in traces
            if t is not None and visible(t, identity)
        ],
    }


def context(
    brain: Brain,
    query: str,
    *,
    identity: Identity,
    budget_tokens: int = 1000,
    scope: str | None = None,
    scope_id: str | None = None,
    embedder: SearchEmbedder = None,
    reranker: Reranker | None = None,
) -> dict[str, Any]:
    """The best memories for ``query`` as one block to put in a prompt, within
    ``budget_tokens`` (estimated, :func:`estimate_tokens`): each line dated and with
    its id, a memory whole while it fits, else its abstract; the rest left out."""
    if not MIN_BUDGET <= budget_tokens <= MAX_BUDGET:
        raise InvalidArgument(
            f"budget_tokens: between {MIN_BUDGET} and {MAX_BUDGET}; got {budget_tokens}"
        )
    found = search(
        brain,
        query,
        scope=scope,
        scope_id=scope_id,
        limit=CONTEXT_CANDIDATES,
        identity=identity,
        embedder=embedder,
        reranker=reranker,
    )
    header = f"Memories relevant to: {levels.line(query)}"
    lines = [header]
    used = estimate_tokens(header)
    shown: list[dict[str, Any]] = []
    said: set[str] = set()  # the words already in the block: a memory is shown once
    for hit in found.results:
        t = hit.trace
        if _said(t, said):
            continue
        for depth, words in (
            ("full", " ".join(t.content.split())),
            ("abstract", levels.abstract(t)),
        ):
            line = _line(t, words)
            cost = estimate_tokens(line) + 1
            if used + cost <= budget_tokens:
                lines.append(line)
                used += cost
                shown.append(
                    {"id": t.id, "occurred_at": timeref.iso(t.occurred_at), "level": depth}
                )
                break
    return {
        "context": "\n".join(lines) if shown else "",
        "tokens": used if shown else 0,
        "budget_tokens": budget_tokens,
        "memories": shown,
        "left_out": len(found.results) - len(shown),
        "degraded": found.degraded,
    }


def _said(trace: Trace, said: set[str]) -> bool:
    """Whether ``said`` already holds the trace's words (spaces aside); notes them if not:
    the same words kept twice (two turns telling one fact) are shown once."""
    words = " ".join(trace.content.split())
    if words in said:
        return True
    said.add(words)
    return False


def known_of(brain: Brain, scope_id: str, *, identity: Identity, budget_tokens: int = 800) -> str:
    """What is known of one user, newest stored first, as a block to open a session
    with: each memory's abstract, dated and with its id, within ``budget_tokens``; the
    turns' verbatim episodes are left out (their facts say it shorter).  "" when none."""
    if not MIN_BUDGET <= budget_tokens <= MAX_BUDGET:
        raise InvalidArgument(
            f"budget_tokens: between {MIN_BUDGET} and {MAX_BUDGET}; got {budget_tokens}"
        )
    header = f"What you remember of {scope_id} (memory_search and memory_read for more):"
    lines, used = [header], estimate_tokens(header)
    page = list_traces(brain, scope_id=scope_id, limit=MAX_PAGE, identity=identity)
    said: set[str] = set()
    for t in page.traces:
        if TURN_TAG in t.tags or t.superseded_by is not None or _said(t, said):
            continue
        line = _line(t, levels.abstract(t))
        cost = estimate_tokens(line) + 1
        if used + cost > budget_tokens:
            break
        lines.append(line)
        used += cost
    return "\n".join(lines) if len(lines) > 1 else ""
