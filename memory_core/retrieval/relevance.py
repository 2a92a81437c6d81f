"""How well a hit answers its query, on a scale that means the same for every query.

A hit's ``score`` ranks it against the other hits of the same search (its
channels' scores are min-max scaled), so the best of ten unrelated traces
scores as high as the best of ten relevant ones.  ``relevance`` does not
depend on the other hits: the larger of

- the query's cosine similarity with the trace (the vector channel's own
  score, when it ran), and
- the share of the query's words the trace contains, each word weighted by its
  inverse document frequency, so a name found in every trace counts little
  and a rare word ("sourdough", "4471") a lot.  Words naming a time ("in May
  2023", "last week") count as found when the trace happened then; a trace that
  matched a deliberate full-text query (its words all present, or its FTS5
  expression true) contains it whole.

A search drops hits whose relevance is below its ``min_score``: a query about
something the brain does not hold then answers nothing, instead of its ten
least unrelated traces.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence

from memory_core.language.periods import Period
from memory_core.textutil import content_words, stem, words

_OPERATORS = re.compile(r"\b(?:AND|OR|NOT|NEAR)\b")


def query_stems(query: str) -> list[str]:
    """The stems of the query's content words, once each; FTS5's operators (AND, OR,
    NOT, NEAR) are syntax, not words asked about."""
    return list(dict.fromkeys(stem(w) for w in content_words(_OPERATORS.sub(" ", query))))


def query_weights(
    stems: Sequence[str], document_frequency: Mapping[str, int], total: int
) -> dict[str, float]:
    """Each of the query's stems (:func:`query_stems`) with its idf weight (sums to 1)."""
    if not stems:
        return {}
    idf = {s: math.log((total + 1) / (document_frequency.get(s, 0) + 0.5)) for s in stems}
    idf = {s: max(v, 1e-6) for s, v in idf.items()}
    whole = sum(idf.values())
    return {s: v / whole for s, v in idf.items()}


def coverage(weights: Mapping[str, float], text: str, also: Iterable[str] = ()) -> float:
    """The weighted share of the query's words found in ``text`` (0 to 1); ``also``:
    words the trace answers otherwise (those naming a time it happened in)."""
    if not weights:
        return 0.0
    found = {stem(w) for w in content_words(text)} | {stem(w) for w in also}
    return sum(weight for s, weight in weights.items() if s in found)


def time_words(named: Sequence[tuple[Period, str]], occurred_at: float | None) -> list[str]:
    """The query's words naming a time the trace happened in."""
    if occurred_at is None:
        return []
    return [w for (start, end), text in named if start <= occurred_at < end for w in words(text)]


def relevance(cosine: float | None, lexical: float) -> float:
    """The larger of the two signals, clipped to 0-1."""
    return min(1.0, max(0.0, lexical, cosine if cosine is not None else 0.0))
