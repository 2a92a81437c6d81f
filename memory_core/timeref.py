"""Times as the API takes and gives them: ISO 8601 or epoch seconds in, ISO 8601 out.

Times named in words ("last May", "yesterday") are language's to read:
:mod:`memory_core.language.periods`.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

from memory_core.errors import InvalidArgument

# Epoch seconds of the years 1 to 9999: what a datetime can hold.
EPOCH_RANGE = (-62_135_596_800, 253_402_300_799)


def parse_time(value: str | float | None, name: str = "time") -> float | None:
    """ISO 8601 (a naive time is UTC) or epoch seconds, as epoch seconds.

    :class:`InvalidArgument` naming ``name`` for anything else.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidArgument(f"{name}: not a time: {value!r}")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        try:
            seconds = float(value)
        except ValueError:
            try:
                parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            except ValueError as e:
                raise InvalidArgument(f"{name}: not an ISO 8601 time: {value!r}") from e
            seconds = (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()
    if not math.isfinite(seconds):
        raise InvalidArgument(f"{name}: not a time: {value!r}")
    return seconds


def iso(seconds: float) -> str:
    """An epoch time as ISO 8601 in UTC, to the second: ``2024-05-08T13:56:00Z``."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
