"""The inbox: turns as posted, kept durably until they are ingested.

:mod:`.turns` checks and writes posted turns and tracks their status;
:mod:`.order` picks the pending turns a job ingests, in conversation order;
:mod:`.group_commit` lets concurrent posts share one commit.
"""

from memory_core.inbox.turns import (
    MAX_ID_LENGTH,
    ROLES,
    Accepted,
    Turn,
    accept_turn,
    accept_turns,
    check_turn,
    due_again,
    parse_timestamp,
    record_failure,
    stale_pending,
    turn_status,
)

__all__ = [
    "MAX_ID_LENGTH",
    "ROLES",
    "Accepted",
    "Turn",
    "accept_turn",
    "accept_turns",
    "check_turn",
    "due_again",
    "parse_timestamp",
    "record_failure",
    "stale_pending",
    "turn_status",
]
