"""MCP clients of the SDK against real servers: the API under uvicorn, memctl mcp over stdio."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from sqlalchemy import text

import memory_core as mc
from reverie.compose import Process, embedded
from reverie.compose import app as api_app
from tests.api.conftest import serving

Connect = Callable[..., AbstractAsyncContextManager[Client]]


# A raw MCP request over HTTP, and the Accept header the transport asks for.
ADD = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "memory_add", "arguments": {"content": "Nobody may store this."}},
}
JSON_RPC = {"accept": "application/json, text/event-stream"}


def headers_for(token: str | None, scope_ids: dict[str, str] | None) -> dict[str, str]:
    headers = {f"X-Reverie-{scope.title()}": v for scope, v in (scope_ids or {}).items()}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return headers


@dataclass
class Served:
    """The API with MCP at ``url``, over a brain with embedded workers."""

    url: str
    brain: mc.Brain
    settings: mc.Settings
    workers: Process

    def quiet(self) -> None:
        """Wait until no job (embedding, retrieval feedback, ingest) may still write the brain."""
        self.workers.join()


@pytest.fixture
def mcp_settings(tmp_path: Path, brain_url: str) -> mc.Settings:
    # No embedder: nothing writes vectors behind a test's back.
    return mc.load_settings(
        brain_url=brain_url,
        data_dir=tmp_path / "data",
        embedder="none",
    )


@pytest.fixture
def served(mcp_settings: mc.Settings) -> Iterator[Served]:
    workers = embedded(mcp_settings, threads=2)
    app = api_app(workers)
    with serving(app) as url:
        yield Served(f"{url}/mcp", app.state.brain, mcp_settings, workers)
    workers.stop()


@pytest.fixture
def over_http(served: Served) -> Connect:
    """``over_http(token=None, scope_ids=None, mode="auto")``: an MCP client of the server."""

    @asynccontextmanager
    async def connect(
        token: str | None = None, scope_ids: dict[str, str] | None = None, mode: str = "auto"
    ) -> AsyncIterator[Client]:
        headers = headers_for(token, scope_ids)
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(served.url, http_client=http)
            async with Client(transport, mode=mode) as client:
                yield client

    return connect


def memctl_mcp(settings: mc.Settings, *options: str, env: dict[str, str] | None = None) -> Any:
    """Parameters that start ``memctl --brain URL mcp OPTIONS`` as a subprocess."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "memctl", "--brain", settings.brain_url, "mcp", *options],
        env={"REVERIE_EMBEDDER": "none", "REVERIE_DATA_DIR": str(settings.data_dir), **(env or {})},
        cwd=str(settings.data_dir.parent),
    )


@pytest.fixture
def over_stdio(mcp_settings: mc.Settings, tmp_path: Path) -> Connect:
    """``over_stdio(*options, env=None)``: an MCP client of a ``memctl mcp`` subprocess."""

    @asynccontextmanager
    async def connect(*options: str, env: dict[str, str] | None = None) -> AsyncIterator[Client]:
        with (tmp_path / "memctl-mcp.stderr").open("a") as errlog:
            transport = stdio_client(memctl_mcp(mcp_settings, *options, env=env), errlog=errlog)
            async with Client(transport) as client:
                yield client

    return connect


def snapshot(brain: mc.Brain, digest: Callable[[mc.Brain], str]) -> tuple[str, int]:
    """Every trace, vector and index entry, and the inbox: equal means nothing changed."""
    with brain.read() as conn:
        turns = conn.execute(text("SELECT count(*) FROM inbox_turns")).scalar_one()
    return digest(brain), int(turns)


@pytest.fixture
def unchanged(digest: Callable[[mc.Brain], str]) -> Callable[[mc.Brain], tuple[str, int]]:
    """``unchanged(brain)`` before and after a refused call must be equal."""
    return lambda brain: snapshot(brain, digest)
