"""Logging set-up for every entry point: plain text, or one JSON object per line.

``configure_logging(settings)`` is called once by each process's entry point
(memctl, worker processes).  In JSON mode each event is one line with its
time, level, logger and message, the traceback when there is one, and the
context of the job or request that logged it: :func:`log_context` binds
fields such as ``job`` (the actor and message id) or ``trace_id`` for the
duration of a block, in a contextvar, so they follow the work across calls
without being passed around.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from memory_core.settings import Settings

_context: ContextVar[dict[str, Any] | None] = ContextVar("reverie_log_context", default=None)


@contextmanager
def log_context(**fields: Any) -> Iterator[None]:
    """Add ``fields`` to every log line emitted inside the block."""
    token = _context.set({**(_context.get() or {}), **fields})
    try:
        yield
    finally:
        _context.reset(token)


class JsonFormatter(logging.Formatter):
    """One JSON object per event; never more than one line."""

    def format(self, record: logging.LogRecord) -> str:
        event: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **(_context.get() or {}),
        }
        if record.exc_info:
            event["exception"] = self.formatException(record.exc_info)
        return json.dumps(event, ensure_ascii=False, default=str)


class _ContextText(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = _context.get()
        if fields:
            line += " " + " ".join(f"{k}={v}" for k, v in fields.items())
        return line


def configure_logging(settings: Settings, *, keep_handlers: bool = False) -> None:
    """The root logger in the configured format and level.

    ``keep_handlers``: reformat the handlers already there (dramatiq's worker
    processes pipe theirs to the master) instead of logging to stderr.
    """
    formatter: logging.Formatter = (
        JsonFormatter()
        if settings.log_format == "json"
        else _ContextText("%(levelname)s %(name)s: %(message)s")
    )
    root = logging.getLogger()
    if keep_handlers and root.handlers:
        for existing in root.handlers:
            existing.setFormatter(formatter)
    else:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(formatter)
        root.handlers[:] = [handler]
    root.setLevel(settings.log_level.upper())
    logging.getLogger("alembic").setLevel(logging.WARNING)
