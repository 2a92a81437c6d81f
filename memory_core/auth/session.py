"""A long-lived caller's identity, checked again every few seconds.

A process that serves one caller for hours (``memctl mcp`` over stdio) learns
who it is once, at start; without a second look, a token revoked meanwhile would
go on working.  :class:`Session` looks again when its answer is older than
:data:`RECHECK_S` -- one indexed read -- so a revocation, or a first token made
while the session ran open, stops it within seconds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from memory_core.auth.identity import OPEN, Identity
from memory_core.auth.tokens import any_active_token, authenticate
from memory_core.brain.db import Brain
from memory_core.errors import Unauthorized

RECHECK_S = 1.0  # one indexed read a second at most


class Session:
    """The identity of ``token`` (None: the open one, while no token works), acting for
    ``scope_ids``, re-checked at most every ``every`` seconds of ``clock``.

    :class:`~memory_core.errors.Unauthorized` at start, and from :meth:`identity`
    on, once the token no longer works.
    """

    def __init__(
        self,
        brain: Brain,
        token: str | None,
        scope_ids: Mapping[str, str],
        *,
        every: float = RECHECK_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.brain = brain
        self.token = token
        self.scope_ids = dict(scope_ids)
        self.every = every
        self.clock = clock
        self._lock = threading.Lock()
        self._identity = self._check()
        self._checked = clock()

    def _check(self) -> Identity:
        if self.token:
            found = authenticate(self.brain, self.token)
        elif any_active_token(self.brain):
            raise Unauthorized(
                "this brain has tokens: give memctl mcp one with --token rvt_... "
                "(or MEMCTL_MCP_TOKEN)"
            )
        else:
            found = OPEN
        return found.acting_as(self.scope_ids)

    def identity(self) -> Identity:
        """Who the session acts as now, looked up again when the last look is stale."""
        with self._lock:
            if self.clock() - self._checked >= self.every:
                self._identity = self._check()
                self._checked = self.clock()
            return self._identity
