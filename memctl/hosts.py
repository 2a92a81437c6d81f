"""Wiring an agent host to Reverie: its MCP server entry and lifecycle hooks, merged into
the host's own configuration files, and taken out again.

Each host's files are read, changed where Reverie's entries go and written back whole:
another server, hook or setting is left as it was, and a second setup replaces
Reverie's entries instead of adding more.  The first setup keeps each file's original
bytes (or its absence) beside the host's configuration; ``--remove`` puts them back
byte for byte when the file is as setup left it, and otherwise takes only Reverie's
entries out.

* **claude-code**: the server in ``~/.claude.json`` (``mcpServers``, user scope), and
  in ``~/.claude/settings.json`` a ``SessionStart`` hook (what it prints is put in the
  session's context: the user's memories) and a ``SessionEnd`` hook (it posts the
  session's turns from the transcript Claude Code names on its input).
* **codex**: the server in ``~/.codex/config.toml`` (``[mcp_servers.reverie]``), and
  its ``notify`` program, which Codex runs after each turn with the turn as JSON:
  it posts that turn.  Codex has no session-start hook; the server's instructions
  tell the agent to call ``memory_context``.  A ``notify`` of another program is
  left alone (Codex runs one), and setup says so.

With ``--reasoner host`` the server's entry carries ``REVERIE_REASONER=host`` and the
host's command line (``REVERIE_HOST_CLI``) in its environment: the turns the agent
posts through it and the passes it runs are read and judged by the host's own login.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomlkit

import memory_core as mc

HOSTS = ("claude-code", "codex")
SERVER = "reverie"
# What marks a hook as Reverie's: its command runs ``memctl ... hook``.
_HOOK = "-m memctl"
_LEDGER = ".reverie-setup.json"


@dataclass
class Wiring:
    """What one setup (or removal) writes: each file's new bytes, and what to say."""

    files: dict[Path, bytes | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def memctl(brain_url: str, *args: str) -> list[str]:
    """A command running this installation's memctl on ``brain_url``."""
    return [sys.executable, "-m", "memctl", "--brain", brain_url, *args]


def _load_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        loaded = json.loads(path.read_text() or "{}")
    except ValueError as e:
        raise mc.InvalidArgument(f"{path} is not JSON ({e}): fix or move it first") from e
    if not isinstance(loaded, dict):
        raise mc.InvalidArgument(f"{path} holds no JSON object: fix or move it first")
    return loaded


def _json_bytes(doc: dict[str, Any]) -> bytes:
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()


def _ours(group: Any) -> bool:
    hooks = group.get("hooks", []) if isinstance(group, dict) else []
    return any(
        _HOOK in str(h.get("command", "")) and " hook " in str(h.get("command", "")) for h in hooks
    )


# The command line each host is, for its server's host reasoner (REVERIE_HOST_CLI).
HOST_CLIS = {"claude-code": "claude", "codex": "codex"}


def reasoner_env(host: str, reasoner: str | None) -> dict[str, str]:
    """What the server entry's environment says of its reasoner: with ``host``, the
    host's own command line reads its turns and judges its passes."""
    if reasoner is None:
        return {}
    if reasoner != "host":
        raise mc.InvalidArgument(
            f"--reasoner: host (the host's own command line) is the one setup wires; "
            f"got {reasoner!r}"
        )
    return {"REVERIE_REASONER": "host", "REVERIE_HOST_CLI": HOST_CLIS[host]}


def claude_code(
    home: Path, brain_url: str, user: str, *, remove: bool, env: dict[str, str]
) -> Wiring:
    wiring = Wiring()
    config_path = home / ".claude.json"
    config = _load_json(config_path)
    servers = config.setdefault("mcpServers", {})
    servers.pop(SERVER, None)
    if not remove:
        [python, *args] = memctl(brain_url, "mcp", "--user", user)
        servers[SERVER] = {"type": "stdio", "command": python, "args": args, "env": dict(env)}
    if not servers:
        del config["mcpServers"]
    wiring.files[config_path] = _json_bytes(config)

    settings_path = home / ".claude" / "settings.json"
    settings = _load_json(settings_path)
    hooks = settings.setdefault("hooks", {})
    for event, action in (("SessionStart", "session-start"), ("SessionEnd", "session-end")):
        groups = [g for g in hooks.get(event, []) if not _ours(g)]
        if not remove:
            command = shlex.join(memctl(brain_url, "hook", action, "--user", user))
            groups.append({"hooks": [{"type": "command", "command": command, "timeout": 60}]})
        if groups:
            hooks[event] = groups
        else:
            hooks.pop(event, None)
    if not hooks:
        del settings["hooks"]
    wiring.files[settings_path] = _json_bytes(settings)
    return wiring


def codex(home: Path, brain_url: str, user: str, *, remove: bool, env: dict[str, str]) -> Wiring:
    wiring = Wiring()
    path = home / ".codex" / "config.toml"
    try:
        doc = tomlkit.parse(path.read_text()) if path.exists() else tomlkit.document()
    except tomlkit.exceptions.ParseError as e:
        raise mc.InvalidArgument(f"{path} is not TOML ({e}): fix or move it first") from e
    servers = doc.get("mcp_servers")
    if servers is not None and SERVER in servers:
        del servers[SERVER]
    if not remove:
        if servers is None:
            servers = tomlkit.table(is_super_table=True)
            doc["mcp_servers"] = servers
        [python, *args] = memctl(brain_url, "mcp", "--user", user)
        entry = tomlkit.table()
        entry["command"] = python
        entry["args"] = args
        if env:
            entry["env"] = tomlkit.inline_table()
            entry["env"].update(env)
        servers[SERVER] = entry
    elif servers is not None and not servers:
        del doc["mcp_servers"]
    notify = doc.get("notify")
    ours = notify is not None and _HOOK in " ".join(map(str, notify))
    if notify is not None and not ours:
        if not remove:
            wiring.notes.append(
                "codex runs one notify program and it is another's: turns are not posted "
                "after each turn (memory_post_turn still works)"
            )
    elif remove:
        if ours:
            del doc["notify"]
    else:
        doc["notify"] = memctl(brain_url, "hook", "codex-turn", "--user", user)
    wiring.files[path] = tomlkit.dumps(doc).encode()
    return wiring


WIRINGS: dict[str, Callable[..., Wiring]] = {"claude-code": claude_code, "codex": codex}


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def apply(
    host: str,
    home: Path,
    brain_url: str,
    user: str,
    *,
    remove: bool,
    env: dict[str, str] | None = None,
) -> Wiring:
    """Write (or take out) ``host``'s wiring under ``home``, its server given ``env``;
    answers what was written."""
    if host not in WIRINGS:
        raise mc.InvalidArgument(f"--host: one of {', '.join(HOSTS)}; got {host!r}")
    ledger_path = home / _LEDGER
    ledger = _load_json(ledger_path)
    kept: dict[str, Any] = ledger.get(host, {})
    wiring = WIRINGS[host](home, brain_url, user, remove=remove, env=env or {})
    if remove:
        for path in wiring.files:
            record = kept.get(str(path))
            current = path.read_bytes() if path.exists() else None
            if record is not None and current is not None and _digest(current) == record["written"]:
                original = record["original"]
                wiring.files[path] = None if original is None else base64.b64decode(original)
            elif current is None:
                wiring.files[path] = None  # nothing there to take anything out of
            elif record is not None:
                wiring.notes.append(
                    f"{path} changed since setup: only Reverie's entries were taken out"
                )
        ledger.pop(host, None)
    else:
        for path, new in wiring.files.items():
            record = kept.get(str(path))
            original = (
                record["original"]
                if record is not None
                else (base64.b64encode(path.read_bytes()).decode() if path.exists() else None)
            )
            assert new is not None
            kept[str(path)] = {"original": original, "written": _digest(new)}
        ledger[host] = kept
    for path, data in wiring.files.items():
        if data is None:
            path.unlink(missing_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    if ledger:
        ledger_path.write_bytes(_json_bytes(ledger))
    else:
        ledger_path.unlink(missing_ok=True)
    return wiring
