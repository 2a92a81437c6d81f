"""Tags across a brain: the names in use, and one renamed everywhere at once."""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from typing import Any

from sqlalchemy import text

from memory_core.auth import WRITE, Identity, acting
from memory_core.brain.db import Brain
from memory_core.errors import Forbidden
from memory_core.traces.journal import changing
from memory_core.traces.model import TURN_TAG, Trace, check_tags
from memory_core.traces.store import rewrite_trace

# Tags the passes and the search read a meaning into (a turn's episode, an insight,
# what derive and compact wrote): a person's rename must not give or take that meaning.
MARKING_TAGS = frozenset({TURN_TAG, "derived", "insight", "compacted"})


def _within(identity: Identity) -> tuple[str, dict[str, Any]]:
    """The SQL condition and parameters confining rows to ``identity``'s scope ids."""
    within = identity.within
    if within is None:
        return "", {}
    condition, params = within.sql()
    return f" AND {condition}", params


def tag_counts(brain: Brain, *, identity: Identity) -> dict[str, int]:
    """Each tag on the active traces ``identity`` sees, with how many carry it."""
    acting(identity)
    where, params = _within(identity)
    counts: Counter[str] = Counter()
    with brain.read() as conn:
        rows = conn.execute(
            text(f"SELECT tags FROM memory_traces WHERE deleted = 0 AND tags != '[]'{where}"),
            params,
        )
        for r in rows:
            counts.update(json.loads(r.tags))
    return dict(counts.most_common())


def rename_tag(
    brain: Brain, old: str, new: str, *, identity: Identity, now: float | None = None
) -> dict[str, Any]:
    """Rename tag ``old`` to ``new`` on every active trace ``identity`` sees, in one
    transaction journaled as one unit (each trace's history keeps its former tags).

    A trace that has both keeps one; the same name renames nothing.
    :class:`InvalidArgument` for an empty name; :class:`Forbidden` for a tag the
    passes read a meaning into.  Answers the unit and the ids renamed.
    """
    acting(identity, WRITE)
    [old_tag] = check_tags([old])
    [new_tag] = check_tags([new])
    marking = sorted({old_tag, new_tag} & MARKING_TAGS)
    if marking:
        raise Forbidden(f"{marking[0]!r} is a tag the dream passes read; it is not renamed")
    now = time.time() if now is None else now
    unit = f"edit_{uuid.uuid4().hex[:12]}"
    where, params = _within(identity)
    renamed: list[str] = []
    if old_tag == new_tag:
        return {"unit": unit, "from": old_tag, "to": new_tag, "renamed": renamed}
    with brain.transaction() as conn:
        rows = conn.execute(
            text(f"SELECT * FROM memory_traces WHERE deleted = 0 AND tags LIKE :like{where}"),
            {"like": f"%{json.dumps(old_tag)[1:-1]}%", **params},
        ).all()
        for row in rows:
            trace = Trace.from_row(row)
            if old_tag not in trace.tags:
                continue
            tags = check_tags([new_tag if t == old_tag else t for t in trace.tags])
            with changing(conn, unit, "rename tag", [trace.id], now):
                rewrite_trace(conn, trace, None, tags, now)
            renamed.append(trace.id)
    return {"unit": unit, "from": old_tag, "to": new_tag, "renamed": renamed}
