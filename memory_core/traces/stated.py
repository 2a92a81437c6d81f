"""What a memory's own words say of it: who said it and when, for callers that send
content alone.

An agent that stores "Caroline: I went to the support group yesterday." or
"[2023-05-08 13:56] Ana: my new address is ..." has given the speaker and the
time in the text.  :func:`stated` reads them, so search can favour what the person
a question names said, place the memory in time and read its statements as that
person's, as it does for a memory stored with ``metadata.speaker`` and
``occurred_at``.  What the caller gave always wins; the content is kept as sent.
"""

from __future__ import annotations

import calendar
import re
import time
from datetime import UTC, datetime

# A time stamp opening the text: "[2023-05-08 13:56]", "(8 May 2023)", "2023-05-08:",
# "1:56 pm on 8 May, 2023 -".
_STAMP = re.compile(
    r"^\s*(?:\[(?P<bracket>[^\]]{4,40})\]|\((?P<paren>[^)]{4,40})\)"
    r"|(?P<bare>\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d)?(?:Z|[+-]\d\d:?\d\d)?)?))"
    r"\s*[:|—–-]?\s*"
)
# A speaker opening the text: one or two capitalised words and a colon ("Ana:", "Dr
# Patel:"), or a named user's label ("User (Ana):").
_SPEAKER = re.compile(
    r"^(?:User \((?P<named>[^()\n]{1,40})\)|(?P<name>[A-Z][\w'’.-]{0,30}(?: [A-Z][\w'’-]{0,30})?))"
    r":\s+\S"
)
# Words that open a text with a colon without naming who said it.
_LABELS = frozenset(
    "user assistant system ai bot note notes reminder update todo important summary re fwd "
    "fw ps nb tip fact memory preference goal question answer q a warning edit context task "
    "idea status result decision source title subject date time location lesson rule fyi ok "
    "yes no also correction diagnosis recipe step today yesterday tomorrow tonight "
    "breakfast lunch dinner morning evening afternoon weekend plan plans key address "
    "phone email password birthday allergy allergies medication dose food diet".split()
    + [d.lower() for d in calendar.day_name]
    + [m.lower() for m in calendar.month_name if m]
)
_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m} | {
    m.lower(): i for i, m in enumerate(calendar.month_abbr) if m
}
_CLOCK = r"(?:(?P<hour>\d{1,2})(?::(?P<minute>\d\d))?\s*(?P<ampm>am|pm)\s*(?:on\s+)?)?"
_DAY_MONTH = re.compile(
    rf"^{_CLOCK}(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<month>[a-z]+)\.?,?\s+(?P<year>\d{{4}})$"
)
_MONTH_DAY = re.compile(
    rf"^{_CLOCK}(?P<month>[a-z]+)\.?\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<year>\d{{4}})$"
)


def stated(content: str, now: float | None = None) -> tuple[str | None, float | None]:
    """The speaker and the time (epoch seconds) the opening of ``content`` names.  A
    time after ``now`` (default: the clock's) is when something is due, not when it
    was said: it is no time of saying."""
    when, rest = None, content
    m = _STAMP.match(content)
    if m is not None:
        written = m.group("bracket") or m.group("paren") or m.group("bare")
        when = _time(written)
        if when is not None:
            rest = content[m.end() :]
            if when > (time.time() if now is None else now):
                when = None
    return _speaker(rest), when


def _speaker(text: str) -> str | None:
    m = _SPEAKER.match(text)
    if m is None:
        return None
    if m.group("named"):
        return m.group("named").strip() or None
    name = m.group("name")
    if name.split()[0].lower().rstrip(".") in _LABELS:
        return None
    return name


def _time(written: str) -> float | None:
    text = " ".join(written.lower().split())
    moment: datetime | None
    try:
        moment = datetime.fromisoformat(text.upper().replace(" ", "T", 1))
    except ValueError:
        moment = _spelt(text)
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _spelt(text: str) -> datetime | None:
    """A date written out ("8 May 2023", "May 8, 2023"), with a clock time before it
    ("1:56 pm on 8 May, 2023") or not."""
    m = _DAY_MONTH.match(text) or _MONTH_DAY.match(text)
    if m is None or m.group("month") not in _MONTHS:
        return None
    hour, minute = 0, int(m.group("minute") or 0)
    if m.group("hour") is not None:
        hour = int(m.group("hour")) % 12 + (12 if m.group("ampm") == "pm" else 0)
    try:
        return datetime(
            int(m.group("year")), _MONTHS[m.group("month")], int(m.group("day")), hour, minute
        )
    except ValueError:
        return None
