"""Ebbinghaus decay with spaced-repetition stability.

A trace's effective strength is its stored strength times its retention,
``exp(-t / S)``, where ``t`` is the time since it was last accessed (or since
this brain learnt it, if never -- not since it happened: a history imported or
back-dated today is as fresh as what was said today) and ``S`` the stability
in days.  Stability grows with
the logarithm of the retrieval count, so each doubling of retrievals buys the
same extra time: a trace retrieved often long ago still decays, it only decays
more slowly.  This is a pure computation, cheap enough for ranking time.
"""

from __future__ import annotations

import math

DAY = 86_400.0


def stability_days(
    retrieval_count: int, stability: float, base_days: float, growth: float
) -> float:
    """Days for retention to fall to 1/e."""
    return base_days * stability * (1.0 + growth * math.log2(1.0 + max(retrieval_count, 0)))


def effective_strength(
    strength: float,
    *,
    last_accessed: float | None,
    learnt_at: float,
    retrieval_count: int,
    stability: float,
    now: float,
    base_days: float,
    growth: float,
) -> float:
    """Stored strength scaled by retention at ``now``."""
    since = last_accessed if last_accessed is not None else learnt_at
    elapsed_days = max(now - since, 0.0) / DAY
    s = stability_days(retrieval_count, stability, base_days, growth)
    return strength * math.exp(-elapsed_days / s)
