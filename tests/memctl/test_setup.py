"""``memctl setup --host``: the host's own configuration files, in temporary home folders
holding what a user already has, are merged once however often setup runs, restored
byte for byte by ``--remove``, and the readiness check talks to the server; the hooks
open a session with the user's memories and post its turns once."""

from __future__ import annotations

import json
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.reasoners.host import CHILD_MARK
from tests.conftest import memctl_in_process

Run = Callable[..., subprocess.CompletedProcess[str]]

# What a Claude Code user already has: another server, a hook of their own, settings.
CLAUDE_JSON = """{
    "numStartups": 12,
    "mcpServers": {
        "files": {"type": "stdio", "command": "files-mcp", "args": ["--root", "/srv"]}
    }
}
"""
CLAUDE_SETTINGS = """{
  "model": "opus",
  "hooks": {
    "SessionStart": [
      {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
    ]
  }
}
"""
CODEX_TOML = """# my codex settings
model = "gpt-5-codex"

[mcp_servers.docs]
command = "docs-server"  # keep this comment
args = ["--port", "9000"]
"""


@pytest.fixture
def memctl(settings: mc.Settings) -> Run:
    def run(
        *args: str, stdin: str | None = None, env: dict[str, str | None] | None = None
    ) -> subprocess.CompletedProcess[str]:
        given: dict[str, str | None] = {"REVERIE_DATA_DIR": str(settings.data_dir), **(env or {})}
        return memctl_in_process(["--brain", settings.brain_url, *args], env=given, input=stdin)

    return run


def _claude_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude.json").write_text(CLAUDE_JSON)
    (home / ".claude" / "settings.json").write_text(CLAUDE_SETTINGS)
    return home


def test_claude_code_twice_leaves_one_entry_and_remove_restores_the_files(
    memctl: Run, tmp_path: Path, settings: mc.Settings
) -> None:
    home = _claude_home(tmp_path)
    for _ in range(2):
        done = memctl(
            "setup", "--host", "claude-code", "--user", "ana", "--home", str(home), "--no-check"
        )
        assert done.returncode == 0, done.stderr
    config = json.loads((home / ".claude.json").read_text())
    assert config["numStartups"] == 12
    assert set(config["mcpServers"]) == {"files", "reverie"}
    server = config["mcpServers"]["reverie"]
    assert server["type"] == "stdio"
    assert server["args"][:2] == ["-m", "memctl"] and server["args"][-3:] == [
        "mcp",
        "--user",
        "ana",
    ]
    assert settings.brain_url in server["args"]
    hooks = json.loads((home / ".claude" / "settings.json").read_text())
    assert hooks["model"] == "opus"
    starts = hooks["hooks"]["SessionStart"]
    assert len(starts) == 2 and starts[0]["hooks"][0]["command"] == "echo hello"
    assert "hook session-start --user ana" in starts[1]["hooks"][0]["command"]
    [end] = hooks["hooks"]["SessionEnd"]
    assert "hook session-end --user ana" in end["hooks"][0]["command"]

    gone = memctl("setup", "--host", "claude-code", "--remove", "--home", str(home))
    assert gone.returncode == 0, gone.stderr
    assert (home / ".claude.json").read_text() == CLAUDE_JSON
    assert (home / ".claude" / "settings.json").read_text() == CLAUDE_SETTINGS
    assert sorted(p.name for p in home.iterdir()) == [".claude", ".claude.json"]


def test_files_that_did_not_exist_are_gone_again_after_remove(memctl: Run, tmp_path: Path) -> None:
    home = tmp_path / "empty-home"
    home.mkdir()
    assert (
        memctl("setup", "--host", "claude-code", "--home", str(home), "--no-check").returncode == 0
    )
    assert (home / ".claude.json").exists() and (home / ".claude" / "settings.json").exists()
    assert memctl("setup", "--host", "claude-code", "--remove", "--home", str(home)).returncode == 0
    assert not (home / ".claude.json").exists()
    assert not (home / ".claude" / "settings.json").exists()


def test_a_file_changed_since_setup_loses_only_reverie_entries(memctl: Run, tmp_path: Path) -> None:
    home = _claude_home(tmp_path)
    assert (
        memctl("setup", "--host", "claude-code", "--home", str(home), "--no-check").returncode == 0
    )
    config = json.loads((home / ".claude.json").read_text())
    config["numStartups"] = 13  # the host wrote since
    (home / ".claude.json").write_text(json.dumps(config))
    gone = memctl("setup", "--host", "claude-code", "--remove", "--home", str(home))
    assert gone.returncode == 0 and "changed since setup" in gone.stderr
    after = json.loads((home / ".claude.json").read_text())
    assert after == {**json.loads(CLAUDE_JSON), "numStartups": 13}


