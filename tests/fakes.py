"""Fakes of the edges that cannot run here: an OpenAI-compatible chat endpoint."""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeLLM:
    """A chat-completions endpoint on 127.0.0.1 that answers from a script."""

    def __init__(self) -> None:
        self.replies: deque[tuple[int, bytes, float]] = deque()
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                fake.requests.append(
                    {
                        "path": self.path,
                        "headers": dict(self.headers),
                        "json": json.loads(self.rfile.read(length)),
                    }
                )
                status, body, delay = (
                    fake.replies.popleft() if fake.replies else (500, b"no reply", 0.0)
                )
                if delay:
                    fake.release.wait(delay)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def reply(self, status: int = 200, body: Any = None, delay: float = 0.0) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.replies.append((status, raw, delay))

    def answer(self, message: Any, tokens: int = 42) -> None:
        content = message if isinstance(message, str) else json.dumps(message)
        self.reply(
            body={
                "choices": [{"message": {"role": "assistant", "content": content}}],
                "usage": {"total_tokens": tokens},
            }
        )
