"""Streamable HTTP done right: a server restarted mid-session (its session
gone: 404) gets a new session on the next call, which is sent once more;
an HTTP error keeps its status and the start of its body in the message."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rhema_lsp.mcp.config import McpServerConfig
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.tools import MemoryEditor
from tests.unit.mcp.conftest import Listening, fake_http
from tests.unit.mcp.test_servers import Options, call, tools_for

pytestmark = pytest.mark.process  # starts child processes


@pytest.fixture
def server(marks: Path) -> Iterator[Listening]:
    started = fake_http(marks)
    started.start()
    yield started
    started.stop()


def starts(marks: Path) -> int:
    return len((marks / "starts").read_text().splitlines())


async def test_a_server_restarted_mid_session_recovers_on_the_next_call(
    hub: McpHub, tmp_path: Path, marks: Path, server: Listening
) -> None:
    editor = MemoryEditor([tmp_path])
    remote = McpServerConfig(url=f"http://127.0.0.1:{server.port}/mcp", allow=("*",))
    resolver = await tools_for(hub, tmp_path, editor, remote=remote)
    assert (await call(resolver, "remote__echo", {"text": "one"})).content == "echo: one"

    server.stop()
    server.start()  # the same URL, none of the old sessions
    assert starts(marks) == 2

    again = await call(resolver, "remote__echo", {"text": "two"})

    assert (again.is_error, again.content) == (False, "echo: two")
    (report,) = await hub.status(Options({"remote": remote}))
    assert (report.state, report.restarts, report.error) == ("ready", 1, None)
    later = await call(resolver, "remote__echo", {"text": "three"})
    assert later.content == "echo: three"


async def test_an_http_error_keeps_its_status_and_body(
    hub: McpHub, tmp_path: Path, server: Listening
) -> None:
    editor = MemoryEditor([tmp_path])
    remote = McpServerConfig(url=f"http://127.0.0.1:{server.port}/mcp", allow=("*",))
    resolver = await tools_for(hub, tmp_path, editor, remote=remote)

    failed = await call(resolver, "remote__outage", {})

    assert failed.is_error
    assert "HTTP 503" in failed.content
    assert "the backend is down for maintenance until 14:00" in failed.content
    (report,) = await hub.status(Options({"remote": remote}))
    assert (report.state, report.restarts) == ("ready", 0)  # not a lost session
    assert (await call(resolver, "remote__echo", {"text": "ok"})).content == "echo: ok"
