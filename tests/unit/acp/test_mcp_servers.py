"""The MCP servers an ACP client passes, as the MCP layer's entries: stdio
and HTTP kept with the editor's values, SSE and MCP-over-ACP refused in the
log, a repeated name or a bad entry left out by name."""

from __future__ import annotations

import logging

import pytest
from acp.schema import (
    AcpMcpServer,
    EnvVariable,
    HttpHeader,
    HttpMcpServer,
    McpServerStdio,
    SseMcpServer,
)

from rhema_lsp.acp.mcp_servers import ClientServer, client_servers


def test_stdio_and_http_servers_keep_the_editors_values() -> None:
    servers = client_servers(
        [
            McpServerStdio(
                name="time",
                command="uvx",
                args=["mcp-server-time"],
                env=[EnvVariable(name="TZ", value="${TZ}")],
            ),
            HttpMcpServer(
                type="http",
                name="remote",
                url="https://mcp.example.com/mcp",
                headers=[HttpHeader(name="Authorization", value="Bearer token")],
            ),
        ]
    )
    time, remote = servers["time"], servers["remote"]
    assert (time.transport, time.command, time.args, time.env) == (
        "stdio",
        "uvx",
        ("mcp-server-time",),
        {"TZ": "${TZ}"},
    )
    assert (remote.transport, remote.url) == ("http", "https://mcp.example.com/mcp")
    assert remote.headers == {"Authorization": "Bearer token"}
    assert time.allow == () and remote.allow == ()  # every call asks


def test_refused_and_repeated_servers_are_named_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    passed: list[ClientServer] = [
        SseMcpServer(type="sse", name="old", url="https://h/sse", headers=[]),
        AcpMcpServer(type="acp", name="inner", server_id="s1"),
        McpServerStdio(name="twice", command="a", args=[], env=[]),
        McpServerStdio(name="twice", command="b", args=[], env=[]),
        HttpMcpServer(
            type="http",
            name="bad",
            url="ftp://h",
            headers=[HttpHeader(name="X-Key", value="hidden-value")],
        ),
    ]
    with caplog.at_level(logging.WARNING):
        servers = client_servers(passed)

    assert list(servers) == ["twice"] and servers["twice"].command == "a"
    text = caplog.text
    assert "'old' from the editor is left out: its SSE transport is not supported" in text
    assert "'inner' from the editor is left out: its ACP transport" in text
    assert "'twice' is passed twice" in text
    assert "'bad' from the editor is left out" in text and "http://" in text
    assert "hidden-value" not in text
