"""One brain per user account: every command, from any folder, uses the same brain."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.memctl.test_cli import memctl, ok_json


def _user_env(tmp_path: Path) -> dict[str, str]:
    """A user's environment: no REVERIE_* variable, their own data folder."""
    return {"XDG_DATA_HOME": str(tmp_path / "xdg-data"), "REVERIE_EMBEDDER": "none"}


def test_commands_in_different_folders_share_the_users_brain(tmp_path: Path) -> None:
    env = _user_env(tmp_path)
    here, there = tmp_path / "project-a", tmp_path / "project-b"
    here.mkdir()
    there.mkdir()
    added = ok_json("add", "Ana waters the ficus on Sundays.", env=env, cwd=here)
    found = ok_json("search", "ficus", env=env, cwd=there)
    assert [h["id"] for h in found["results"]] == [added["traceId"]]
    home = tmp_path / "xdg-data" / "reverie"
    assert (home / "brain.sqlite").is_file()
    assert not any(p.name == "reverie-data" for p in tmp_path.rglob("*"))
    assert ok_json("stats", env=env, cwd=there)["brain"] == str(home / "brain.sqlite")
    said = memctl("--verbose", "stats", env=env, cwd=there)
    assert said.returncode == 0
    assert f"brain sqlite:///{home / 'brain.sqlite'} (home {home}, from user data)" in said.stderr


def test_memctl_mcp_started_from_another_folder_uses_the_same_brain(tmp_path: Path) -> None:
    env = _user_env(tmp_path)
    elsewhere = tmp_path / "where-the-mcp-client-starts"
    elsewhere.mkdir()
    added = ok_json("add", "Ana's locker code is 4471.", "--scope-id", "ana", env=env, cwd=tmp_path)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memctl", "mcp", "--user", "ana"],
        env={**env, "PYTHONPATH": os.getcwd()},
        cwd=str(elsewhere),
    )

    async def scenario() -> list[str]:
        with (tmp_path / "mcp.stderr").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                found = await client.call_tool("memory_search", {"query": "locker code"})
                return [r["id"] for r in found.structured_content["results"]]

    assert anyio.run(scenario) == [added["traceId"]]
    assert not (elsewhere / "reverie-data").exists()


def test_an_existing_reverie_data_folder_is_used_with_a_notice(tmp_path: Path) -> None:
    env = _user_env(tmp_path)
    (tmp_path / "reverie-data").mkdir()
    added = ok_json("add", "The spare key is under the mat.", env=env, cwd=tmp_path)
    assert (tmp_path / "reverie-data" / "brain.sqlite").is_file()
    again = memctl("search", "spare key", env=env, cwd=tmp_path)
    assert again.returncode == 0 and added["traceId"][:8] in again.stdout
    notice = [line for line in again.stderr.splitlines() if "former default" in line]
    assert len(notice) == 1 and "REVERIE_HOME" in notice[0]
    moved = memctl(
        "--json", "stats", env={**env, "REVERIE_HOME": str(tmp_path / "h")}, cwd=tmp_path
    )
    assert "former default" not in moved.stderr
