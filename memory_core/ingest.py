"""Turn ingestion: an inbox row becomes an episode and the facts it holds.

A posted turn is first a row in ``inbox_turns`` (:mod:`memory_core.inbox`,
committed before the API answers), then, in a worker, an episodic trace
holding the exchange verbatim plus one trace per extracted fact.  The brain
is the truth: ingestion reads the inbox row, and writes the traces and marks the row done in one
transaction that first re-checks the row is still pending, so a redelivered
or duplicated job is a harmless no-op and no turn is ingested twice.

Workers ingest in batches: a job for one turn also takes other pending turns
(:mod:`memory_core.inbox.order`), so that one commit (one fsync) serves many
turns; the jobs for those turns then find them done.  One turn's failure is its
own: a batch that cannot be written is written turn by turn, and a turn that
still fails counts a failed attempt for itself alone.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from sqlalchemy import Connection, text

from memory_core import supersession
from memory_core.brain.db import Brain, raw_cursor
from memory_core.brain.failures import unavailable
from memory_core.episodes import fact_trace, turn_stream, turn_text
from memory_core.extraction import offline_extract
from memory_core.extraction.base import Extraction
from memory_core.extraction.offline import OfflineExtractor
from memory_core.inbox.order import CATCH_UP, pending_in_order
from memory_core.inbox.turns import record_failure
from memory_core.textutil import content_hash
from memory_core.traces.model import KNOWN_SQL, TURN_TAG, NewTrace
from memory_core.traces.store import insert_trace

log = logging.getLogger(__name__)


class Extract(Protocol):
    """A turn's facts: what it said (user, assistant) and when (epoch seconds)."""

    def __call__(self, user: str, assistant: str, *, when: float | None = None) -> Extraction: ...


@dataclass
class IngestReport:
    """What one ingestion call did, for metrics and the embed job."""

    ingested: list[str] = field(default_factory=list)  # turn ids newly ingested
    already_done: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    new_trace_ids: list[str] = field(default_factory=list)
    facts_by_category: dict[str, int] = field(default_factory=dict)
    duplicates_skipped: int = 0
    extractions: list[Extraction] = field(default_factory=list)
    lag_seconds: list[float] = field(default_factory=list)  # accepted -> committed
    failed: dict[str, str] = field(default_factory=dict)  # turn id -> why, this attempt

    def merge(self, more: IngestReport) -> None:
        """Add what a further round ingested."""
        self.ingested += more.ingested
        self.new_trace_ids += more.new_trace_ids
        for category, n in more.facts_by_category.items():
            self.facts_by_category[category] = self.facts_by_category.get(category, 0) + n
        self.duplicates_skipped += more.duplicates_skipped
        self.extractions += more.extractions
        self.lag_seconds += more.lag_seconds
        self.failed.update(more.failed)


def ingest_turns(
    brain: Brain,
    turn_ids: Sequence[str],
    extract: Extract,
    *,
    batch_extra: int = 0,
    now: float | None = None,
) -> IngestReport:
    """Ingest these turns (and up to ``batch_extra`` other pending ones).

    Extraction runs before the write transaction (an LLM may be slow); the
    transaction then writes only turns still pending, so concurrent workers
    never ingest a turn twice.  A turn with older turns of its conversation still
    pending is written after them: this call ingests them first, in rounds, until
    its own turns are done (or another worker did them).
    """
    report = _ingest_once(brain, turn_ids, extract, batch_extra, 0, now)
    # Turns behind older pending ones of their conversation: those are most likely
    # being ingested by their own jobs right now, so wait for them a little (no
    # second extraction, no second LLM call); then take them over.
    pause, take_over = _FIRST_PAUSE_S, time.monotonic() + _TAKE_OVER_S
    for _ in range(_MAX_ROUNDS):
        # A turn that failed in this call waits for a later one (reconcile's).
        waiting = [t for t in _still_pending(brain, turn_ids) if t not in report.failed]
        if not waiting:
            break
        late = time.monotonic() >= take_over
        if not late:
            time.sleep(pause)
            pause = min(pause * 2, _TAKE_OVER_S / 4)
        more = _ingest_once(brain, waiting, extract, batch_extra, CATCH_UP if late else 0, now)
        if late and not more.ingested:
            break
        report.merge(more)
    report.already_done = [t for t in report.already_done if t not in set(report.ingested)]
    return report


# Rounds one call goes on for while its turns wait behind older ones of their
# conversation; how long it leaves those to their own jobs before taking them over.
_MAX_ROUNDS = 10_000
_FIRST_PAUSE_S = 0.01
_TAKE_OVER_S = 1.0


