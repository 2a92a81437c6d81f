"""Supersession by meaning: statements the word cues miss, read with the embedder.

People rarely name the attribute they update ("Keys collected! The new cottage in
Harrogate ..." is a move).  Once a trace is embedded, what it says is compared
with a few written examples of each attribute
(:data:`memory_core.language.slots.EXAMPLES`); the nearest
attribute, when it is near enough and clearly nearer than talk about nothing
in particular, is the statement's.  A later statement then supersedes an
earlier one of the same scope id when both are about the same subject, share an
attribute (by these examples or by the word cues of
:mod:`memory_core.supersession.slots`) and are about the same thing: their own
vectors close enough that the later one plausibly restates the earlier one.

A turn is compared by what the user said in it (the assistant's reply says
nothing of the user), so its user part is embedded for this once.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, text

from memory_core.brain.db import Brain
from memory_core.embedders.base import Embedder
from memory_core.embeddings import from_blob, one_batch_at_a_time, to_blob
from memory_core.errors import EmbedderError
from memory_core.language.questions import attribute_asked
from memory_core.language.reading import attributes_allowed, states_only
from memory_core.language.slots import EXAMPLES
from memory_core.language.telling import looks_back
from memory_core.supersession.chain import KnownSubjects, supersede
from memory_core.supersession.slots import base_attribute, subject_asked, subjects_named
from memory_core.supersession.telling import (
    restates,
    restates_by_words,
    said_by,
    said_in,
    tells,
)

NONE = "none"
# How near an attribute's nearest example must be, and by how much nearer than
# the next attribute's.  Most of what people say in a chat states no attribute:
# read at 0.3, a tenth of a two-person conversation's turns superseded another
# ("Thanks, Mel! My goal is to give kids a loving home" replacing a talk about a
# poetry reading, as a pet); at 0.4 it was three in a hundred, and the update
# chains kept their figures.
MIN_SIMILARITY = 0.4
MIN_MARGIN = 0.02
# How close two statements' own vectors must be for the later to restate the earlier.
SAME_THING = 0.35
STATEMENT_TYPES = ("semantic", "episodic")


class Examples:
    """The examples' vectors, per embedder, made on first use (a brain's derived state)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_model: dict[str, tuple[list[str], npt.NDArray[np.float32]]] = {}

    def of(self, embedder: Embedder) -> tuple[list[str], npt.NDArray[np.float32]]:
        """Each example's attribute and the matrix of their vectors, one row each."""
        with self._lock:
            found = self._by_model.get(embedder.name)
            if found is None:
                owners = [name for name, texts in EXAMPLES.items() for _ in texts]
                vectors = embedder.embed([t for texts in EXAMPLES.values() for t in texts])
                found = self._by_model[embedder.name] = (owners, np.asarray(vectors))
            return found


def attribute_of(
    vector: npt.NDArray[np.float32], owners: Sequence[str], examples: npt.NDArray[np.float32]
) -> str | None:
    """The attribute whose examples ``vector`` is nearest, when near and clear enough."""
    sims = examples @ vector
    best: dict[str, float] = {}
    for owner, sim in zip(owners, sims.tolist(), strict=True):
        best[owner] = max(best.get(owner, -1.0), sim)
    ranked = sorted(best.items(), key=lambda kv: -kv[1])
    (name, top), (_, second) = ranked[0], ranked[1]
    if name == NONE or top < MIN_SIMILARITY or top - second < MIN_MARGIN:
        return None
    return name


@dataclass(frozen=True)
class _Statement:
    id: str
    scope: str
    scope_id: str | None
    said: str  # what the user said: a turn's user part, a memory's content
    slot: str | None
    occurred_at: float
    speaker: str | None
    turn_hash: str | None  # a turn's content hash (None: not a turn)
    whole: bool  # said is the trace's whole content, so the trace's own vector is its


def _user_label(content: str) -> str | None:
    """The name on a turn's user paragraph ("User (Ana): ..."), if it has one."""
    if content.startswith("User (") and (end := content.find("):")) > 0:
        return content[len("User (") : end]
    return None


