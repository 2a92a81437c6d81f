"""Entry module for worker processes: ``dramatiq workers.entry``.

The process is the entrypoint, so building settings and the broker on import
is right here (and only here): the dramatiq CLI imports this module in each
worker process and then consumes from the broker it set.
"""

from __future__ import annotations

import logging

from memory_core.settings import load_settings
from workers import setup

settings = load_settings()
logging.getLogger().setLevel(settings.log_level.upper())
workers = setup(settings)
broker = workers.broker
