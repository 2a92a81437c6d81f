"""The tags a caller's memories carry, and those of them a tag expression's regex matches.

A ``/regex/`` in a tag expression is never run by the database: it is matched here,
with RE2 (linear in the tag's length, whatever the pattern), against the tags of the
memories the caller sees -- its own scope ids' alone when it is confined to some --
and the search is given the matching tags as plain equality.  Neither backend runs a
regex, both answer alike, and another tenant's tag is never among those matched.

The brain's tags are read once (:class:`TagVocabulary`, a brain's
:meth:`~memory_core.brain.db.Brain.state`) and kept, by scope id, while they still
hold: a trace added since (its seq is past the highest read) has its tags read alone;
a stored trace's tags rewritten since (the brain's ``tags_rewritten`` mark, which
every such rewrite changes), or the newest trace removed, has them all read again.  A
tag no trace carries any more may linger until then: it matches no trace.  Each read is
made on the search's own connection, so it sees the snapshot the search filters.
Writers take the brain's one write lock (on PostgreSQL too), so traces are numbered
in the order they are committed and none is ever numbered below one already read.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import re2
from sqlalchemy import Connection, text

from memory_core.auth import Within
from memory_core.brain.db import read_meta
from memory_core.errors import InvalidArgument
from memory_core.traces.store import TAGS_REWRITTEN

# The largest compiled RE2 program a pattern may make: ordinary patterns take tens of
# instructions, and matching costs at most the program's size per character of a tag.
MAX_PROGRAM = 2000
# Patterns compiled, and matches kept, at most.
_KEPT = 256

_TOP = text("SELECT coalesce(max(seq), 0) FROM memory_traces")
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a refused pattern is the caller's error, not the log's
_OPTIONS.never_capture = True


def regex(pattern: str) -> Any:
    """``pattern`` compiled by RE2; :class:`InvalidArgument` for one it refuses
    (backreferences and lookaround are not RE2) or that compiles too large."""
    try:
        compiled = re2.compile(pattern, _OPTIONS)
    except re2.error as e:
        reason = e.args[0].decode() if e.args and isinstance(e.args[0], bytes) else str(e)
        raise InvalidArgument(
            f"tags_expr: /{pattern}/ is no regular expression Reverie runs: {reason} "
            "(RE2 syntax: no backreferences or lookaround)"
        ) from e
    if compiled.programsize > MAX_PROGRAM:
        raise InvalidArgument(
            f"tags_expr: /{pattern}/ is too large a regular expression "
            f"({compiled.programsize} steps; at most {MAX_PROGRAM})"
        )
    return compiled


class TagVocabulary:
    """The brain's tags by scope id, kept while no tag has been rewritten (see the module)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seq = -1  # the highest seq read; -1: nothing read yet
        self._mark: str | None = None  # the tags_rewritten mark when read
        self._by_scope: dict[tuple[str, str | None], set[str]] = {}
        self._generation = 0  # bumped whenever what is kept changes
        self._matches: OrderedDict[tuple[int, Within | None, str], list[str]] = OrderedDict()

    def matching(self, conn: Connection, within: Within | None, pattern: str) -> list[str]:
        """The tags of the traces of ``within``'s scope ids (None: every trace) in which
        ``pattern`` (checked by :func:`regex`) finds a match, sorted."""
        compiled = regex(pattern)
        with self._lock:
            self._refresh(conn)
            key = (self._generation, within, pattern)
            found = self._matches.get(key)
            if found is None:
                found = sorted(t for t in self._tags(within) if compiled.search(t) is not None)
                self._matches[key] = found
                while len(self._matches) > _KEPT:
                    self._matches.popitem(last=False)
            return found

    def _tags(self, within: Within | None) -> set[str]:
        if within is None:
            return set().union(*self._by_scope.values())
        return set().union(*(t for key, t in self._by_scope.items() if within.admits(*key)))

    def _refresh(self, conn: Connection) -> None:
        top = int(conn.execute(_TOP).scalar_one())
        mark = read_meta(conn, TAGS_REWRITTEN)
        if self._seq >= 0 and mark == self._mark and top == self._seq:
            return
        whole = self._seq < 0 or mark != self._mark or top < self._seq
        if whole:
            self._by_scope = {}
        rows = conn.execute(
            text(
                "SELECT t.scope, t.scope_id, j.value "
                "FROM memory_traces AS t, json_each(t.tags) AS j "
                "WHERE t.seq > :after AND t.seq <= :top"
            ),
            {"after": -1 if whole else self._seq, "top": top},
        )
        for scope, scope_id, tag in rows:
            self._by_scope.setdefault((scope, scope_id), set()).add(str(tag))
        self._seq, self._mark = top, mark
        self._generation += 1
        self._matches.clear()
