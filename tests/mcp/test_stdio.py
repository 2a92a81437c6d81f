"""memctl mcp over stdio, driven by the MCP SDK's own client against a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from subprocess import PIPE

import anyio
import pytest
from mcp import Client

import memory_core as mc
from memory_core import auth, inbox
from memory_core.auth import SYSTEM
from memory_core.tools import TOOL_SCHEMAS
from reverie.compose import process
from reverie.workers.broker import queue_depth
from tests.conftest import TOOL_NAMES

pytestmark = pytest.mark.slow

Connect = Callable[..., AbstractAsyncContextManager[Client]]

ALL_TOOLS = TOOL_NAMES
TOMATOES = "Alice grows tomatoes.\nShe waters them daily."


async def search_until(client: Client, query: str, timeout: float = 15.0) -> list[dict]:
    """Search until something is found (ingestion runs in the background)."""
    with anyio.fail_after(timeout):
        while True:
            found = await client.call_tool("memory_search", {"query": query})
            if found.structured_content["results"]:
                return list(found.structured_content["results"])
            await anyio.sleep(0.1)


def test_stdio_lists_every_tool_whose_memory_schemas_are_the_http_apis(
    over_stdio: Connect,
) -> None:
    async def scenario() -> None:
        async with over_stdio() as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert list(tools) == ALL_TOOLS
            for name, spec in TOOL_SCHEMAS.items():
                assert tools[name].input_schema == spec["parameters"]
                assert tools[name].description == spec["description"]
            assert tools["memory_read"].input_schema["required"] == ["traceId"]
            resources = (await client.list_resources()).resources
            assert [r.uri for r in resources] == ["memory://proposals"]
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["memory://memories/{id}"]

    anyio.run(scenario)


def test_stdio_add_search_read_and_resource_in_the_scope_ids_given_as_options(
    over_stdio: Connect, brain: mc.Brain
) -> None:
    long_line = "Alice keeps a garden journal " + "with many words " * 20

    async def scenario() -> str:
        async with over_stdio("--user", "alice") as client:
            added = await client.call_tool("memory_add", {"content": TOMATOES})
            assert not added.is_error
            tomato = added.structured_content["traceId"]
            assert json.loads(added.content[0].text) == {"traceId": tomato}
            await client.call_tool("memory_add", {"content": f"{long_line}\nand tomatoes too"})
            found = await client.call_tool("memory_search", {"query": "tomatoes"})
            results = found.structured_content["results"]
            lines = found.content[0].text.split("\n")
            assert len(results) == len(lines) == 2
            for result, line in zip(results, lines, strict=True):
                trace_id, when, first, score = line.split("\t")
                assert (trace_id, float(score)) == (result["id"], result["score"])
                assert when == result["occurred_at"] and when.endswith("Z")
                assert len(first) <= 120 and "\n" not in first
            assert lines[[r["id"] for r in results].index(tomato)].split("\t")[2] == (
                "Alice grows tomatoes."
            )
            read = await client.call_tool("memory_read", {"traceId": tomato})
            assert (
                read.structured_content["content"]
                == "Alice grows tomatoes.\nShe waters them daily."
            )
            resource = await client.read_resource(f"memory://memories/{tomato}")
            [contents] = resource.contents
            assert contents.mime_type == "application/json"
            shown = json.loads(contents.text)
            volatile = {"last_accessed", "retrieval_count"}  # search's feedback lands meanwhile
            assert shown.keys() == read.structured_content.keys()
            assert {k: v for k, v in shown.items() if k not in volatile} == {
                k: v for k, v in read.structured_content.items() if k not in volatile
            }
            return str(tomato)

    tomato = anyio.run(scenario)
    assert mc.get_trace(brain, tomato, identity=SYSTEM).scope_id == "alice"


def test_stdio_posted_turn_is_ingested_by_in_process_workers_and_found(
    over_stdio: Connect, brain: mc.Brain
) -> None:
    async def scenario() -> str:
        async with over_stdio("--user", "alice") as client:
            posted = await client.call_tool(
                "memory_post_turn",
                {
                    "user": "My sister moved to Porto.",
                    "assistant": "Porto is lovely.",
                    "conversation_id": "c-1",
                    "idempotency_key": "c-1/1",
                },
            )
            assert not posted.is_error
            accepted = posted.structured_content
            assert (accepted["duplicate"], accepted["enqueued"]) == (False, True)
            again = await client.call_tool(
                "memory_post_turn",
                {"user": "My sister moved to Porto.", "assistant": "x", "idempotency_key": "c-1/1"},
            )
            assert again.structured_content == {
                "turn_id": accepted["turn_id"],
                "duplicate": True,
                "enqueued": False,
            }
            results = await search_until(client, "Porto")
            assert any("Porto" in r["content"] for r in results)
            return str(accepted["turn_id"])

    turn_id = anyio.run(scenario)
    # the turn went to alice's scope id, as memctl mcp --user said
    assert (
        inbox.turn_status(brain, turn_id, identity=SYSTEM.acting_as(frozenset({"alice"})))["status"]
        == "done"
    )


def run_memctl_mcp(
    settings: mc.Settings, *options: str, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """memctl mcp to completion: it serves ``stdin`` and exits when that ends."""
    return subprocess.run(
        [sys.executable, "-m", "memctl", "--brain", settings.brain_url, "mcp", *options],
        input=stdin,
        capture_output=True,
        text=True,
        env={"REVERIE_EMBEDDER": "none", "REVERIE_DATA_DIR": str(settings.data_dir), **(env or {})},
        timeout=30,
        check=False,
    )


@pytest.mark.parametrize("token", [None, "rvt_0123456789abcdef_" + "x" * 43, "not-a-token"])
def test_stdio_refuses_to_start_without_a_working_token_once_the_brain_has_one(
    mcp_settings: mc.Settings, brain: mc.Brain, token: str | None
) -> None:
    auth.create_token(brain, "agent", ["read"], identity=auth.OPEN)
    done = run_memctl_mcp(mcp_settings, *(["--token", token] if token else []))
    assert done.returncode != 0
    assert done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("memctl: error: ")


def test_stdio_token_may_come_from_memctl_mcp_token_and_a_revoked_one_never_works(
    mcp_settings: mc.Settings, brain: mc.Brain
) -> None:
    _, token = auth.create_token(brain, "agent", ["read"], identity=auth.OPEN)
    served = run_memctl_mcp(mcp_settings, env={"MEMCTL_MCP_TOKEN": token})
    assert (served.returncode, served.stdout) == (0, "")  # started, served an empty stdin, exited
    auth.revoke_token(brain, "agent", identity=auth.OPEN)
    refused = run_memctl_mcp(mcp_settings, "--token", token)
    assert refused.returncode != 0 and "revoked" in refused.stderr


def test_stdio_writes_only_json_rpc_to_stdout_and_its_logs_to_stderr(
    mcp_settings: mc.Settings,
) -> None:
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "memory_add", "arguments": {"content": "Logged elsewhere."}},
        },
    ]
    env = {
        "REVERIE_EMBEDDER": "none",
        "REVERIE_DATA_DIR": str(mcp_settings.data_dir),
        "REVERIE_LOG_LEVEL": "DEBUG",
    }
    argv = [sys.executable, "-m", "memctl", "--brain", mcp_settings.brain_url, "mcp"]
    with subprocess.Popen(
        argv, stdin=PIPE, stdout=PIPE, stderr=PIPE, text=True, env=env
    ) as process:
        watchdog = threading.Timer(30, process.kill)
        watchdog.daemon = True
        watchdog.start()
        try:
            assert process.stdin and process.stdout and process.stderr
            process.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
            process.stdin.flush()
            answers = [json.loads(process.stdout.readline()) for _ in (1, 2)]
            rest, stderr = process.communicate(timeout=30)  # closes stdin: the server exits
        finally:
            watchdog.cancel()
    assert process.returncode == 0, stderr
    assert rest == ""
    assert [(a["jsonrpc"], a["id"]) for a in answers] == [("2.0", 1), ("2.0", 2)]
    assert answers[1]["result"]["isError"] is False
    assert "serving MCP over stdio" in stderr


@pytest.mark.redis
def test_stdio_with_redis_only_enqueues_the_posted_turn(
    over_stdio: Connect, mcp_settings: mc.Settings, brain: mc.Brain, redis_url: str
) -> None:
    async def scenario() -> str:
        async with over_stdio("--user", "alice", env={"REVERIE_REDIS_URL": redis_url}) as client:
            posted = await client.call_tool(
                "memory_post_turn", {"user": "I play the cello.", "assistant": "Lovely."}
            )
            assert posted.structured_content["enqueued"] is True
            return str(posted.structured_content["turn_id"])

    turn_id = anyio.run(scenario)
    assert (
        inbox.turn_status(brain, turn_id, identity=SYSTEM)["status"] == "pending"
    )  # no worker ran here
    workers = process(mcp_settings.model_copy(update={"redis_url": redis_url}), run_workers=False)
    try:
        assert queue_depth(workers.broker, "ingest") == 1
    finally:
        workers.stop()