def _still_pending(brain: Brain, turn_ids: Sequence[str]) -> list[str]:
    if not turn_ids:
        return []
    marks = ", ".join(f":t{i}" for i in range(len(turn_ids)))
    with brain.read() as conn:
        return [
            str(r[0])
            for r in conn.execute(
                text(f"SELECT id FROM inbox_turns WHERE id IN ({marks}) AND status = 'pending'"),
                {f"t{i}": t for i, t in enumerate(turn_ids)},
            )
        ]


def _ingest_once(
    brain: Brain,
    turn_ids: Sequence[str],
    extract: Extract,
    batch_extra: int,
    catch_up: int,
    now: float | None,
) -> IngestReport:
    """One round: the turns :func:`pending_in_order` takes, extracted, then written.

    The round's turns are written in one transaction.  When it fails, each turn is
    written in a transaction of its own (one turn's failure is never another's); a turn
    that still fails is written with the offline extractor's facts instead of its
    own, and one that fails even so is counted failed, alone (:func:`_write_alone`).
    """
    report = IngestReport()
    with brain.read() as conn:
        todo = pending_in_order(conn, turn_ids, batch_extra, catch_up)
        known = {r[0] for r in todo}
        if turn_ids:
            marks = ", ".join(f":t{i}" for i in range(len(turn_ids)))
            present = {
                r[0]
                for r in conn.execute(
                    text(f"SELECT id FROM inbox_turns WHERE id IN ({marks})"),
                    {f"t{i}": t for i, t in enumerate(turn_ids)},
                )
            }
            report.missing = [t for t in turn_ids if t not in present]
            report.already_done = [t for t in turn_ids if t in present and t not in known]
    extracted: list[_Extracted] = []
    for turn_id, payload, created_at in todo:
        data = json.loads(payload)
        when = float(data.get("timestamp") or created_at)
        try:
            extraction = extract(data["user"], data["assistant"], when=when)
        except Exception as e:  # a bug for this turn's words: the others go on
            log.exception("extraction of turn %s failed", turn_id)
            _failed(brain, report, turn_id, e)
            continue
        extracted.append(_Extracted(turn_id, data, created_at, when, extraction))
    if not extracted:
        return report
    try:
        written = _write(brain, extracted, turn_ids, now)
    except Exception as e:
        if unavailable(e):  # nobody's fault: the job is tried again as a whole
            raise
        if len(extracted) > 1:
            log.warning(
                "writing %d turns together failed (%s); writing each alone", len(extracted), e
            )
        for item in extracted:
            _write_alone(brain, item, turn_ids, now, report)
    else:
        _absorb(report, written)
    return report


@dataclass(frozen=True)
class _Extracted:
    """A pending turn read from the inbox, and its facts."""

    turn_id: str
    data: dict[str, Any]
    created_at: float
    when: float
    extraction: Extraction


def _write(
    brain: Brain, extracted: Sequence[_Extracted], turn_ids: Sequence[str], now: float | None
) -> IngestReport:
    """Write the turns still pending, in one transaction; what it wrote once committed."""
    report = IngestReport()
    with brain.transaction() as conn:
        stamp = time.time() if now is None else now
        subjects = supersession.KnownSubjects(conn)
        for item in extracted:
            still = _one(conn, "SELECT status FROM inbox_turns WHERE id = ?", (item.turn_id,))
            if still != "pending":
                if item.turn_id in turn_ids:
                    report.already_done.append(item.turn_id)
                continue
            _write_turn(
                conn, brain, item.turn_id, item.data, item.created_at, item.extraction, stamp,
                report, subjects,
            )  # fmt: skip
            report.extractions.append(item.extraction)
            report.lag_seconds.append(max(stamp - item.created_at, 0.0))
    return report


def _write_alone(
    brain: Brain,
    item: _Extracted,
    turn_ids: Sequence[str],
    now: float | None,
    report: IngestReport,
) -> None:
    """One turn in a transaction of its own: with its facts, else with the offline
    extractor's (a fact an LLM answered may be what cannot be written), else failed."""
    try:
        _absorb(report, _write(brain, [item], turn_ids, now))
        return
    except Exception as e:
        if unavailable(e):
            raise
        error: Exception = e
    if item.extraction.extractor != OfflineExtractor.name:
        log.warning(
            "turn %s could not be written with its facts (%s); extracting offline",
            item.turn_id,
            error,
        )
        try:
            offline = offline_extract(brain.settings)
            facts = offline(item.data["user"], item.data["assistant"], when=item.when)
            _absorb(report, _write(brain, [replace(item, extraction=facts)], turn_ids, now))
            return
        except Exception as e:
            if unavailable(e):
                raise
            error = e
    log.error("turn %s could not be ingested: %s", item.turn_id, error)
    _failed(brain, report, item.turn_id, error)


def _absorb(report: IngestReport, written: IngestReport) -> None:
    report.merge(written)
    report.already_done += written.already_done


