"""MCP servers that misbehave, scripted (``tests.fakes.mcp_scripted``, no
SDK: each starts in a tenth of a second): optional requests refused or
unanswered never sink a start (the log names the method); a call made while
its server restarts waits for the restart and succeeds, the server's tools
offered meanwhile; a frozen server (``SIGSTOP``) is found by a bounded
``ping`` and restarted, while an error answer to ``ping`` proves it alive."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from rhema_lsp.mcp import offers, pages
from rhema_lsp.mcp.config import McpServerConfig
from rhema_lsp.mcp.connection import McpConnection
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.mcp.resolver import McpTools
from rhema_lsp.mcp.states import ServerState
from rhema_lsp.tools import MemoryEditor
from tests.fakes.mcp_scripted import entry, pings, starts
from tests.unit.mcp.conftest import eventually
from tests.unit.mcp.test_servers import Options, call, inner

pytestmark = pytest.mark.process  # starts child processes


def scripted(marks: Path, **env: str) -> McpServerConfig:
    return McpServerConfig.model_validate({**entry(marks, **env), "allow": ["*"]})


@pytest.fixture
async def quick(tmp_path: Path) -> AsyncIterator[McpHub]:
    """A hub whose restarts come after a twentieth of a second."""
    made = McpHub({}, config_path=tmp_path / "config.json", backoff=lambda _n: 0.05)
    yield made
    await made.aclose()


async def test_refused_and_unanswered_optional_requests_never_sink_a_start(
    quick: McpHub,
    tmp_path: Path,
    marks: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.WARNING, logger="rhema_lsp.mcp")
    monkeypatch.setattr(offers, "OPTIONAL_S", 0.5)
    editor = MemoryEditor([tmp_path])
    config = scripted(
        marks,
        FAKE_SCRIPT_REFUSE="logging/setLevel,prompts/list",
        FAKE_SCRIPT_IGNORE="resources/list",
    )
    options = Options({"s": config})
    resolver = await quick.resolver(
        inner(tmp_path, editor), "agent", tmp_path, editor, "openai", options
    )
    assert (await call(resolver, "s__echo", {"text": "hi"})).content == "echo: hi"
    (report,) = await quick.status(options)
    assert report.state == "ready" and report.tools == 4
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "logging/setLevel failed" in logged
    assert "resources/list failed (no answer within 0.5 s)" in logged


async def test_a_refused_tool_listing_fails_the_start_naming_the_method(
    quick: McpHub, tmp_path: Path, marks: Path
) -> None:
    editor = MemoryEditor([tmp_path])
    options = Options({"s": scripted(marks, FAKE_SCRIPT_REFUSE="tools/list")})
    await quick.resolver(inner(tmp_path, editor), "agent", tmp_path, editor, "openai", options)
    (report,) = await quick.status(options)
    assert report.state == "failed" and "tools/list failed" in (report.error or "")


async def test_a_call_while_its_server_restarts_waits_for_it_and_succeeds(
    quick: McpHub, tmp_path: Path, marks: Path
) -> None:
    editor = MemoryEditor([tmp_path])
    options = Options({"s": scripted(marks, FAKE_SCRIPT_SLOW_START="1")})
    resolver = await quick.resolver(
        inner(tmp_path, editor), "agent", tmp_path, editor, "openai", options
    )
    crashed = await call(resolver, "s__crash", {})
    assert crashed.is_error and "stopped during the call" in crashed.content
    assert isinstance(resolver, McpTools)
    connection = resolver.servers[0].connection
    await eventually(lambda: connection.state is ServerState.RESTARTING, 10)
    # still offered while it restarts (the restart takes a second)
    assert "s__echo" in [spec.name for spec in resolver.specs()]
    with anyio.fail_after(15):
        result = await call(resolver, "s__echo", {"text": "after"})
    assert (result.is_error, result.content) == (False, "echo: after")
    assert len(starts(marks)) == 2


async def test_a_frozen_server_is_found_by_ping_and_restarted(
    tmp_path: Path, marks: Path, caplog: pytest.LogCaptureFixture
) -> None:
    connection = McpConnection(
        "s",
        scripted(marks, FAKE_SCRIPT_PING="error"),  # an error answer: alive all the same
        environ={},
        cwd=tmp_path,
        backoff=lambda _n: 0.05,
        ping=(0.2, 0.5),
    )
    try:
        await connection.ensure_started(10)
        assert connection.state is ServerState.READY
        # the third ping is sent once the first two error answers were taken as alive
        await eventually(lambda: pings(marks) >= 3, 10)
        assert connection.state is ServerState.READY and len(starts(marks)) == 1
        (pid,) = starts(marks)
        os.kill(pid, signal.SIGSTOP)
        try:
            await eventually(
                lambda: len(starts(marks)) == 2 and connection.state is ServerState.READY, 15
            )
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)  # never leave a stopped child behind
        assert connection.restarts == 1
        assert any("did not answer a ping within 0.5 s" in m for m in caplog.messages)
    finally:
        await connection.aclose()


@pytest.mark.parametrize("answer", ["Open", "Deny"])
async def test_a_page_required_first_is_offered_and_the_call_retried_once_visited(
    quick: McpHub, tmp_path: Path, marks: Path, answer: str
) -> None:
    editor = MemoryEditor([tmp_path], answer=answer)

    def sign_in(_url: str) -> None:  # the user visits the page
        (marks / "visited").write_text("yes")

    editor.on_show = sign_in
    options = Options({"s": scripted(marks, FAKE_SCRIPT_PROTOCOL="2025-11-25")})
    resolver = await quick.resolver(
        inner(tmp_path, editor), "agent", tmp_path, editor, "openai", options
    )
    with anyio.fail_after(20):
        result = await call(resolver, "s__vault", {})
    assert editor.asked == [
        (
            "The MCP server s asks you to open https://vault.example/connect: Connect the vault",
            ("Deny", "Open"),
        )
    ]
    if answer == "Open":
        assert (result.is_error, result.content) == (False, "opened")
        assert editor.shown == ["https://vault.example/connect"]
    else:
        assert result.is_error and editor.shown == []
        assert "needs https://vault.example/connect visited first" in result.content


async def test_a_page_never_completed_ends_the_call_after_the_bound(
    quick: McpHub, tmp_path: Path, marks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages, "URL_WAIT_S", 0.3)
    editor = MemoryEditor([tmp_path], answer="Open")  # opened, but nobody signs in
    options = Options({"s": scripted(marks, FAKE_SCRIPT_PROTOCOL="2025-11-25")})
    resolver = await quick.resolver(
        inner(tmp_path, editor), "agent", tmp_path, editor, "openai", options
    )
    result = await call(resolver, "s__vault", {})
    assert result.is_error and "did not hear within 0.3 s" in result.content


async def test_always_allow_this_tool_is_offered_in_the_question_and_kept(
    quick: McpHub, tmp_path: Path, marks: Path
) -> None:
    editor = MemoryEditor([tmp_path])
    editor.answers = ["Always allow this tool", "Deny"]
    options = Options({"s": McpServerConfig.model_validate(entry(marks))})  # nothing allowed
    resolver = await quick.resolver(
        inner(tmp_path, editor), "agent", tmp_path, editor, "openai", options
    )
    assert (await call(resolver, "s__echo", {"text": "one"})).content == "echo: one"
    [(question, choices)] = editor.asked
    assert "MCP tool echo of the server s" in question
    assert choices == ("Deny", "Allow", "Always allow this tool")
    # the same tool, other arguments, a later run: not asked again
    again = await quick.resolver(
        inner(tmp_path, editor), "agent", tmp_path, editor, "openai", options
    )
    assert (await call(again, "s__echo", {"text": "two"})).content == "echo: two"
    assert len(editor.asked) == 1
    # another tool of the server is still asked (and denied here)
    denied = await call(again, "s__vault", {})
    assert denied.is_error and "did not approve" in denied.content and len(editor.asked) == 2


class _Telling(MemoryEditor):
    """An editor that cannot open pages but shows messages (an LSP client
    without ``window/showDocument``)."""

    told: list[str]

    def notify(self, message: str) -> None:
        self.told.append(message)


async def test_a_page_the_editor_cannot_open_is_named_in_a_message(
    quick: McpHub, tmp_path: Path, marks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages, "URL_WAIT_S", 0.2)
    editor = _Telling([tmp_path], answer="Open")
    editor.told = []
    options = Options({"s": scripted(marks, FAKE_SCRIPT_PROTOCOL="2025-11-25")})
    resolver = await quick.resolver(
        inner(tmp_path, editor), "agent", tmp_path, editor, "openai", options
    )
    await call(resolver, "s__vault", {})
    assert editor.shown == ["https://vault.example/connect"]  # tried, not opened
    assert editor.told == ["Open this page for the MCP server s: https://vault.example/connect"]
