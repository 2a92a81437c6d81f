"""Words of a query: tokenising, content words and the Porter stems FTS5 indexes."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

import snowballstemmer

from memory_core.language.lexicon import STOPWORDS
from memory_core.language.scripts import segmented

__all__ = ["STOPWORDS", "WORD_RE", "content_hash", "content_words", "stem", "words"]

WORD_RE = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    """Lower-cased word tokens in order; a run of a script written without spaces
    ("我对花生过敏") as its pairs of characters, as the full-text index holds it."""
    return WORD_RE.findall((segmented(text) or "").lower())


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