def _failed(brain: Brain, report: IngestReport, turn_id: str, error: Exception) -> None:
    """Count one turn's failed attempt, for it alone (see :func:`record_failure`)."""
    report.failed[turn_id] = repr(error)
    record_failure(brain, [turn_id], repr(error), max_attempts=brain.settings.ingest_max_attempts)


def _write_turn(
    conn: Connection,
    brain: Brain,
    turn_id: str,
    data: dict[str, Any],
    created_at: float,
    extraction: Extraction,
    now: float,
    report: IngestReport,
    subjects: supersession.KnownSubjects,
) -> None:
    scope, scope_id = data["scope"], data["scope_id"]
    occurred = data.get("timestamp") or created_at
    speaker = _user_speaker(data)
    # The facts carry who said them, as the turn does: a search for what Ana said
    # finds them by her name, in their words and in their metadata.
    meta = {
        "turn_id": turn_id,
        **({"conversation_id": c} if (c := data.get("conversation_id")) else {}),
        **({"speaker": speaker} if speaker else {}),
    }
    metadata = {**data.get("metadata", {}), **meta}
    conversation = metadata.get("conversation_id")
    known = subjects.of(scope_id)
    turn_slots = supersession.slots_of(data["user"], known, speaker)
    episode = NewTrace(
        content=turn_text(data),
        type="episodic",
        scope=scope,
        scope_id=scope_id,
        tags=[TURN_TAG],
        metadata=metadata,
        sources=[{"turn": turn_id}],
        occurred_at=occurred,
        stream=turn_stream(scope, scope_id, str(conversation) if conversation else None),
        slot=turn_slots[0] if turn_slots else None,
    )
    episode_id = insert_trace(conn, brain, episode, now)
    report.new_trace_ids.append(episode_id)
    statements: dict[str, list[str]] = {episode.slot: [episode_id]} if episode.slot else {}
    subjects.add(scope_id, episode.slot)
    seen: set[str] = set()
    for fact in extraction.facts:
        item = fact_trace(fact, scope, scope_id, turn_id, episode_id, occurred, meta)
        digest = content_hash(item.content)
        if digest in seen or fact_exists(conn, digest, scope, scope_id):
            report.duplicates_skipped += 1
            continue
        seen.add(digest)
        item.slot = _fact_slot(fact.content, turn_slots, known, speaker)
        fact_id = insert_trace(conn, brain, item, now)
        if item.slot is not None:
            statements.setdefault(item.slot, []).insert(0, fact_id)
        report.new_trace_ids.append(fact_id)
        report.facts_by_category[fact.category] = report.facts_by_category.get(fact.category, 0) + 1
    if supersession.links_on_write(brain.settings, data["user"]):
        for slot, ids in statements.items():
            supersession.link(
                conn,
                ids,
                ids[0],
                scope=scope,
                scope_id=scope_id,
                slot=slot,
                at=float(occurred),
                said=data["user"],
            )
    _one(
        conn,
        "UPDATE inbox_turns SET status = 'done', processed_at = ?, updated_at = ?, "
        "attempts = attempts + 1, last_error = NULL WHERE id = ? AND status = 'pending'",
        (now, now, turn_id),
    )
    report.ingested.append(turn_id)


def _user_speaker(data: dict[str, Any]) -> str | None:
    """Who the user of a turn is, when the turn names them (``metadata.speaker``, or the
    name on its user message)."""
    named = data.get("metadata", {}).get("speaker")
    if isinstance(named, str) and named.strip():
        return named
    for message in data.get("messages") or []:
        if message.get("role") == "user" and message.get("name"):
            return str(message["name"])
    return None


def _fact_slot(
    content: str, turn_slots: Sequence[str], known: Collection[str], speaker: str | None
) -> str | None:
    """A fact's slot: what its own words state, when the user stated it in the turn
    (an attribution prefix, "User: ", is not part of the statement)."""
    said = content.split(": ", 1)[1] if content.startswith(("User: ", "Assistant: ")) else content
    slot = supersession.slot_of(said, known, speaker)
    return slot if slot in turn_slots else None


def fact_exists(conn: Connection, digest: str, scope: str, scope_id: str | None) -> bool:
    """A fact already stored in this scope: active, or deleted by a person (a fact a
    person deleted stays forgotten).  One a dream pass pruned for disuse is learnt
    again when it is said again."""
    sql = (
        "SELECT 1 FROM memory_traces WHERE content_hash = ? AND scope = ? "
        "AND scope_id IS NOT DISTINCT FROM ? "
        f"AND {KNOWN_SQL} LIMIT 1"
    )
    return _one(conn, sql, (digest, scope, scope_id)) is not None


def _one(conn: Connection, sql: str, params: tuple[Any, ...]) -> Any:
    """First column of the first row, on the driver's cursor (the ingest hot path)."""
    with raw_cursor(conn) as cursor:
        row = cursor.execute(sql, params).fetchone()
    return None if row is None else row[0]
