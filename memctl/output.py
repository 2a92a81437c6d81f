"""How memctl prints: one JSON document with --json, rich tables otherwise."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

# Piped, tables are as wide as they need to be (up to 160), not squeezed into 80.
_PIPED_WIDTH = None if sys.stdout.isatty() or "COLUMNS" in os.environ else 160
console = Console(highlight=False, soft_wrap=True, width=_PIPED_WIDTH)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


@contextmanager
def progress(
    label: str, enabled: bool, total: int | None = None
) -> Iterator[Callable[[int], None] | None]:
    """A rich progress bar on stderr while the block runs, ``advance(n)`` given to it;
    None (no bar) when ``enabled`` is false or stderr is not a terminal."""
    if not enabled or not err_console.is_terminal:
        yield None
        return
    columns = (SpinnerColumn(), TextColumn(label), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeElapsedColumn(), console=err_console, transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.advance(task, n)


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


def table(
    title: str | None,
    columns: list[str],
    rows: list[list[Any]],
    numeric: Iterable[int] = (),
    whole: Iterable[int] = (),
    dense: bool = False,
) -> None:
    """A table on stdout; the ``numeric`` columns (by position) right-aligned, the
    ``whole`` ones never wrapped (ids a person copies); ``dense``: rules under the
    header only, for wide tables."""
    right, unwrapped = set(numeric), set(whole)
    t = Table(title=title, show_lines=False, title_justify="left")
    if dense:
        t = Table(
            title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False
        )
    for k, c in enumerate(columns):
        t.add_column(
            c,
            min_width=len(c) if dense else None,
            overflow="fold",
            justify="right" if k in right else "left",
            no_wrap=k in unwrapped,
        )
    for r in rows:
        t.add_row(*(str(v) for v in r))
    console.print(t)
