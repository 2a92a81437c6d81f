"""A circuit breaker for a reasoner: stop asking one that keeps failing.

After ``failures`` failed calls in a row the breaker opens: calls are refused
at once (the caller falls back, the offline extractor for ingestion) instead of
each waiting for the reasoner's deadline.  Once ``probe_after_s`` has passed,
one call is let through as a probe: its success closes the breaker, its
failure opens it for another ``probe_after_s``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

CLOSED, OPEN, PROBING = "closed", "open", "probing"


class Breaker:
    """Consecutive failures open it; a successful probe closes it."""

    def __init__(
        self,
        failures: int,
        probe_after_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.failures = failures
        self.probe_after_s = probe_after_s
        self.clock = clock
        self.opened = 0  # how many times it opened
        self._lock = threading.Lock()
        self._in_a_row = 0
        self._state = CLOSED
        self._opened_at = 0.0

    @property
    def state(self) -> str:
        with self._lock:
            return self._state

    def allow(self) -> bool:
        """Whether a call may go out now (an open breaker lets one probe through)."""
        with self._lock:
            if self._state == CLOSED:
                return True
            if self._state == OPEN and self.clock() - self._opened_at >= self.probe_after_s:
                self._state = PROBING
                return True
            return False

    def succeeded(self) -> None:
        with self._lock:
            self._in_a_row = 0
            self._state = CLOSED

    def failed(self) -> None:
        with self._lock:
            self._in_a_row += 1
            if self._state == PROBING or self._in_a_row >= self.failures:
                if self._state != OPEN:
                    self.opened += 1
                self._state = OPEN
                self._opened_at = self.clock()
