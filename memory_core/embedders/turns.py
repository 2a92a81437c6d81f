"""Whose batch runs next on a model that runs on this machine's cores.

Two batches at once share the cores and each runs slower than one after the other
(``python -m bench.ingest --parts embed``), so background batches take turns.  Not
all of them are equally urgent: a trace's own vector is what makes it searchable
by meaning, while the vectors supersession embeds (what a user said in a turn)
only refine what is already findable.  :class:`BatchTurns` lets the first kind go
ahead of the second whenever both wait, so a burst of turns is searchable by
meaning as soon as the model can make it so, and what supersession needs follows.
A batch of the second kind gives way to the first kind for at most ``yield_s``,
then goes next, so it still runs while trace vectors keep the model busy.
Queries take no turn at all.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

YIELD_S = 10.0  # the longest a batch that can wait gives way to trace vectors


class BatchTurns:
    """One batch at a time; trace vectors (:meth:`first`) before the rest (:meth:`later`).

    Used as a context manager, it is :meth:`first`.
    """

    def __init__(self, yield_s: float = YIELD_S) -> None:
        self.yield_s = yield_s
        self._changed = threading.Condition()
        self._busy = False
        self._first_waiting = 0
        self._overdue = 0  # batches that gave way long enough, next in line

    def first(self) -> BatchTurns:
        """A batch that makes traces searchable: the next turn that comes free (the
        lock itself, as a context manager)."""
        return self

    @contextmanager
    def later(self) -> Iterator[None]:
        """A batch that can wait: after every waiting :meth:`first` batch, or after
        ``yield_s`` of waiting, whichever comes sooner; then ahead of them."""
        deadline = time.monotonic() + self.yield_s
        with self._changed:
            while (self._busy or self._first_waiting) and (left := deadline - time.monotonic()) > 0:
                self._changed.wait(left)
            self._overdue += 1
            try:
                self._changed.wait_for(lambda: not self._busy)
            finally:
                self._overdue -= 1
            self._busy = True
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        with self._changed:
            self._busy = False
            self._changed.notify_all()

    def __enter__(self) -> None:
        with self._changed:
            self._first_waiting += 1
            try:
                self._changed.wait_for(lambda: not self._busy and not self._overdue)
            finally:
                self._first_waiting -= 1
            self._busy = True

    def __exit__(self, *exc: object) -> None:
        self._release()
