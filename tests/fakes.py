"""Fakes of the edges that cannot run here: an OpenAI-compatible chat endpoint."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _send_json(handler: BaseHTTPRequestHandler, status: int, body: bytes) -> None:
    """Answer ``body`` as JSON; a client that hung up first is no error of the fake's."""
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
    except (BrokenPipeError, ConnectionResetError):
        pass


class FakeLLM:
    """A chat-completions endpoint on 127.0.0.1 that answers from a script, or by
    ``respond`` (the request's JSON to the answer's message) when that is set; with
    ``drip`` seconds set, it sends its headers at once and then its body one byte at a
    time, ``drip`` seconds apart (a slow-drip endpoint)."""

    def __init__(self) -> None:
        self.replies: deque[tuple[int, bytes, float]] = deque()
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        self.respond: Callable[[dict[str, Any]], Any] | None = None
        self.drip = 0.0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                asked = json.loads(self.rfile.read(length))
                fake.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "json": asked}
                )
                if fake.respond is not None:
                    status, body, delay = 200, completion(fake.respond(asked)), 0.0
                else:
                    status, body, delay = (
                        fake.replies.popleft() if fake.replies else (500, b"no reply", 0.0)
                    )
                if delay:
                    fake.release.wait(delay)
                if fake.drip:
                    _drip(self, body, fake.drip, fake.release)
                else:
                    _send_json(self, status, body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def reply(self, status: int = 200, body: Any = None, delay: float = 0.0) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.replies.append((status, raw, delay))

    def answer(self, message: Any, tokens: int = 42) -> None:
        self.reply(body=completion(message, tokens))


def completion(message: Any, tokens: int = 42) -> bytes:
    """A chat-completions answer whose message is ``message`` (JSON unless text)."""
    content = message if isinstance(message, str) else json.dumps(message)
    body = {
        "choices": [{"message": {"role": "assistant", "content": content}}],
        "usage": {"total_tokens": tokens},
    }
    return json.dumps(body).encode()


def _drip(
    handler: BaseHTTPRequestHandler, body: bytes, every: float, stop: threading.Event
) -> None:
    """Headers now, then the body a byte at a time, ``every`` seconds apart."""
    try:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.flush()
        for k in range(len(body)):
            if stop.wait(every):
                return
            handler.wfile.write(body[k : k + 1])
            handler.wfile.flush()
    except (BrokenPipeError, ConnectionResetError):
        pass


class FakeRerank:
    """A Cohere-style ``/rerank`` endpoint on 127.0.0.1 that scores a document by
    whether it holds ``favourite``, or misbehaves as told: ``slow`` seconds before it
    answers, a ``status`` of its own, or a ``malformed`` body."""

    def __init__(self, favourite: str) -> None:
        self.favourite = favourite
        self.slow = 0.0
        self.status = 200
        self.malformed: bytes | None = None
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                fake.requests.append({"headers": dict(self.headers), "json": body})
                if fake.slow:
                    fake.release.wait(fake.slow)
                results = [
                    {"index": k, "relevance_score": 0.9 if fake.favourite in doc else 0.1}
                    for k, doc in enumerate(body["documents"])
                ]
                raw = fake.malformed or json.dumps({"results": results}).encode()
                _send_json(self, fake.status, raw)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/rerank"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