def test_codex_twice_leaves_one_entry_keeps_comments_and_remove_restores(
    memctl: Run, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(CODEX_TOML)
    for _ in range(2):
        done = memctl(
            "setup", "--host", "codex", "--user", "ana", "--home", str(home), "--no-check"
        )
        assert done.returncode == 0, done.stderr
    text = (home / ".codex" / "config.toml").read_text()
    assert "# keep this comment" in text and text.count("[mcp_servers.reverie]") == 1
    config = tomllib.loads(text)
    assert set(config["mcp_servers"]) == {"docs", "reverie"}
    assert config["mcp_servers"]["reverie"]["args"][-3:] == ["mcp", "--user", "ana"]
    assert config["notify"][-4:] == ["hook", "codex-turn", "--user", "ana"]
    gone = memctl("setup", "--host", "codex", "--remove", "--home", str(home))
    assert gone.returncode == 0, gone.stderr
    assert (home / ".codex" / "config.toml").read_text() == CODEX_TOML


def test_codex_leaves_another_notify_program_alone_and_says_so(memctl: Run, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text('notify = ["my-notifier"]\n')
    done = memctl("setup", "--host", "codex", "--home", str(home), "--no-check")
    assert done.returncode == 0 and "notify program" in done.stderr
    assert tomllib.loads((home / ".codex" / "config.toml").read_text())["notify"] == ["my-notifier"]


def test_an_unknown_host_or_unreadable_file_changes_nothing(memctl: Run, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    bad = memctl("setup", "--host", "vim", "--home", str(home), "--no-check")
    assert bad.returncode == 2 and "claude-code, codex" in bad.stderr
    (home / ".claude.json").write_text("{not json")
    broken = memctl("setup", "--host", "claude-code", "--home", str(home), "--no-check")
    assert broken.returncode == 2 and "is not JSON" in broken.stderr
    assert (home / ".claude.json").read_text() == "{not json"
    assert sorted(p.name for p in home.iterdir()) == [".claude.json"]


def test_the_readiness_check_talks_to_the_configured_server(memctl: Run, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = memctl("--json", "setup", "--host", "claude-code", "--user", "ana", "--home", str(home))
    assert done.returncode == 0, done.stderr
    tools = json.loads(done.stdout)["tools"]
    assert "memory_search" in tools and "memory_context" in tools


def test_the_session_start_hook_prints_what_is_known_of_the_user(
    memctl: Run, brain: mc.Brain
) -> None:
    mc.add_traces(
        brain,
        [
            mc.NewTrace("Ana is allergic to penicillin. She told the nurse.", scope_id="ana"),
            mc.NewTrace("Ben keeps bees.", scope_id="ben"),
        ],
        identity=SYSTEM,
    )
    shown = memctl("hook", "session-start", "--user", "ana")
    assert shown.returncode == 0, shown.stderr
    assert "What you remember of ana" in shown.stdout
    assert "Ana is allergic to penicillin." in shown.stdout and "She told" not in shown.stdout
    assert "bees" not in shown.stdout
    assert memctl("hook", "session-start", "--user", "nobody").stdout == ""


TRANSCRIPT = [
    {"type": "user", "message": {"role": "user", "content": "I moved to Leeds in May."}},
    {
        "type": "assistant",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "..."},
                {"type": "text", "text": "Congratulations on the move!"},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}},
            ],
        },
    },
    {
        "type": "user",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
        },
    },
    {"type": "summary", "summary": "a move"},
    {
        "type": "user",
        "message": {
            "role": "user",
            "content": [{"type": "text", "text": "My cat is called Miso."}],
        },
    },
    {
        "type": "assistant",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "Hello Miso!"}]},
    },
]


def test_the_session_end_hook_posts_the_sessions_turns_once(
    memctl: Run, brain: mc.Brain, tmp_path: Path
) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in TRANSCRIPT) + "\n")
    payload = json.dumps(
        {"session_id": "s-1", "transcript_path": str(path), "hook_event_name": "SessionEnd"}
    )
    for _ in range(2):
        done = memctl("hook", "session-end", "--user", "ana", stdin=payload)
        assert done.returncode == 0, done.stderr
    listed = mc.list_traces(brain, scope_id="ana", identity=SYSTEM).traces
    turns = sorted(t.content for t in listed if "turn" in t.tags)
    assert turns == [
        "User: I moved to Leeds in May.\n\nAssistant: Congratulations on the move!",
        "User: My cat is called Miso.\n\nAssistant: Hello Miso!",
    ]


