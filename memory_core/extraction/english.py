"""The months and weekdays the date reader and the extractor share.

The closed word classes and the tense cues the extractor reads live in
:mod:`memory_core.language`; their names are kept here for the readers that ask
this module.
"""

from __future__ import annotations

from memory_core.language.grammar import (
    DISCOURSE_MARKER,
    has_finite_verb,
    has_subject_pronoun,
    is_past,
    starts_with_verb,
)
from memory_core.language.lexicon import KIN_AND_ROLES

__all__ = [
    "DISCOURSE_MARKER",
    "KIN_AND_ROLES",
    "MONTHS",
    "WEEKDAYS",
    "has_finite_verb",
    "has_subject_pronoun",
    "is_past",
    "starts_with_verb",
]

MONTHS = (
    "january february march april may june july august september october november december"
).split()
WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
