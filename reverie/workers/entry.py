"""Entry module for worker processes: ``dramatiq reverie.workers.entry``.

The process is the entrypoint, so building settings and the broker on import
is right here (and only here): the dramatiq CLI imports this module in each
worker process and then consumes from the broker it set.  This broker
carries the metrics exporter (see :mod:`workers.broker`): the CLI then runs
one exporter process for the group on ``metrics_host:metrics_port``.
"""

from __future__ import annotations

from memory_core.logs import configure_logging
from memory_core.settings import load_settings
from reverie.workers import Workers
from reverie.workers.actors import declare
from reverie.workers.broker import build_broker

settings = load_settings()
configure_logging(settings, keep_handlers=True)
broker = build_broker(settings, worker_process=True)
workers = Workers(broker, declare(broker, settings))
