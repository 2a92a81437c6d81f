"""The embedded default as a bench talks to it: a fresh brain in a folder of its own,
workers in process, and the API over a test client -- the real write and search paths
without a socket."""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

import memory_core as mc
from reverie import compose
from reverie.compose import Process


@contextmanager
def embedded(prefix: str) -> Iterator[tuple[TestClient, Process]]:
    """A client of a fresh embedded default and its workers (``join`` them to wait for
    ingestion); everything is gone on exit."""
    with tempfile.TemporaryDirectory(prefix=f"reverie-{prefix}-") as tmp:
        settings = mc.load_settings(
            brain_url=f"sqlite:///{Path(tmp) / 'brain.sqlite'}", data_dir=Path(tmp) / "data"
        )
        served = compose.embedded(settings)
        try:
            with TestClient(compose.app(served), base_url="http://127.0.0.1:8420") as client:
                yield client, served
        finally:
            served.stop()


def post_turn(client: TestClient, scope_id: str, turn: dict[str, Any], key: str) -> str:
    """One labelled turn (``user``, ``assistant``, ``ts``) posted as ``scope_id``'s,
    in a conversation of that name, under idempotency key ``key``; its turn id."""
    r = client.post(
        "/v1/turns",
        json={
            "user": turn["user"],
            "assistant": turn["assistant"],
            "scope": "user",
            "scope_id": scope_id,
            "conversation_id": scope_id,
            "timestamp": turn["ts"],
            "idempotency_key": key,
        },
    )
    r.raise_for_status()
    return str(r.json()["turn_id"])


def each_set(
    argv: Sequence[str] | None,
    doc: str,
    sets: tuple[str, str],
    run: Callable[[str, int], dict[str, Any]],
    line: Callable[[str, dict[str, Any]], str],
) -> int:
    """A bench's command over its labelled sets: ``--files`` (comma-separated names;
    ``sets`` is the default and what they are), ``--json`` and ``--show``.  Each set is
    ``run`` (with how many misses to print), its figures printed as ``line`` words them
    and, with ``--json``, all of them written there."""
    default, what = sets
    p = argparse.ArgumentParser(description=doc.split("\n\n", maxsplit=1)[0])
    p.add_argument("--files", default=default, help=f"which {what}, comma-separated")
    p.add_argument("--json", type=Path, help="write the figures here")
    p.add_argument("--show", type=int, default=0, help="print this many misses")
    args = p.parse_args(argv)
    report = {}
    for name in args.files.split(","):
        report[name] = result = run(name, args.show)
        print(line(name, result))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1))
    return 0
