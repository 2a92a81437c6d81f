"""A confined caller's word statistics count its own traces alone, whichever way a word
is counted (from its postings when the brain holds it rarely, trace by trace when the
brain holds it more often than the caller has traces), on both backends."""

from __future__ import annotations

import memory_core as mc
from memory_core.auth import SYSTEM, Within
from memory_core.retrieval.lexical import TermCounts
from memory_core.retrieval.own_counts import OwnCounts
from memory_core.textutil import stem


def test_own_counts_count_the_callers_traces_alone(brain: mc.Brain) -> None:
    bobs = ["Bob bakes bread on Sunday.", "Bob waters the garden.", "Bob reads a novel."]
    alices = [f"Alice bakes bread and sells bread number {n}." for n in range(6)]
    mc.add_traces(
        brain,
        [mc.NewTrace(c, scope_id="bob") for c in bobs]
        + [mc.NewTrace(c, scope_id="alice") for c in alices]
        + [mc.NewTrace("Bob's novel, lent to Carol.", scope_id="carol")],
        identity=SYSTEM,
    )
    stems = [stem(w) for w in ("bread", "novel", "garden", "sells", "zebra")]
    with brain.read() as conn:
        own = brain.state(OwnCounts).of(Within(frozenset({"bob"})), brain.state(TermCounts))
        assert own.size(conn) == 3
        # "bread": 7 traces of the brain, more than bob's 3 (counted trace by trace);
        # the others rarer (counted from their postings).
        assert own.df(conn, 0, stems) == dict(zip(stems, [1, 1, 1, 0, 0], strict=True))
        both = brain.state(OwnCounts).of(
            Within(frozenset({"bob", "carol"})), brain.state(TermCounts)
        )
        assert both.size(conn) == 4 and both.df(conn, 0, stems)[stem("novel")] == 2