def follow(brain: Brain, embedder: Embedder, trace_ids: Sequence[str]) -> int:
    """Let the just-embedded statements among ``trace_ids`` supersede earlier ones of
    the same subject, attribute and thing.  Returns how many traces they superseded.

    A statement the word cues gave no slot takes the one its examples give; the
    earlier statements it may supersede are those of its slots (by the slot index),
    so the cost of a statement does not grow with the scope id's history.
    """
    new = _statements(brain, trace_ids)
    if not new:
        return 0
    owners, examples = brain.state(Examples).of(embedder)
    vectors = _said_vectors(brain, embedder, new)
    superseded = 0
    with brain.transaction() as conn:
        subjects = KnownSubjects(conn)
        _keep_said(conn, embedder.name, new, vectors)
        for statement, vector in zip(new, vectors, strict=True):
            near = attribute_of(vector, owners, examples)
            # An attribute the statements model rules out is not the statement's, by
            # its nearest examples or by its words ("joined a mentorship programme").
            read = _attributes(statement.slot, near)
            attributes = attributes_allowed([statement.said], read)[0] if read else read
            if near not in attributes:
                near = None
            if not attributes:
                continue
            if statement.slot is not None:
                subject = statement.slot.split("/", 1)[0]
            else:
                known = subjects.of(statement.scope_id)
                subject = subjects_named(statement.said, known, statement.speaker)
            if statement.slot is None and near is not None:
                conn.execute(
                    text("UPDATE memory_traces SET slot = :slot WHERE id = :id AND slot IS NULL"),
                    {"slot": f"{subject}/{near}", "id": statement.id},
                )
                subjects.add(statement.scope_id, f"{subject}/{near}")
            slots = sorted(f"{subject}/{a}" for a in attributes)
            marks = " OR ".join(f"t.slot = :s{i} OR t.slot LIKE :p{i}" for i in range(len(slots)))
            rows = conn.execute(
                text(
                    "SELECT t.id, t.content, t.slot, t.occurred_at, e.vector FROM memory_traces t "
                    "JOIN trace_embeddings e ON e.trace_id = t.id AND e.model = :model "
                    "WHERE t.scope_id IS NOT DISTINCT FROM :sid "
                    f"AND ({marks}) AND t.scope = :scope "
                    "AND t.deleted = 0 AND t.id != :id "
                    "AND (t.valid_until IS NULL OR t.valid_until > :at)"
                ),
                {
                    "model": embedder.name,
                    "scope": statement.scope,
                    "sid": statement.scope_id,
                    "at": statement.occurred_at,
                    "id": statement.id,
                    **{f"s{i}": slot for i, slot in enumerate(slots)},
                    **{f"p{i}": f"{slot}:%" for i, slot in enumerate(slots)},
                },
            ).all()
            topic = _topic(statement.slot)
            at = statement.occurred_at
            earlier = [r for r in rows if r.occurred_at < at]
            if replaces(statement.said):
                older = [
                    str(r.id)
                    for r in earlier
                    if _same_thing(vector, statement.said, topic, r) and _only_of(r.content, r)
                ]
                superseded += supersede(conn, older, statement.id, at=at)
            # Said after this one but known before it (turns arrive out of order): this
            # one held until the first of them that restates it.
            later = sorted((r for r in rows if r.occurred_at > at), key=lambda r: r.occurred_at)
            for r in later:
                if (
                    replaces(said_in(r.content))
                    and _same_thing(vector, said_in(r.content), topic, r, after=statement.said)
                    and _only_of(statement.said, r)
                ):
                    supersede(conn, [statement.id], str(r.id), at=float(r.occurred_at))
                    break
    return superseded


def _said_vectors(
    brain: Brain, embedder: Embedder, statements: Sequence[_Statement]
) -> npt.NDArray[np.float32]:
    """The vectors of what ``statements`` say, one row each, in their order.

    A statement that is its trace's whole content (a memory written as is) has the
    trace's own vector, stored by the embed job before this; other texts are embedded
    once each, however many statements say them (a one-sentence message and the fact
    taken from it say the same words).
    """
    stored: dict[str, npt.NDArray[np.float32]] = {}
    whole = [s.id for s in statements if s.whole]
    if whole:
        marks = ", ".join(f":t{i}" for i in range(len(whole)))
        with brain.read() as conn:
            rows = conn.execute(
                # A trace's vector is of its present words: rewriting them drops it.
                text(
                    "SELECT trace_id, vector FROM trace_embeddings "
                    f"WHERE model = :model AND trace_id IN ({marks})"
                ),
                {"model": embedder.name, **{f"t{i}": t for i, t in enumerate(whole)}},
            ).all()
        stored = {str(r.trace_id): from_blob(r.vector) for r in rows}
    texts = list(dict.fromkeys(s.said for s in statements if s.id not in stored))
    made: dict[str, npt.NDArray[np.float32]] = {}
    if texts:
        with one_batch_at_a_time(embedder, urgent=False):  # traces' own vectors first
            made = dict(zip(texts, np.asarray(embedder.embed(texts)), strict=True))
    return np.stack([stored[s.id] if s.id in stored else made[s.said] for s in statements]).astype(
        np.float32, copy=False
    )


