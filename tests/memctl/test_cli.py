"""memctl as a user runs it: its output on stdout and stderr, its exit code.

Most commands run in this process through memctl's own entry point (``main``, which
maps errors to exit codes), with stdin, stdout, stderr, the environment and the
folder swapped as a shell would give them; a few smoke tests run it as a real
process (``memctl_process``), as installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

import memory_core as mc
from memctl.cli import app
from memory_core.auth import SYSTEM
from memory_core.brain.db import head_revision
from tests.conftest import memctl_in_process


def memctl(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``memctl ARGS`` in this process: what it printed and the code it exited with."""
    return memctl_in_process(list(args), env=env, cwd=cwd)


def memctl_process(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``memctl ARGS`` as a real process, as installed."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "memctl", *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def ok_json(*args: str, **kw: Any) -> Any:
    r = memctl("--json", *args, **kw)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def assert_one_line_error(r: subprocess.CompletedProcess[str], code: int, needle: str) -> None:
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("memctl: error:")
    assert needle in lines[0]
    assert "Traceback" not in r.stderr + r.stdout


@pytest.fixture
def brain_arg(tmp_path: Path) -> list[str]:
    return ["--brain", f"sqlite:///{tmp_path / 'brain.sqlite'}"]


def test_add_search_show_update_merge_delete_round_trip(brain_arg: list[str]) -> None:
    a = ok_json(
        *brain_arg,
        "add",
        "User prefers dark mode.",
        "--type",
        "semantic",
        "--scope-id",
        "u1",
        "--tags",
        "ui,pref",
    )["traceId"]
    b = ok_json(*brain_arg, "add", "User likes dark terminals.", "--tags", "ui")["traceId"]
    found = ok_json(*brain_arg, "search", "dark", "--tags", "ui", "--limit", "5")
    assert {h["id"] for h in found["results"]} == {a, b}
    assert ok_json(*brain_arg, "search", "dark", "--scope-id", "u1")["results"][0]["id"] == a
    assert ok_json(*brain_arg, "search", "dark", "--type", "semantic")["results"][0]["id"] == a
    shown = ok_json(*brain_arg, "show", a)
    assert (shown["scope_id"], shown["tags"]) == ("u1", ["ui", "pref"])
    ok_json(*brain_arg, "update", a, "--content", "User prefers dark mode everywhere.")
    assert ok_json(*brain_arg, "show", a)["content"] == "User prefers dark mode everywhere."
    merged = ok_json(*brain_arg, "merge", a, b, "--content", "User likes dark things.")
    assert merged == {"survivorId": a, "deletedIds": [b]}
    assert ok_json(*brain_arg, "delete", a) == {"deleted": True, "traceId": a}
    assert ok_json(*brain_arg, "search", "dark")["results"] == []
    stats = ok_json(*brain_arg, "stats")
    assert stats["traces"]["active"] == 0 and stats["traces"]["deleted"] == 2
    assert ok_json(*brain_arg, "doctor") == {"ok": True, "problems": []}


def test_text_output_is_readable(brain_arg: list[str]) -> None:
    r = memctl(*brain_arg, "add", "Remember the milk.")
    assert r.returncode == 0 and r.stdout.startswith("mt_")
    r = memctl(*brain_arg, "search", "milk")
    assert r.returncode == 0 and "Remember the milk." in r.stdout
    r = memctl(*brain_arg, "stats")
    assert r.returncode == 0 and "1 active" in r.stdout


def test_migrate_creates_the_brain_at_head(brain_arg: list[str], tmp_path: Path) -> None:
    doc = ok_json(*brain_arg, "migrate")
    assert doc["revision"] == head_revision()
    assert (tmp_path / "brain.sqlite").exists()


def test_brain_url_comes_from_settings_when_not_given(tmp_path: Path) -> None:
    env = {"REVERIE_BRAIN_URL": f"sqlite:///{tmp_path / 'env.sqlite'}"}
    ok_json("add", "via the environment", env=env)
    assert (tmp_path / "env.sqlite").exists()


def test_unknown_settings_key_is_one_line_and_exit_2(brain_arg: list[str]) -> None:
    r = memctl(*brain_arg, "stats", env={"REVERIE_BRAIN_ULR": "x"})
    assert_one_line_error(r, 2, "REVERIE_BRAIN_ULR")


def test_bad_brain_url_is_one_line_and_exit_2() -> None:
    r = memctl("--brain", "postgres://nowhere/x", "stats")
    assert_one_line_error(r, 2, "brain URL")


def test_read_commands_on_a_missing_brain_fail_and_create_nothing(tmp_path: Path) -> None:
    brain = tmp_path / "missing" / "brain.sqlite"
    for args in (["search", "x"], ["show", "mt_x"], ["stats"], ["doctor"], ["delete", "mt_x"]):
        r = memctl("--brain", f"sqlite:///{brain}", *args)
        assert_one_line_error(r, 3, "no brain")
    assert not brain.parent.exists()


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["add", "x", "--type", "feeling"], 2, "type must be one of"),
        (["add", "   "], 2, "content"),
        (["search", "x", "--limit", "0"], 2, "limit"),
        (["show", "mt_missing"], 4, "mt_missing"),
        (["update", "mt_missing", "--content", "x"], 4, "mt_missing"),
        (["update", "mt_missing"], 2, "nothing to update"),
        (["delete", "mt_missing"], 4, "mt_missing"),
        (["merge", "mt_a", "mt_b"], 4, "mt_a"),
        (["merge", "mt_a"], 2, "two"),
    ],
)
def test_refusals_are_one_line_with_exit_codes(
    brain_arg: list[str], tmp_path: Path, digest: Any, args: list[str], code: int, needle: str
) -> None:
    settings = mc.load_settings()
    brain = mc.open_brain(settings, url=brain_arg[1])
    mc.add_trace(brain, "an existing trace", identity=SYSTEM)
    before = digest(brain)
    assert_one_line_error(memctl(*brain_arg, *args), code, needle)
    assert digest(brain) == before


