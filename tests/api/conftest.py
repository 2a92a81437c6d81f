"""An API over a real brain file with embedded workers."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

import memory_core as mc
from reverie.compose import Process, embedded
from reverie.compose import app as api_app
from tests.conftest import LOCAL


@pytest.fixture
def api_settings(tmp_path: Path, brain_url: str) -> mc.Settings:
    return mc.load_settings(
        brain_url=brain_url,
        data_dir=tmp_path / "data",
        embedder="stub",
        api_max_body_bytes=64 * 1024,
    )


@pytest.fixture
def workers(api_settings: mc.Settings) -> Iterator[Process]:
    w = embedded(api_settings, threads=2)
    yield w
    w.stop()


@pytest.fixture
def client(api_settings: mc.Settings, workers: Process) -> Iterator[TestClient]:
    with TestClient(api_app(workers), base_url=LOCAL) as c:
        yield c


def post_turn(
    client: TestClient,
    user: str,
    at: float | None = None,
    *,
    assistant: str = "Got it.",
    scope_id: str = "ana",
    conversation_id: str = "life",
) -> str:
    """Post one exchange of ``scope_id``'s conversation, said at ``at``; its turn id."""
    body = {
        "user": user,
        "assistant": assistant,
        "scope": "user",
        "scope_id": scope_id,
        "conversation_id": conversation_id,
    }
    if at is not None:
        body["timestamp"] = at
    r = client.post("/v1/turns", json=body)
    assert r.status_code == 202, r.text
    return str(r.json()["turn_id"])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(app: FastAPI) -> Iterator[str]:
    """``app`` under a real uvicorn server on a free loopback port; its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def close(a: Any, b: Any) -> bool:
    """Equal JSON, numbers to 1e-4: a hit's strength decays a little between two searches."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) < 1e-4
    return bool(a == b)


def raw_request(
    url: str, method: str, path: str, headers: list[tuple[str, bytes]], body: bytes = b""
) -> tuple[int, bytes]:
    """Send one request byte for byte (a client library would tidy a blank or doubled
    header away) to the server at ``url``; its status and body."""
    host, port = url.removeprefix("http://").split(":")
    lines = [f"{method} {path} HTTP/1.1".encode()]
    lines += [name.encode() + b": " + value for name, value in headers]
    lines += [b"Content-Length: " + str(len(body)).encode(), b"Connection: close"]
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, rest = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), rest
