"""Memory that follows change: a later statement of the same thing supersedes the older.

:mod:`.slots` reads what a statement gives a value of (its subject and
attribute); :mod:`.chain` links the statements of one slot in time, each valid
until the next.  Writes of turns and memories call :func:`statement_slots` and
:func:`link`; search reads ``valid_until`` to rank the current statement first.
"""

from __future__ import annotations

from memory_core.supersession.chain import known_subjects, link
from memory_core.supersession.semantic import asked
from memory_core.supersession.slots import USER, slot_of, slots_of

__all__ = ["USER", "asked", "known_subjects", "link", "slot_of", "slots_of"]
