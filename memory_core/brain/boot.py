"""Opening the brain when a process starts, patient with a brain that is briefly away.

A worker process that cannot open its brain at start exits, and a dramatiq worker
group whose process exits shuts down whole: one PostgreSQL connection dropped while
a worker boots (a server restarting, a backend terminated, a failover) would leave
every turn pending until someone restarts the group.  So a process's start waits
out what may pass -- the brain unreachable (:class:`BrainUnavailable`) or refusing
writes (:class:`BrainUnwritable`, the migration check writes) -- trying again with
growing, jittered pauses and saying so each time; any other error is final.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable

from memory_core.brain.db import Brain, open_brain
from memory_core.errors import BrainUnavailable, BrainUnwritable
from memory_core.settings import Settings

log = logging.getLogger(__name__)

FIRST_PAUSE_S = 0.5
LONGEST_PAUSE_S = 30.0


def open_brain_patiently(
    settings: Settings,
    *,
    give_up_after_s: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Brain:
    """:func:`~memory_core.brain.db.open_brain`, tried again while the brain is briefly
    away; ``give_up_after_s`` (None: never) bounds the wait, then the last error is
    raised."""
    started = time.monotonic()
    pause = FIRST_PAUSE_S
    attempt = 1
    while True:
        try:
            brain = open_brain(settings)
        except (BrainUnavailable, BrainUnwritable) as e:
            waited = time.monotonic() - started
            if give_up_after_s is not None and waited + pause > give_up_after_s:
                raise
            log.warning(
                "brain not usable at start (attempt %d): %s; trying again in %.1f s",
                attempt,
                e,
                pause,
            )
            sleep(pause * random.uniform(0.8, 1.2))
            pause = min(pause * 2, LONGEST_PAUSE_S)
            attempt += 1
            continue
        if attempt > 1:
            log.warning("brain opened at attempt %d", attempt)
        return brain
