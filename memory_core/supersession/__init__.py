"""Memory that follows change: a later statement of the same thing supersedes the older.

:mod:`.slots` keys what a statement gives a value of (its subject and
attribute), :mod:`.telling` weighs whether it replaces what was told before, both
asking :mod:`memory_core.language` to read the words; :mod:`.chain` links the statements of one
slot in time, each valid until the next.  Writes of turns and memories read slots
and, without an embedder, :func:`link` them; with one, :func:`.semantic.follow`
does once they are embedded.
Search reads ``valid_until`` to rank the current statement first.
"""

from __future__ import annotations

from memory_core.language.telling import changes
from memory_core.settings import Settings
from memory_core.supersession.chain import KnownSubjects, link
from memory_core.supersession.semantic import asked
from memory_core.supersession.slots import USER, slot_of, slot_stated, slots_of
from memory_core.supersession.telling import said_by

__all__ = [
    "USER",
    "KnownSubjects",
    "asked",
    "link",
    "links_on_write",
    "said_by",
    "slot_of",
    "slot_stated",
    "slots_of",
]


def links_on_write(settings: Settings, said: str) -> bool:
    """Whether a statement is chained as it is written: only without an embedder (with
    one, :func:`memory_core.supersession.semantic.follow` chains it once embedded, when
    its meaning confirms it restates the earlier one), and only when it says that
    something changed -- word cues alone are too coarse to chain on otherwise."""
    return settings.embedder == "none" and changes(said)
