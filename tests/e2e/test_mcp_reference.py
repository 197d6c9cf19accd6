"""The MCP client against the reference servers nobody here wrote:
``@modelcontextprotocol/server-everything`` (every feature of the protocol)
over stdio and Streamable HTTP, and ``@modelcontextprotocol/server-filesystem``
(from ``tests/mcp_servers``, which ``scripts/install.sh`` installs), through
the hub and the run's resolver as a run uses them."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from rhema_lsp.mcp.config import McpServerConfig
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.tools import MemoryEditor
from tests.unit.mcp.conftest import Listening, free_port
from tests.unit.mcp.test_servers import Options, call, tools_for

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "tests" / "mcp_servers" / "node_modules" / "@modelcontextprotocol"
EVERYTHING = SERVERS / "server-everything" / "dist" / "index.js"
FILESYSTEM = SERVERS / "server-filesystem" / "dist" / "index.js"


def installed(script: Path) -> str:
    assert script.is_file(), f"{script} is missing: run scripts/install.sh (its npm step)"
    return str(script)


def everything_stdio(**extra: object) -> McpServerConfig:
    return McpServerConfig.model_validate(
        {"command": "node", "args": [installed(EVERYTHING), "stdio"], **extra}
    )


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[McpHub]:
    made = McpHub({}, config_path=tmp_path / "config.json", backoff=lambda _n: 0.2)
    yield made
    await made.aclose()


@pytest.fixture
def everything_http() -> Iterator[Listening]:
    port = free_port()
    server = Listening(
        ["node", installed(EVERYTHING), "streamableHttp"],
        port,
        {"PORT": str(port), "PATH": os.environ["PATH"]},
    )
    server.start()
    yield server
    server.stop()


async def test_everything_over_stdio_lists_and_calls(hub: McpHub, tmp_path: Path) -> None:
    editor = MemoryEditor([tmp_path])
    resolver = await tools_for(hub, tmp_path, editor, everything=everything_stdio(allow=["*"]))

    names = {spec.name for spec in resolver.specs()}
    assert {"everything__echo", "everything__get-sum"} <= names
    summed = await call(resolver, "everything__get-sum", {"a": 2, "b": 40})
    assert not summed.is_error and "42" in summed.content


async def test_everything_over_http_recovers_after_a_restart(
    hub: McpHub, tmp_path: Path, everything_http: Listening
) -> None:
    editor = MemoryEditor([tmp_path])
    remote = McpServerConfig(url=f"http://127.0.0.1:{everything_http.port}/mcp", allow=("*",))
    resolver = await tools_for(hub, tmp_path, editor, everything=remote)
    first = await call(resolver, "everything__echo", {"message": "before"})
    assert not first.is_error and "before" in first.content

    everything_http.stop()
    everything_http.start()  # it answers 400 "No valid session ID provided" to the old one

    again = await call(resolver, "everything__echo", {"message": "after"})

    assert not again.is_error, again.content
    assert "after" in again.content
    (report,) = await hub.status(Options({"everything": remote}))
    assert (report.state, report.restarts) == ("ready", 1)
