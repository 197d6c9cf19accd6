"""OAuth 2.1 for an HTTP server that answers 401: against a protected MCP
server and its authorization server on loopback (``tests.fakes.mcp_oauth_server``),
the SDK's client discovers, registers, sends the user to the page (through
the editor), takes the code on the loopback redirect and the call succeeds;
the tokens are kept owner-only in the state directory and reused."""

from __future__ import annotations

import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from rhema_lsp.mcp.config import McpServerConfig
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.mcp.oauth import token_path
from rhema_lsp.tools import MemoryEditor
from rhema_lsp.vocabulary import MCP_RUN_WAIT_ENV, MCP_SIGN_IN_WAIT_ENV
from tests.unit.mcp.conftest import Listening, fake_oauth
from tests.unit.mcp.test_servers import Options, call, tools_for

pytestmark = pytest.mark.process  # starts child processes


def oauth_server(marks: Path, refuse: str = "") -> Iterator[Listening]:
    server = fake_oauth(marks, refuse)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def protected(marks: Path) -> Iterator[Listening]:
    yield from oauth_server(marks)


@pytest.fixture
def refusing(marks: Path) -> Iterator[Listening]:
    """An authorization server that denies rhema-lsp (the user said no)."""
    yield from oauth_server(marks, refuse="rhema-lsp")


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[McpHub]:
    made = McpHub({}, config_path=tmp_path / "config.json", state_dir=tmp_path / "state")
    yield made
    await made.aclose()


class Browser:
    """Follows the authorization page's redirects, as the user's browser would."""

    def __init__(self, group: anyio.abc.TaskGroup) -> None:
        self.group = group
        self.landed: list[int] = []

    def open(self, url: str) -> None:
        async def visit() -> None:
            async with httpx.AsyncClient(follow_redirects=True, timeout=30) as http:
                self.landed.append((await http.get(url)).status_code)

        self.group.start_soon(visit)


async def test_a_401_leads_to_sign_in_and_the_call_succeeds(
    hub: McpHub, tmp_path: Path, marks: Path, protected: Listening
) -> None:
    url = f"http://127.0.0.1:{protected.port}/mcp"
    remote = McpServerConfig(url=url, allow=("*",))
    editor = MemoryEditor([tmp_path])
    async with anyio.create_task_group() as group:
        browser = Browser(group)
        editor.on_show = browser.open

        (report,) = await hub.status(
            Options({"locked": remote}), check=True, sign_in=True, editor=editor
        )

    assert (report.state, report.tools, report.error) == ("ready", 1, None)
    [page] = editor.shown
    assert page.startswith(f"http://127.0.0.1:{protected.port}/authorize?")
    assert "code_challenge_method=S256" in page and "redirect_uri=http%3A%2F%2F127.0.0.1" in page
    assert browser.landed == [200]  # the loopback page said "signed in"
    resolver = await tools_for(hub, tmp_path, editor, locked=remote)
    result = await call(resolver, "locked__secret", {})
    assert (result.is_error, result.content) == (False, "signed in: the protected tool answered")

    stored = token_path(url, tmp_path / "state")
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert stat.S_IMODE(stored.parent.stat().st_mode) == 0o700
    assert "access_token" in stored.read_text()

    # a new process signs in no more: the stored tokens are used
    other = McpHub({}, config_path=tmp_path / "config.json", state_dir=tmp_path / "state")
    try:
        again = await tools_for(other, tmp_path, editor, locked=remote)
        assert (await call(again, "locked__secret", {})).is_error is False
    finally:
        await other.aclose()
    assert len(editor.shown) == 1
    assert len((marks / "tokens").read_text().splitlines()) == 1


async def test_a_turn_does_not_wait_for_the_sign_in(
    hub: McpHub, tmp_path: Path, protected: Listening, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"http://127.0.0.1:{protected.port}/mcp"
    remote = McpServerConfig(url=url, allow=("*",))
    editor = MemoryEditor([tmp_path])  # opens nothing: nobody signs in

    resolver = await tools_for(hub, tmp_path, editor, locked=remote)

    assert not [s for s in resolver.specs() if s.name.startswith("locked__")]
    assert any(  # said plainly (headless, this reaches the terminal)
        "MCP server locked needs you to sign in, so its tools are missing from this run" in m
        for m in caplog.messages
    )
    (report,) = await hub.status(Options({"locked": remote}))
    assert report.state == "authorizing"
    assert report.error is not None and "sign in" in report.error
    assert f"127.0.0.1:{protected.port}/authorize?" in report.error
    assert editor.shown and editor.shown[0] in report.error
    # An editor's health check says so at once; only the terminal's waits for the sign-in.
    with anyio.fail_after(20):
        (checked,) = await hub.status(Options({"locked": remote}), check=True, editor=editor)
    assert (checked.state, checked.error) == ("authorizing", report.error)
    assert len(editor.shown) == 1  # the page was not opened again


async def test_a_turn_in_a_terminal_waits_for_the_sign_in(
    tmp_path: Path, protected: Listening
) -> None:
    url = f"http://127.0.0.1:{protected.port}/mcp"
    remote = McpServerConfig(url=url, allow=("*",))
    environ = {MCP_RUN_WAIT_ENV: "2", MCP_SIGN_IN_WAIT_ENV: "60"}  # as `ask` in a terminal
    hub = McpHub(environ, config_path=tmp_path / "config.json", state_dir=tmp_path / "state")
    editor = MemoryEditor([tmp_path])
    try:
        async with anyio.create_task_group() as group:
            browser = Browser(group)

            def later(page: str) -> None:  # the user reads the page, then signs in
                async def visit() -> None:
                    await anyio.sleep(1.0)  # a moment to read it
                    browser.open(page)

                group.start_soon(visit)

            editor.on_show = later
            resolver = await tools_for(hub, tmp_path, editor, locked=remote)
            # the same turn has the tools: it waited for the sign-in
            result = await call(resolver, "locked__secret", {})
        assert (result.is_error, result.content) == (
            False,
            "signed in: the protected tool answered",
        )
    finally:
        await hub.aclose()


async def test_a_refused_sign_in_fails_with_the_reason_and_is_not_retried(
    hub: McpHub, tmp_path: Path, refusing: Listening
) -> None:
    remote = McpServerConfig(url=f"http://127.0.0.1:{refusing.port}/mcp", allow=("*",))
    editor = MemoryEditor([tmp_path])
    async with anyio.create_task_group() as group:
        editor.on_show = Browser(group).open
        (report,) = await hub.status(
            Options({"locked": remote}), check=True, sign_in=True, editor=editor
        )

    assert (report.state, report.restarts) == ("failed", 0)
    assert report.error is not None
    assert "signing in did not complete" in report.error and "access_denied" in report.error
    resolver = await tools_for(hub, tmp_path, editor, locked=remote)
    assert not [s for s in resolver.specs() if s.name.startswith("locked__")]
    assert len(editor.shown) == 1  # the turn did not send the user to the page again
