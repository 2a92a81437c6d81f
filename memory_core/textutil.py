"""Words of a query: tokenising, stopwords and the Porter stems FTS5 indexes."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

import snowballstemmer

WORD_RE = re.compile(r"\w+", re.UNICODE)

# Function words that carry no topic.  Kept deliberately small: question words
# like "when" or "where" are here because FTS5 ranking gains nothing from them.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren as at be because been
    before being below between both but by can could did didn do does doesn doing don
    down during each few for from further had hadn has hasn have haven having he her
    here hers herself him himself his how i if in into is isn it its itself just ll m me
    might more most must my myself no nor not now of off on once only or other our ours
    ourselves out over own re s same she should so some such t than that the their
    theirs them themselves then there these they this those through to too under until
    up us ve very was wasn we were weren what when where which while who whom why will
    with won would you your yours yourself yourselves d y o ma also get got
    """.split()
)


def words(text: str) -> list[str]:
    """Lower-cased word tokens in order."""
    return WORD_RE.findall(text.lower())


def content_words(text: str) -> list[str]:
    """Distinct non-stopword tokens in order; all tokens if every one is a stopword."""
    tokens = words(text)
    kept = [w for w in tokens if w not in STOPWORDS]
    chosen = kept or tokens
    return list(dict.fromkeys(chosen))


_stemmer = snowballstemmer.stemmer("porter")


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The Porter stem, as FTS5's porter tokenizer would index the word."""
    return str(_stemmer.stemWord(word))


def content_hash(content: str) -> str:
    """SHA-256 of the content's UTF-8 bytes, hex: a trace's ``content_hash``."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()