def test_doctor_finds_a_broken_index_and_exits_1(brain_arg: list[str], tmp_path: Path) -> None:
    import sqlite3

    from memory_core.language.scripts import segmented

    ok_json(*brain_arg, "add", "indexed words")
    with sqlite3.connect(tmp_path / "brain.sqlite") as db:
        # Another program on the file, with the function the index's trigger calls.
        db.create_function("reverie_segmented", 1, segmented, deterministic=True)
        db.execute("UPDATE memory_traces SET content = 'changed behind the index'")
    r = memctl("--json", *brain_arg, "doctor")
    assert r.returncode == 1
    checks = {p["check"] for p in json.loads(r.stdout)["problems"]}
    assert {"fts", "hashes"} <= checks
    assert ok_json(*brain_arg, "reindex") == {"reindexed": True}
    r = memctl("--json", *brain_arg, "doctor")
    assert {p["check"] for p in json.loads(r.stdout)["problems"]} == {"hashes"}


def test_demo_runs_offline_and_shows_each_tool() -> None:
    doc = ok_json("demo")
    steps = [s["step"] for s in doc["steps"]]
    assert any("memory_merge" in s for s in steps)
    assert any("refused" in s for s in steps)
    colour = next(s for s in doc["steps"] if "favourite colour" in s["step"])
    assert colour["results"][0] == "User's favourite colour is teal."


def test_every_command_has_help_text() -> None:
    command = typer.main.get_command(app)
    commands = command.commands  # type: ignore[attr-defined]
    assert len(commands) >= 10
    for name, sub in commands.items():
        assert sub.help and sub.help.strip(), name
        for param in sub.params:
            if getattr(param, "param_type_name", "") == "option":
                assert param.help, f"{name} {param.name}"


