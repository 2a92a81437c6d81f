"""Which pending turns an ingest job takes, and in what order: never a turn of a
conversation ahead of one posted before it.

Workers ingest in batches (:mod:`memory_core.ingest`); a job for some turns takes
along what comes before them in their conversations, and others waiting, so that
one commit serves many turns while each conversation is written in the order it
was said.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, text

# How many older pending turns of its conversation a job takes over before its own.
CATCH_UP = 64


def pending_in_order(
    conn: Connection, turn_ids: Sequence[str], extra: int, catch_up: int = CATCH_UP
) -> list[tuple[str, str, float]]:
    """The turns one round of a job ingests, in the order a conversation had them.

    A job takes for each given turn the pending turns posted before it in its
    conversation (up to ``extra`` or ``catch_up`` of them, oldest first), and the
    given turn itself when none is left behind: a turn is never written ahead of one
    posted before it in its stream.  Jobs for turns of different conversations so
    work apart.  What room ``extra`` leaves goes to the oldest pending turns of any
    conversation.  Within the batch, by the turn's own time when it gave one, else
    when it was accepted, and in the order they were posted (the inbox's row order)
    on a tie -- turns committed together share their acceptance time, and ids are
    random."""
    given: list[Any] = []
    if turn_ids:
        marks = ", ".join(f":t{i}" for i in range(len(turn_ids)))
        given = [
            r
            for r in conn.execute(
                text(f"SELECT {_COLUMNS} FROM inbox_turns WHERE id IN ({marks})"),
                {f"t{i}": t for i, t in enumerate(turn_ids)},
            )
            if r.status == "pending"
        ]
    rows = _with_what_comes_before(conn, given, max(extra, catch_up))
    if extra > 0:
        taken = {r.id for r in rows}
        room = extra + len(given) - len(taken)
        if room > 0:
            oldest = conn.execute(
                text(
                    f"SELECT {_COLUMNS} FROM inbox_turns "
                    "WHERE status = 'pending' ORDER BY rowid LIMIT :n"
                ),
                {"n": room + len(taken)},
            ).all()
            rows += [r for r in oldest if r.id not in taken][:room]
    seen: dict[str, tuple[float, int, str, str, float]] = {}
    for r in rows:
        if r.id not in seen:
            when = json.loads(r.payload).get("timestamp") or r.created_at
            seen[r.id] = (float(when), int(r.posted), r.id, r.payload, r.created_at)
    return [(turn_id, payload, at) for _, _, turn_id, payload, at in sorted(seen.values())]


_COLUMNS = "rowid AS posted, id, payload, created_at, status"
_STREAM_KEYS = ("scope", "scope_id", "conversation_id")


def _with_what_comes_before(conn: Connection, given: Sequence[Any], extra: int) -> list[Any]:
    """The given turns, each after up to ``extra`` pending turns posted before it in its
    conversation; a given turn with more than that before it is left for later."""
    by_stream: dict[tuple[Any, ...], list[Any]] = {}
    for row in given:
        data = json.loads(row.payload)
        by_stream.setdefault(tuple(data.get(k) for k in _STREAM_KEYS), []).append(row)
    same = " AND ".join(
        f"json_extract(payload, '$.{k}') IS NOT DISTINCT FROM :{k}" for k in _STREAM_KEYS
    )
    taken: list[Any] = []
    for stream, rows in by_stream.items():
        last = max(int(r.posted) for r in rows)
        ours = {r.id for r in rows}
        read = conn.execute(
            text(
                f"SELECT {_COLUMNS} FROM inbox_turns WHERE status = 'pending' "
                f"AND rowid <= :last AND {same} ORDER BY rowid LIMIT :n"
            ),
            {
                "last": last,
                "n": extra + len(rows) + 1,
                **dict(zip(_STREAM_KEYS, stream, strict=True)),
            },
        ).all()
        # Oldest first, until a turn not given exceeds ``extra``: it and every turn
        # after it (given or not read) wait for a later job.
        others = 0
        for r in read:
            if r.id not in ours:
                if others == extra:
                    break
                others += 1
            taken.append(r)
    return taken