def _keep_said(
    conn: Connection, model: str, statements: Sequence[_Statement], vectors: Any
) -> None:
    """Keep the vectors of what the user said in turns (``said_embeddings``)."""
    rows = [
        {"id": st.id, "model": model, "hash": st.turn_hash, "vector": to_blob(vector)}
        for st, vector in zip(statements, vectors, strict=True)
        if st.turn_hash is not None
    ]
    if rows:
        conn.execute(
            text(
                "INSERT INTO said_embeddings (trace_id, model, content_hash, vector) "
                "VALUES (:id, :model, :hash, :vector) ON CONFLICT (trace_id, model) DO UPDATE "
                "SET content_hash = excluded.content_hash, vector = excluded.vector"
            ),
            rows,
        )


def asked(
    question: str, vector: npt.NDArray[np.float32] | None, brain: Brain, embedder: Embedder | None
) -> frozenset[str]:
    """The slots (subject/attribute, without a topic) a question asks the value of:
    its subject, and its attribute by word cues and, given its vector and the
    embedder that made it, by the examples."""
    attributes = set()
    if (cued := attribute_asked(question)) is not None:
        attributes.add(cued)
    if vector is not None and embedder is not None:
        try:
            owners, examples = brain.state(Examples).of(embedder)
        except EmbedderError:
            owners, examples = [], np.zeros((0, 0), np.float32)
        if owners and (near := attribute_of(vector, owners, examples)) is not None:
            attributes.add(near)
    subject = subject_asked(question)
    return frozenset(f"{subject}/{a}" for a in attributes)


def _attributes(slot: str | None, semantic: str | None) -> set[str]:
    out = {semantic} if semantic is not None else set()
    if slot is not None:
        out.add(base_attribute(slot))
    return out


def _same_thing(
    new: npt.NDArray[np.float32],
    new_said: str,
    topic: str | None,
    row: Any,
    *,
    after: str | None = None,
) -> bool:
    """Whether an earlier statement of the same slot (``row``) states the same thing
    as the new one (its vector ``new``, its slot's ``topic``): close in meaning, not a
    question, and not of another topic (a habit of coffee is not one of running).
    A change of what holds one value at a time ("We moved to York" after "I live in
    Leeds") needs no closeness: its words say it replaces the value, as they do
    without an embedder."""
    said = said_in(row.content)
    if not said or said.rstrip().endswith("?"):
        return False
    their_topic = _topic(row.slot)
    if topic and their_topic and their_topic != topic:
        return False
    later, earlier = (said, after) if after is not None else (new_said, said)
    if restates_by_words(later, earlier, str(row.slot)):
        return True
    if float(new @ from_blob(row.vector)) < SAME_THING:
        return False
    return restates(later, earlier)


def _only_of(said: str, row: Any) -> bool:
    """Whether what an earlier statement says is all of the attribute of the slot a
    later one shares with it (``row``'s): a turn that also says something else ("Hi!
    I'm Kim. I work as a nurse.") is not replaced whole by a change of one attribute."""
    return states_only(said_in(said), base_attribute(str(row.slot)))


def replaces(said: str) -> bool:
    """Whether a statement may replace an earlier value at all: it tells news (not a
    question, a request or a remark) about how things are, not how they were ("found
    my old shopify hoodie")."""
    return tells(said) and not looks_back(said)


def _topic(slot: str | None) -> str | None:
    """A slot's topic: "user/habit:coffee" -> "habit:coffee"; None when it has none."""
    if slot is None or ":" not in slot:
        return None
    return slot.split("/", 1)[-1]


def _statements(brain: Brain, trace_ids: Sequence[str]) -> list[_Statement]:
    if not trace_ids:
        return []
    marks = ", ".join(f":t{i}" for i in range(len(trace_ids)))
    with brain.read() as conn:
        rows = conn.execute(
            text(
                "SELECT id, scope, scope_id, content, slot, occurred_at, tags, metadata, "
                "content_hash "
                f"FROM memory_traces WHERE id IN ({marks}) AND deleted = 0 "
                f"AND type IN {STATEMENT_TYPES!r}"
            ),
            {f"t{i}": t for i, t in enumerate(trace_ids)},
        ).all()
    out = []
    for r in rows:
        is_turn = '"turn"' in r.tags
        speaker = json.loads(r.metadata).get("speaker") or _user_label(r.content)
        speaker = speaker if isinstance(speaker, str) else None
        # A turn's user part; a fact's words without the label of who said them
        # ("User: ...", "Ana: ..."), which are not part of the statement.
        said = said_by(said_in(r.content), speaker)
        if not said.strip() or said.rstrip().endswith("?"):
            continue
        turn_hash = r.content_hash if is_turn else None
        out.append(
            _Statement(
                r.id,
                r.scope,
                r.scope_id,
                said,
                r.slot,
                r.occurred_at,
                speaker,
                turn_hash,
                whole=said == r.content,
            )
        )
    return sorted(out, key=lambda s: s.occurred_at)