def test_memctl_up_serves_the_api_and_ingests_in_one_process(tmp_path: Path) -> None:
    """The README's main command, embedded: post a turn over HTTP, find it."""
    import time

    import httpx

    from tests.conftest import memctl_up

    env = {"REVERIE_BRAIN_URL": f"sqlite:///{tmp_path / 'brain.sqlite'}"}
    with memctl_up(env, tmp_path / "up.log") as (base, proc):
        deadline = time.monotonic() + 60
        r = httpx.post(
            f"{base}/v1/turns",
            json={
                "user": "I keep bees on my roof.",
                "assistant": "How many hives?",
                "scope": "user",
                "scope_id": "alice",
            },
        )
        assert r.status_code == 202
        turn_id = r.json()["turn_id"]
        while httpx.get(f"{base}/v1/turns/{turn_id}").json()["status"] != "done":
            assert time.monotonic() < deadline
            time.sleep(0.1)
        hits = httpx.get(f"{base}/v1/search", params={"q": "bees"}).json()["results"]
        assert any("bees" in h["content"] for h in hits)
    assert proc.returncode == 0, (tmp_path / "up.log").read_text()


def test_settings_lists_every_setting_and_redacts_keys() -> None:
    doc = ok_json("settings", env={"REVERIE_LLM_API_KEY": "sk-very-secret"})
    names = {r["env"] for r in doc["settings"]}
    assert {"REVERIE_BRAIN_URL", "REVERIE_REDIS_URL", "REVERIE_LLM_API_KEY"} <= names
    key = next(r for r in doc["settings"] if r["env"] == "REVERIE_LLM_API_KEY")
    assert key["value"] == "***"
    assert all(r["description"] for r in doc["settings"])


def test_search_as_of_and_its_refusal(brain_arg: list[str]) -> None:
    added = ok_json(*brain_arg, "add", "Alice lives in Porto.")
    happened = ok_json(*brain_arg, "show", added["traceId"])["occurred_at"]
    ok_json(*brain_arg, "delete", added["traceId"])
    assert ok_json(*brain_arg, "search", "Porto")["results"] == []
    # Between when it was stored and when it was deleted: shown.
    past = ok_json(*brain_arg, "search", "Porto", "--as-of", repr(happened))
    assert [h["id"] for h in past["results"]] == [added["traceId"]]
    assert ok_json(*brain_arg, "search", "Porto", "--as-of", "2001-01-01")["results"] == []
    assert ok_json(*brain_arg, "search", "Porto", "--as-of", "2999-01-01")["results"] == []
    assert_one_line_error(memctl(*brain_arg, "search", "Porto", "--as-of", "later"), 2, "--as-of")


def test_up_on_every_address_without_a_token_is_refused(brain_arg: list[str]) -> None:
    r = memctl(*brain_arg, "up", "--host", "0.0.0.0", "--port", "1")
    assert_one_line_error(r, 2, "refusing to listen on 0.0.0.0 without auth")


def test_tokens_are_made_listed_revoked_and_reset(brain_arg: list[str]) -> None:
    made = ok_json(*brain_arg, "token", "create", "bot", "--can", "read,write", "--scope-id", "a")
    assert made["token"].startswith("rvt_")
    assert (made["name"], made["capabilities"], made["scope_ids"]) == (
        "bot",
        ["read", "write"],
        ["a"],
    )
    listed = memctl(*brain_arg, "--json", "token", "list")
    assert made["token"] not in listed.stdout
    assert json.loads(listed.stdout)["tokens"][0]["name"] == "bot"
    again = ok_json(*brain_arg, "token", "reset", "bot")
    assert again["token"] != made["token"] and again["revoked_at"] is None
    assert_one_line_error(
        memctl(*brain_arg, "token", "create", "bot", "--can", "read"), 5, "exists"
    )
    assert ok_json(*brain_arg, "token", "revoke", "bot")["revoked_at"] is not None
    # Revocation is final: the token is not reset, nor its name given again.
    assert_one_line_error(memctl(*brain_arg, "token", "reset", "bot"), 5, "revocation is final")
    assert_one_line_error(
        memctl(*brain_arg, "token", "create", "bot", "--can", "read"), 5, "revoked"
    )
    assert_one_line_error(memctl(*brain_arg, "token", "create", "x", "--can", "fly"), 2, "fly")
    assert_one_line_error(memctl(*brain_arg, "token", "revoke", "nobody"), 4, "nobody")


