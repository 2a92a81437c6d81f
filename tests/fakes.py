"""Fakes of the edges that cannot run here: an OpenAI-compatible chat endpoint, a rerank
endpoint, and a host agent's command line."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
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


# What the fake command line answers to each of Reverie's questions, told apart by
# words of their prompts (the system prompt, or the stdin it leads).
HOST_QUESTIONS = {
    "facts": "You extract facts",
    "same": "for duplicates",
    "replaces": "memory current",
    "insight": "You consolidate",
}
_HOST_SCRIPT = r'''#!{python}
"""A fake {name}: records its call, then answers as the state file says."""
import json, os, subprocess, sys, time

STATE, LOG, NAME, QUESTIONS = {state!r}, {log!r}, {name!r}, {questions!r}
state = json.load(open(STATE))
argv, stdin = sys.argv[1:], sys.stdin.read()
mode = state["mode"]
child = subprocess.Popen(["sleep", "600"]) if mode == "hang" else None
with open(LOG, "a") as log:
    log.write(json.dumps({{
        "argv": argv, "stdin": stdin, "cwd": os.getcwd(), "pid": os.getpid(),
        "child": child.pid if child else None,
        "env": {{k: v for k, v in os.environ.items() if k.startswith(("REVERIE_", "MEMCTL_"))}},
    }}) + "\n")
if mode == "hang":
    time.sleep(600)
if mode == "slow":
    time.sleep(state["slow_s"])
if mode == "fail":
    sys.stderr.write("Error: not logged in\n")
    sys.exit(3)
asked = argv[argv.index("--system-prompt") + 1] if "--system-prompt" in argv else stdin
question = next((q for q, words in QUESTIONS.items() if words in asked), "facts")
text = json.dumps(state["answers"][question])
if mode == "malformed":
    text = "Sure! Here is what I found: the user likes tea."
usage = {{"input_tokens": 100, "output_tokens": 20}}
if NAME == "codex":
    for event in (
        {{"type": "thread.started", "thread_id": "t1"}},
        {{"type": "turn.started"}},
        {{"type": "item.completed", "item": {{"id": "i0", "type": "reasoning", "text": "..."}}}},
        {{"type": "item.completed", "item": {{"id": "i1", "type": "agent_message", "text": text}}}},
        {{"type": "turn.completed", "usage": {{**usage, "cached_input_tokens": 50}}}},
    ):
        print(json.dumps(event))
elif NAME == "claude":
    print(json.dumps({{"type": "result", "subtype": "success", "is_error": False,
                      "result": text, "usage": usage}}))
else:
    print(text)
'''


class FakeHostCli:
    """A host agent's command line (``claude``, ``codex`` or another ``name``) as an
    executable script in ``folder/bin`` (:meth:`on_path` puts it first on PATH).  It
    records every call (argv, stdin, folder, the Reverie variables it was given) and
    answers as the real one prints (claude's JSON object, codex's JSON lines, else
    plain text), from ``answers``; or misbehaves as ``mode`` says: ``malformed``
    (text that is no JSON), ``slow`` (``slow_s`` seconds first), ``hang`` (never,
    with a child of its own holding its output), ``fail`` (exits 3)."""

    def __init__(self, folder: Path, name: str = "claude") -> None:
        self.name = name
        self.bin = folder / "bin"
        self.bin.mkdir(parents=True, exist_ok=True)
        self.state = folder / f"{name}-state.json"
        self.log = folder / f"{name}-calls.jsonl"
        self.answers: dict[str, Any] = {
            "facts": {
                "facts": [
                    {
                        "content": "The user grows chillies on the balcony.",
                        "category": "knowledge",
                        "importance": 0.9,
                        "entities": ["balcony"],
                    }
                ]
            },
            "same": {"same": False, "reason": "they name different cats"},
            "replaces": {"replaces": True, "reason": "they moved"},
            "insight": {"insight": "The user — grows chillies."},
        }
        self.set("good")
        script = self.bin / name
        script.write_text(
            _HOST_SCRIPT.format(
                python=sys.executable,
                name=name,
                state=str(self.state),
                log=str(self.log),
                questions=HOST_QUESTIONS,
            )
        )
        script.chmod(0o755)

    def set(self, mode: str, *, slow_s: float = 0.0, **answers: Any) -> None:
        """Answer from now on as ``mode`` says (and with ``answers`` by question)."""
        self.answers.update(answers)
        self.state.write_text(json.dumps({"mode": mode, "slow_s": slow_s, "answers": self.answers}))

    def on_path(self, monkeypatch: Any) -> None:
        monkeypatch.setenv("PATH", f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}")

    def calls(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]
