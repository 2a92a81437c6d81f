"""The host agents' command lines: how each is run for one question, and how its answer
is read.

* **claude** (Claude Code): ``claude -p --output-format json`` with the system prompt
  as ``--system-prompt`` and the input on stdin; it prints one JSON object whose
  ``result`` is the answer and whose ``usage`` counts the tokens.  No MCP server
  (``--strict-mcp-config``), no hook (``disableAllHooks``) and no saved session: the
  question is answered by the model alone and leaves nothing behind.
* **codex** (Codex CLI): ``codex exec --json`` reading the prompt on stdin (``-``),
  in a read-only sandbox, with no session file (``--ephemeral``) and no MCP server;
  it prints JSON lines, the answer an ``agent_message`` item, the tokens in
  ``turn.completed``.  Codex takes no system prompt: it leads the input.
* **command**: ``REVERIE_HOST_COMMAND``, the prompt (system prompt, then input) on
  stdin, its output read as ``REVERIE_HOST_ANSWER`` says: all of stdout as text, or
  as claude's JSON or codex's JSON lines (a wrapper around either).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from memory_core.errors import ReasonerError
from memory_core.reasoners.base import Answer, nonnegative
from memory_core.settings import Settings

# What the hooks of a headless claude would load: none of them run for a question.
_NO_HOOKS = json.dumps({"disableAllHooks": True})
# What claude's usage counts, every token the question cost.
_CLAUDE_TOKENS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


@dataclass(frozen=True)
class Cli:
    """One host command line: its argv for a system prompt, what it is given on stdin,
    and how its stdout becomes an :class:`Answer`."""

    name: str
    model: str  # what answers, as a cache key and a report name it (never a secret)
    argv: Callable[[str], list[str]]  # the system prompt -> the command to run
    stdin: Callable[[str, str], str]  # (system prompt, input) -> stdin
    read: Callable[[str], Answer]


def cli_for(settings: Settings) -> Cli:
    """The command line ``settings.host_cli`` names, with ``host_model`` when set."""
    model = settings.host_model
    if settings.host_cli == "claude":
        argv = partial(claude_argv, model=model)
        return Cli("claude", _named("claude", model), argv, _input, _claude)
    if settings.host_cli == "codex":
        argv = partial(codex_argv, model=model)
        return Cli("codex", _named("codex", model), argv, _leading, _codex)
    command = list(settings.host_command or [])
    digest = hashlib.sha256("\0".join(command).encode()).hexdigest()[:8]
    name = os.path.basename(command[0]) if command else "command"
    argv = partial(_given, command)
    return Cli(name, f"{name}#{digest}", argv, _leading, READERS[settings.host_answer])


def _named(cli: str, model: str | None) -> str:
    return f"{cli}:{model}" if model else cli


def claude_argv(system: str, model: str | None) -> list[str]:
    """``claude -p`` answering as JSON, the system prompt its own."""
    argv = ["claude", "-p", "--output-format", "json", "--system-prompt", system]
    argv += ["--no-session-persistence", "--strict-mcp-config", "--settings", _NO_HOOKS]
    return argv + (["--model", model] if model else [])


def codex_argv(system: str, model: str | None) -> list[str]:
    """Codex takes no system prompt: it leads the input on stdin."""
    argv = ["codex", "exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only"]
    argv += ["--ephemeral", "-c", "mcp_servers={}"]
    return argv + (["-m", model] if model else []) + ["-"]


def _given(command: list[str], system: str) -> list[str]:
    return list(command)


def _input(system: str, prompt: str) -> str:
    return prompt


def _leading(system: str, prompt: str) -> str:
    """The system prompt, then the input, for a command line that takes no system prompt."""
    return f"{system}\n\n--- The input ---\n\n{prompt}\n"


def read_text(stdout: str) -> Answer:
    """All of stdout is the answer (a command that prints nothing answered nothing)."""
    if not stdout.strip():
        raise ReasonerError("the host command answered nothing")
    return Answer(stdout.strip())


def _claude(stdout: str) -> Answer:
    """``claude -p --output-format json``'s one object: ``result``, ``usage``."""
    doc = _last_object(stdout, "claude")
    if doc.get("is_error") or doc.get("subtype", "success") != "success":
        raise ReasonerError(f"claude answered an error ({doc.get('subtype') or 'is_error'})")
    result = doc.get("result")
    if not isinstance(result, str):
        raise ReasonerError("claude's answer has no result text")
    usage = doc.get("usage")
    if not isinstance(usage, dict):
        return Answer(result)
    return Answer(result, sum(nonnegative(usage.get(k)) for k in _CLAUDE_TOKENS))


def _codex(stdout: str) -> Answer:
    """``codex exec --json``'s events: the last ``agent_message``, ``turn.completed``'s
    usage; ``turn.failed`` or ``error`` is a failure."""
    text: str | None = None
    tokens = 0
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # codex may say other things on stdout
        if not isinstance(event, dict):
            continue
        kind, item = event.get("type"), event.get("item")
        if kind in ("turn.failed", "error"):
            raise ReasonerError(f"codex answered an error ({kind})")
        if (
            kind == "item.completed"
            and isinstance(item, dict)
            and item.get("type") == "agent_message"
            and isinstance(item.get("text"), str)
        ):
            text = item["text"]
        if kind == "turn.completed" and isinstance(event.get("usage"), dict):
            usage = event["usage"]  # cached input tokens are counted in input_tokens
            tokens += nonnegative(usage.get("input_tokens"))
            tokens += nonnegative(usage.get("output_tokens"))
    if text is None:
        raise ReasonerError("codex answered no agent message")
    return Answer(text, tokens)


def _last_object(stdout: str, name: str) -> dict[str, object]:
    """The JSON object a command printed (the last line that is one, if it said more)."""
    for candidate in [stdout, *reversed(stdout.strip().splitlines())]:
        try:
            doc = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(doc, dict):
            return doc
    raise ReasonerError(f"{name} printed no JSON object")


READERS: dict[str, Callable[[str], Answer]] = {
    "text": read_text,
    "claude-json": _claude,
    "codex-jsonl": _codex,
}