def test_version_is_printed_without_touching_a_brain(tmp_path: Path) -> None:
    from importlib import metadata

    r = memctl_process("--version", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"reverie {metadata.version('reverie')}"
    assert list(tmp_path.iterdir()) == []


def test_the_installed_entry_point_runs_as_a_process(brain_arg: list[str]) -> None:
    """The smoke test of what the in-process runs stand for: python -m memctl."""
    added = memctl_process(*brain_arg, "--json", "add", "The kettle is descaled monthly.")
    assert added.returncode == 0, added.stderr
    trace_id = json.loads(added.stdout)["traceId"]
    found = memctl_process(*brain_arg, "search", "kettle", "--json")
    assert [h["id"] for h in json.loads(found.stdout)["results"]] == [trace_id]
    assert_one_line_error(memctl_process(*brain_arg, "show", "mt_nope"), 4, "mt_nope")


def test_forget_removes_one_scope_id_and_nothing_else(brain_arg: list[str]) -> None:
    ok_json(*brain_arg, "add", "Alice's locker code is 4471.", "--scope-id", "alice")
    ok_json(*brain_arg, "add", "Bob keeps bees.", "--scope-id", "bob")
    gone = ok_json(*brain_arg, "forget", "--scope-id", "alice", "--yes")
    assert (gone["scope_id"], gone["traces"]) == ("alice", 1)
    found = ok_json(*brain_arg, "search", "locker bees")["results"]
    assert [h["content"] for h in found] == ["Bob keeps bees."]
    r = memctl(*brain_arg, "forget", "--scope-id", "alice", "--scope", "galaxy", "--yes")
    assert_one_line_error(r, 2, "scope")


def test_forget_without_a_terminal_needs_yes_and_changes_nothing(brain_arg: list[str]) -> None:
    # Forgetting cannot be undone: with no terminal to ask on (a script, stdin from
    # /dev/null) or in --json, only --yes confirms it.
    ok_json(*brain_arg, "add", "Carol's locker code is 8812.", "--scope-id", "carol")
    with open(os.devnull) as nothing:
        r = subprocess.run(
            [sys.executable, "-m", "memctl", *brain_arg, "forget", "--scope-id", "carol"],
            stdin=nothing,
            check=False,
            capture_output=True,
            text=True,
            env={k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")},
            timeout=120,
        )
    assert_one_line_error(r, 2, "--yes")
    assert_one_line_error(memctl(*brain_arg, "--json", "forget", "--scope-id", "carol"), 2, "--yes")
    found = ok_json(*brain_arg, "search", "locker", "--scope-id", "carol")["results"]
    assert [h["content"] for h in found] == ["Carol's locker code is 8812."]


def test_json_is_taken_wherever_it_is_written(brain_arg: list[str]) -> None:
    memctl(*brain_arg, "add", "The boiler code is in the garage.")
    r = memctl(*brain_arg, "search", "boiler", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["results"][0]["content"] == "The boiler code is in the garage."
    # After "--" it is an argument like any other.
    added = ok_json(*brain_arg, "add", "--", "--json")
    assert (
        mc.get_trace(
            mc.open_brain(mc.load_settings(brain_url=brain_arg[1])),
            added["traceId"],
            identity=SYSTEM,
        ).content
        == "--json"
    )


def test_export_of_one_scope_id_holds_its_memories_only(
    brain_arg: list[str], tmp_path: Path
) -> None:
    ok_json(*brain_arg, "add", "Alice's locker code is 4471.", "--scope-id", "alice")
    ok_json(*brain_arg, "add", "Alice walks to work.", "--scope-id", "alice")
    ok_json(*brain_arg, "add", "Bob keeps bees.", "--scope-id", "bob")
    done = ok_json(
        *brain_arg, "export", "json", str(tmp_path / "alice.json"), "--scope-id", "alice"
    )
    doc = json.loads((tmp_path / "alice.json").read_text())
    assert done["traces"] == 2
    assert {t["content"] for t in doc["traces"]} == {
        "Alice's locker code is 4471.",
        "Alice walks to work.",
    }
    notes = tmp_path / "bob-notes"
    ok_json(*brain_arg, "export", "markdown", str(notes), "--scope-id", "bob")
    texts = [p.read_text() for p in notes.rglob("*.md")]
    assert len(texts) == 1 and "Bob keeps bees." in texts[0]
    r = memctl(*brain_arg, "export", "sqlite", str(tmp_path / "x.sqlite"), "--scope-id", "bob")
    assert_one_line_error(r, 2, "whole brain")
    assert not (tmp_path / "x.sqlite").exists()


def test_a_taken_port_is_said_before_listening_with_its_own_exit_code(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {"REVERIE_BRAIN_URL": f"sqlite:///{tmp_path / 'brain.sqlite'}"}
        r = memctl("up", "--port", str(port), env=env)
    assert_one_line_error(r, 9, f"cannot listen on 127.0.0.1:{port}")
    assert "listening" not in r.stderr + r.stdout


def _on_a_terminal(args: list[str], env: dict[str, str]) -> tuple[str, str]:
    """Run memctl with stderr on a pseudo-terminal: (stdout, what the terminal showed)."""
    import pty

    master, slave = pty.openpty()
    full = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")}
    full |= {"TERM": "xterm", "COLUMNS": "100", **env}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memctl", *args], env=full, stdout=subprocess.PIPE, stderr=slave
    )
    os.close(slave)
    stdout = proc.stdout.read().decode() if proc.stdout else ""
    proc.wait(120)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert proc.returncode == 0, shown.decode(errors="replace")
    return stdout, shown.decode(errors="replace")


def test_long_commands_show_progress_with_totals_on_a_terminal_only(tmp_path: Path) -> None:
    env = {"REVERIE_BRAIN_URL": f"sqlite:///{tmp_path / 'brain.sqlite'}"}
    brain = mc.open_brain(mc.load_settings(brain_url=env["REVERIE_BRAIN_URL"]), create=True)
    for i in range(30):
        mc.add_trace(brain, f"note {i} about the garden shed", identity=SYSTEM)
    stdout, shown = _on_a_terminal(["embed-backfill"], {**env, "REVERIE_EMBEDDER": "stub"})
    assert "embedded 30 traces" in stdout
    assert "embed stub" in shown and "30/30" in shown
    from memory_core.consolidation.dream import STEPS

    _, shown = _on_a_terminal(["dream"], {**env, "REVERIE_EMBEDDER": "none"})
    assert "dream pass" in shown and f"{len(STEPS)}/{len(STEPS)}" in shown
    _, shown = _on_a_terminal(
        ["export", "json", str(tmp_path / "all.json")], {**env, "REVERIE_EMBEDDER": "none"}
    )
    assert "export json" in shown and "30/30" in shown
    # With --json, or piped, nothing but the answer.
    _, shown = _on_a_terminal(["--json", "dream"], {**env, "REVERIE_EMBEDDER": "none"})
    assert "dream pass" not in shown
    piped = memctl("embed-backfill", env={**env, "REVERIE_EMBEDDER": "stub"})
    assert piped.returncode == 0 and piped.stderr == ""


def test_undo_supersession_makes_a_memory_current_again(brain_arg: list[str]) -> None:
    env = {"REVERIE_EMBEDDER": "none"}  # chained as written, on the words of change
    leeds = ok_json(*brain_arg, "add", "I live in Leeds.", "--scope-id", "u1", env=env)["traceId"]
    ok_json(*brain_arg, "add", "I moved to York now.", "--scope-id", "u1", env=env)
    assert ok_json(*brain_arg, "show", leeds, env=env)["superseded_by"]
    undone = ok_json(*brain_arg, "undo-supersession", leeds, env=env)
    assert undone["undone"] and undone["trace"]["superseded_by"] is None
    again = memctl(*brain_arg, "undo-supersession", leeds, env=env)
    assert_one_line_error(again, 5, "is current")
