"""Co-activation: what was used together lends each other a chance.

The dream pass's strengthen step links traces that searches returned together
near the top (``coactivation_edges``, weighted by how often).  Here the best few
hits of a search pass that on: each neighbour -- a trace linked to a strong hit
by an edge, or what the hit was drawn from or cites (its ``sources``: a fact's
turn, an insight's statements) -- is ranked at least ``weight`` times the hit's
score, scaled by the link's strength (an edge's weight over :data:`FULL`, at
most one, so the strength of a link does not shrink as others grow; a source or
citation counts full).  A neighbour the channels did not find joins the results
that way; one they found rises when that is more than its own score.  Either
way the factor ``coactivation`` says so in its breakdown.  Neighbours pass the
same filters as every hit, and ``REVERIE_SEARCH_COACTIVATION_WEIGHT=0`` turns it
off.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, text

from memory_core.retrieval import ranking

FACTOR = "coactivation"
TOP = 5  # the hits whose neighbours get a chance
# An edge's weight at which its link counts full: three searches that returned both
# near the top, or one whose caller reported both used (strengthen's USED_TOGETHER).
FULL = 3.0
MAX_NEIGHBOURS = 50


def expand(
    conn: Connection,
    ranked: Sequence[ranking.Candidate],
    where: str | None,
    params: dict[str, Any],
    weight: float,
) -> list[ranking.Candidate]:
    """``ranked`` with the neighbours of its best :data:`TOP` lifted or added, in order."""
    if weight <= 0 or not ranked:
        return list(ranked)
    strong = [c for c in ranked[:TOP] if c.score > 0]
    if not strong:
        return list(ranked)
    by_id = _ids(conn, [c.facts.seq for c in strong])
    links = _links(conn, by_id)
    if not links:
        return list(ranked)
    parent = {trace_id: c for c in strong for trace_id in [by_id[c.facts.seq]]}
    lift: dict[str, float] = {}
    for (hit, neighbour), strength in links.items():
        chance = weight * strength * parent[hit].score
        lift[neighbour] = max(lift.get(neighbour, 0.0), chance)
    wanted = sorted(lift, key=lambda t: -lift[t])[:MAX_NEIGHBOURS]
    facts = _facts(conn, wanted, where, params)
    present = {c.facts.seq: c for c in ranked}
    out = list(ranked)
    for trace_id, f in facts.items():
        chance = lift[trace_id]
        if (c := present.get(f.seq)) is not None:
            if chance > c.score > 0:
                c.factors[FACTOR] = chance / c.score
            continue
        joined = ranking.Candidate(f)
        joined.fused = chance
        joined.factors[FACTOR] = 1.0
        out.append(joined)
    return ranking.order(out)


def _ids(conn: Connection, seqs: Sequence[int]) -> dict[int, str]:
    rows = conn.execute(
        text(
            "SELECT seq, id FROM memory_traces "
            "WHERE seq IN (SELECT CAST(value AS INTEGER) FROM json_each(:s))"
        ),
        {"s": json.dumps(list(seqs))},
    ).all()
    return {int(r.seq): str(r.id) for r in rows}


def _links(conn: Connection, by_id: dict[int, str]) -> dict[tuple[str, str], float]:
    """(strong hit, neighbour) -> the link's strength in (0, 1]."""
    hits = json.dumps(sorted(by_id.values()))
    links: dict[tuple[str, str], float] = {}
    edges = conn.execute(
        text(
            "SELECT a, b, weight FROM coactivation_edges "
            "WHERE a IN (SELECT value FROM json_each(:h)) OR b IN (SELECT value FROM json_each(:h))"
        ),
        {"h": hits},
    ).all()
    hit_ids = set(by_id.values())
    for e in edges:
        for hit, neighbour in ((e.a, e.b), (e.b, e.a)):
            if hit in hit_ids and neighbour not in hit_ids:
                key = (hit, neighbour)
                links[key] = max(links.get(key, 0.0), min(1.0, float(e.weight) / FULL))
    # What a hit was drawn from or cites (read from the hits' own rows: what cites a hit
    # would take a scan of every trace, and strengthen links it once used together).
    rows = conn.execute(
        text(
            "SELECT t.id AS hit, json_extract(s.value, '$.trace') AS other FROM memory_traces t, "
            "json_each(t.sources) s WHERE t.id IN (SELECT value FROM json_each(:h)) "
            "AND json_extract(s.value, '$.trace') IS NOT NULL"
        ),
        {"h": hits},
    ).all()
    for r in rows:
        if r.other not in hit_ids:
            links[(str(r.hit), str(r.other))] = 1.0
    return links


def _facts(
    conn: Connection, ids: Sequence[str], where: str | None, params: dict[str, Any]
) -> dict[str, ranking.Facts]:
    """What ranking needs of the neighbours that pass the search's filters, by id."""
    if not ids:
        return {}
    rows = conn.execute(
        text(
            f"SELECT t.id AS _id, {ranking.FACT_COLUMNS} FROM memory_traces t "
            f"WHERE t.id IN (SELECT value FROM json_each(:c_ids)) AND {where or 't.deleted = 0'}"
        ),
        {**params, "c_ids": json.dumps(list(ids))},
    ).all()
    return {str(r[0]): ranking.Facts.from_row(tuple(r)[1:]) for r in rows}