def test_the_codex_notify_hook_posts_the_finished_turn_once(memctl: Run, brain: mc.Brain) -> None:
    event = {
        "type": "agent-turn-complete",
        "turn-id": "12",
        "input-messages": ["Remember that my passport expires in March 2027."],
        "last-assistant-message": "Noted: March 2027.",
    }
    for _ in range(2):
        done = memctl("hook", "codex-turn", "--user", "ana", json.dumps(event))
        assert done.returncode == 0, done.stderr
    listed = mc.list_traces(brain, scope_id="ana", identity=SYSTEM).traces
    assert [t.content for t in listed if "turn" in t.tags] == [
        "User: Remember that my passport expires in March 2027.\n\nAssistant: Noted: March 2027."
    ]


def test_a_hook_given_no_json_says_so_and_posts_nothing(memctl: Run, brain: mc.Brain) -> None:
    bad = memctl("hook", "session-end", "--user", "ana", stdin="{oops")
    assert bad.returncode == 2 and "the hook's input is not JSON" in bad.stderr
    bad = memctl("hook", "codex-turn", "--user", "ana", "[1, 2]")
    assert bad.returncode == 2 and "not a JSON object" in bad.stderr
    assert mc.list_traces(brain, identity=SYSTEM).traces == []


def test_reasoner_host_gives_each_server_its_hosts_command_line_and_remove_restores(
    memctl: Run, tmp_path: Path
) -> None:
    home = _claude_home(tmp_path)
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(CODEX_TOML)
    done = memctl(
        "--json", "setup", "--host", "claude-code", "--reasoner", "host", "--home", str(home),
        env={"PATH": str(tmp_path / "no-claude-here")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["reasoner"] == "host"
    assert "claude is not on PATH" in done.stderr
    server = json.loads((home / ".claude.json").read_text())["mcpServers"]["reverie"]
    assert server["env"] == {"REVERIE_REASONER": "host", "REVERIE_HOST_CLI": "claude"}
    done = memctl(
        "setup", "--host", "codex", "--reasoner", "host", "--home", str(home), "--no-check"
    )
    assert done.returncode == 0, done.stderr
    config = tomllib.loads((home / ".codex" / "config.toml").read_text())
    assert config["mcp_servers"]["reverie"]["env"] == {
        "REVERIE_REASONER": "host",
        "REVERIE_HOST_CLI": "codex",
    }
    again = memctl("setup", "--host", "codex", "--home", str(home), "--no-check")
    assert again.returncode == 0, again.stderr  # a setup without it takes it out
    assert (
        "env"
        not in tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"][
            "reverie"
        ]
    )
    for host in ("claude-code", "codex"):
        assert memctl("setup", "--host", host, "--remove", "--home", str(home)).returncode == 0
    assert (home / ".claude.json").read_text() == CLAUDE_JSON
    assert (home / ".codex" / "config.toml").read_text() == CODEX_TOML


def test_a_reasoner_setup_cannot_wire_changes_nothing(memctl: Run, tmp_path: Path) -> None:
    home = _claude_home(tmp_path)
    bad = memctl("setup", "--host", "claude-code", "--reasoner", "chat", "--home", str(home))
    assert bad.returncode == 2 and "--reasoner: host" in bad.stderr
    assert (home / ".claude.json").read_text() == CLAUDE_JSON
    assert sorted(p.name for p in home.iterdir()) == [".claude", ".claude.json"]


def test_the_hooks_of_a_session_answering_reverie_do_nothing(
    memctl: Run, brain: mc.Brain, tmp_path: Path
) -> None:
    mc.add_traces(brain, [mc.NewTrace("Ana is allergic to penicillin.", scope_id="ana")],
                  identity=SYSTEM)  # fmt: skip
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in TRANSCRIPT) + "\n")
    payload = json.dumps({"session_id": "s-1", "transcript_path": str(path)})
    event = {"type": "agent-turn-complete", "turn-id": "1", "input-messages": ["hi"]}
    asked = {CHILD_MARK: "1"}
    started = memctl("hook", "session-start", "--user", "ana", env=asked)
    ended = memctl("hook", "session-end", "--user", "ana", stdin=payload, env=asked)
    turned = memctl("hook", "codex-turn", "--user", "ana", json.dumps(event), env=asked)
    assert [r.returncode for r in (started, ended, turned)] == [0, 0, 0]
    assert started.stdout == ""
    assert [t.content for t in mc.list_traces(brain, identity=SYSTEM).traces] == [
        "Ana is allergic to penicillin."
    ]
