"""Conflicts: two statements of a one-valued slot that both still hold.

Supersession as statements are written (:mod:`.semantic`, :mod:`.chain`) links a
later statement to an earlier one only when it is sure the later restates the
earlier.  What it leaves may still disagree: "I live in Leeds" and, months later,
"Our flat in York finally has a garden" both hold as current.  :func:`standing`
finds such pairs for a judge (the LLM, when one is configured) or a person (a
``conflict`` proposal) to settle: statements of one subject and of a slot that
holds one value at a time -- where someone lives or works, their relationship or
vehicle, the amount of one habit, the dose of one drug -- both telling news, the
later naming specifics the earlier does not, and close enough in meaning to be
about the same thing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import groupby
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, Row, text

from memory_core.embeddings import from_blob
from memory_core.language.slots import SINGLE_VALUED
from memory_core.supersession.chain import with_facts
from memory_core.supersession.semantic import replaces
from memory_core.supersession.slots import base_attribute
from memory_core.supersession.telling import restates, said_by, said_in

# Attributes whose values are many, each of one topic holding one value: how much
# coffee, which dose of sertraline.  Their slots name the topic ("user/habit:coffee").
_ONE_VALUE_PER_TOPIC = frozenset({"habit", "medication"})
# Two statements of a slot less alike than this are about different things ("my job
# at the shelter" and "the mural I'm painting for work"): not a conflict.
RELATED = 0.25

_HELD = text(
    "SELECT id, scope, scope_id, slot, content, tags, occurred_at, created_at, "
    "json_extract(metadata, '$.speaker') AS speaker "
    "FROM memory_traces WHERE deleted = 0 AND slot IS NOT NULL AND valid_until IS NULL "
    "AND type IN ('semantic', 'episodic') ORDER BY scope, scope_id, slot, occurred_at, seq"
)


@dataclass(frozen=True)
class Held:
    """A statement still holding: the trace that stands for it and what it says."""

    id: str
    scope: str
    scope_id: str | None
    slot: str
    said: str
    occurred_at: float
    created_at: float


@dataclass(frozen=True)
class Standing:
    """Two statements of one slot, both holding; ``newer`` may replace ``older``."""

    older: Held
    newer: Held
    similarity: float | None  # of their vectors, when both have one


def one_valued(slot: str) -> bool:
    """Whether a slot holds one value at a time."""
    attribute = base_attribute(slot)
    return attribute in SINGLE_VALUED or (attribute in _ONE_VALUE_PER_TOPIC and ":" in slot)


def standing(conn: Connection, model: str | None) -> list[Standing]:
    """Every pair of successive statements of a one-valued slot, in one scope id, that
    both hold and disagree, oldest first.  With a model, the statements' vectors of it
    must be :data:`RELATED` (a statement without one is compared by words alone)."""
    rows = [r for r in conn.execute(_HELD) if one_valued(str(r.slot))]
    statements = [_held(group) for _, group in groupby(rows, key=_statement_key)]
    vectors = _vectors(conn, model, [s.id for s in statements]) if model else {}
    found = []
    for _, group in groupby(statements, key=lambda s: (s.scope, s.scope_id, s.slot)):
        earlier: Held | None = None
        for statement in group:
            if not replaces(statement.said):
                continue
            if earlier is not None and restates(statement.said, earlier.said):
                similarity = _similarity(vectors, earlier.id, statement.id)
                if similarity is None or similarity >= RELATED:
                    found.append(Standing(earlier, statement, similarity))
            earlier = statement
    return found


def statement_of(conn: Connection, trace_id: str) -> list[str]:
    """The traces of the statement ``trace_id`` stands for that still hold (a turn and
    its facts of the same slot) and the facts drawn from them: what superseding it
    changes."""
    rows = conn.execute(
        text(
            "SELECT s.id FROM memory_traces t JOIN memory_traces s ON s.scope = t.scope "
            "AND s.scope_id IS NOT DISTINCT FROM t.scope_id AND s.slot = t.slot "
            "AND s.occurred_at = t.occurred_at "
            "WHERE t.id = :id AND s.deleted = 0 AND s.valid_until IS NULL"
        ),
        {"id": trace_id},
    )
    return with_facts(conn, [str(r.id) for r in rows])


def _statement_key(r: Row[Any]) -> tuple[Any, ...]:
    """The traces of one turn or add share their slot and their time."""
    return (r.scope, r.scope_id, r.slot, r.occurred_at)


def _held(group: Iterable[Row[Any]]) -> Held:
    """The trace standing for one statement: a fact drawn from the turn rather than the
    turn, whose words include the assistant's."""
    rows = list(group)
    row = next((r for r in rows if "turn" not in json.loads(r.tags)), rows[0])
    return Held(
        id=str(row.id),
        scope=str(row.scope),
        scope_id=row.scope_id,
        slot=str(row.slot),
        said=said_by(said_in(str(row.content)), row.speaker),
        occurred_at=float(row.occurred_at),
        created_at=float(row.created_at),
    )


def _vectors(conn: Connection, model: str, ids: list[str]) -> dict[str, npt.NDArray[np.float32]]:
    if not ids:
        return {}
    rows = conn.execute(
        text(
            "SELECT trace_id, vector FROM trace_embeddings WHERE model = :model "
            "AND trace_id IN (SELECT value FROM json_each(:ids))"
        ),
        {"model": model, "ids": json.dumps(ids)},
    )
    return {str(r.trace_id): from_blob(r.vector) for r in rows}


def _similarity(vectors: dict[str, npt.NDArray[np.float32]], a: str, b: str) -> float | None:
    if a not in vectors or b not in vectors:
        return None
    return float(vectors[a] @ vectors[b])
