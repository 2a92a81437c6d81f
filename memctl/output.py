"""How memctl prints: one JSON document with --json, rich tables otherwise."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.table import Table

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def emit_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, ensure_ascii=False, indent=2, default=str) + "\n")


def error_line(message: str) -> None:
    """One line on stderr, nothing else."""
    sys.stderr.write(f"memctl: error: {message}\n")


def warn(message: str) -> None:
    """One warning line on stderr; the command goes on."""
    sys.stderr.write(f"memctl: warning: {message}\n")


def note(message: str) -> None:
    """One informational line on stderr; stdout stays clean for --json."""
    sys.stderr.write(f"memctl: {message}\n")


def when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S")


def shorten(text: str, width: int = 80) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def table(title: str | None, columns: list[str], rows: list[list[Any]]) -> None:
    t = Table(title=title, show_lines=False, title_justify="left")
    for c in columns:
        t.add_column(c, overflow="fold")
    for r in rows:
        t.add_row(*(str(v) for v in r))
    console.print(t)
