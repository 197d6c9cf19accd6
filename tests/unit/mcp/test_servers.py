"""The MCP client against real servers: the reference servers from PyPI over
stdio, and the SDK-written fake over stdio and Streamable HTTP on loopback.
Each test goes through the hub and the run's resolver, as a run does."""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from rhema_lsp.engine import ReplaySafety, ToolCall, ToolContext, ToolResolver, ToolResult
from rhema_lsp.mcp.config import McpServerConfig
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.mcp.resolver import McpTools
from rhema_lsp.tools import MemoryEditor, WorkspaceTools
from tests.unit.mcp.conftest import alive, eventually, fake_stdio

pytestmark = pytest.mark.process  # starts child processes


@dataclass
class Options:
    """The settings the hub reads."""

    mcp_servers: dict[str, McpServerConfig] = field(default_factory=dict)
    mcp_modes: tuple[str, ...] = ("agent",)
    mcp_start_timeout: float = 10.0


def inner(folder: Path, editor: MemoryEditor) -> WorkspaceTools:
    return WorkspaceTools([folder], folder, "agent", editor)


async def tools_for(
    hub: McpHub, folder: Path, editor: MemoryEditor, mode: str = "agent", **servers: McpServerConfig
) -> ToolResolver:
    return await hub.resolver(
        inner(folder, editor), mode, folder, editor, "openai", Options(servers)
    )


async def call(
    resolver: ToolResolver, name: str, args: dict[str, Any], ctx: ToolContext | None = None
) -> ToolResult:
    return await resolver.resolve(ToolCall(id="c1", name=name, args=args), ctx or ToolContext())


async def test_mcp_server_time_lists_its_tools_and_answers_an_allowed_call(
    hub: McpHub, tmp_path: Path
) -> None:
    editor = MemoryEditor([tmp_path])
    time_server = McpServerConfig(
        command=sys.executable, args=("-m", "mcp_server_time"), allow=("get_current_time",)
    )
    resolver = await tools_for(hub, tmp_path, editor, time=time_server)

    names = [spec.name for spec in resolver.specs()]
    assert "time__get_current_time" in names and "time__convert_time" in names
    assert "read_file" in names  # the workspace tools are still there
    result = await call(resolver, "time__get_current_time", {"timezone": "Etc/UTC"})
    assert not result.is_error, result.content
    assert '"timezone": "Etc/UTC"' in result.content
    assert editor.asked == []  # allow-listed
    bad = await call(resolver, "time__get_current_time", {"timezone": "Nowhere/Atlantis"})
    assert bad.is_error and "Atlantis" in bad.content
    status = await hub.status(Options({"time": time_server}))
    assert [(s.name, s.state, s.tools) for s in status] == [("time", "ready", 2)]


async def test_mcp_server_git_on_a_temporary_repository(hub: McpHub, git_repo: Path) -> None:
    repo = git_repo
    editor = MemoryEditor([repo], answer="Allow")
    git = McpServerConfig(command=sys.executable, args=("-m", "mcp_server_git", "-r", str(repo)))
    resolver = await tools_for(hub, repo, editor, git=git)

    assert "git__git_status" in [spec.name for spec in resolver.specs()]
    result = await call(resolver, "git__git_status", {"repo_path": str(repo)})
    assert not result.is_error, result.content
    assert "new.txt" in result.content
    assert len(editor.asked) == 1 and "git_status" in editor.asked[0][0]


async def test_a_call_needs_approval_and_a_denied_call_runs_nothing(
    hub: McpHub, tmp_path: Path, marks: Path
) -> None:
    editor = MemoryEditor([tmp_path], answer="Deny")
    resolver = await tools_for(hub, tmp_path, editor, fake=fake_stdio(marks))

    denied = await call(resolver, "fake__slow", {"seconds": 0})
    assert denied.is_error and "did not approve" in denied.content
    assert "fake__slow" in editor.asked[0][0] or "slow" in editor.asked[0][0]
    editor.answer = "Allow"
    approved = await call(resolver, "fake__echo", {"text": "hi"})
    assert (approved.is_error, approved.content) == (False, "echo: hi")
    assert len(editor.asked) == 2


async def test_results_errors_images_and_links_come_back_in_band(
    hub: McpHub, tmp_path: Path, marks: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="rhema_lsp.mcp.server")
    editor = MemoryEditor([tmp_path])
    resolver = await tools_for(hub, tmp_path, editor, fake=fake_stdio(marks, allow=["*"]))

    failed = await call(resolver, "fake__boom", {})
    assert failed.is_error and "boom" in failed.content
    unknown = await call(resolver, "fake__missing", {})
    assert unknown.is_error and "unknown tool" in unknown.content
    picture = await call(resolver, "fake__picture", {})
    assert not picture.is_error
    assert "[image image/png" in picture.content and "<file:///readme.md>" in picture.content
    assert any("fake-mcp starting" in record.getMessage() for record in caplog.records)


async def test_the_child_gets_no_provider_keys(
    hub: McpHub, tmp_path: Path, marks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    editor = MemoryEditor([tmp_path])
    resolver = await tools_for(hub, tmp_path, editor, fake=fake_stdio(marks, allow=["whoami"]))
    result = await call(resolver, "fake__whoami", {})
    assert result.content == "unset False"


async def test_replay_safety_follows_the_user_marks_only(
    hub: McpHub, tmp_path: Path, marks: Path
) -> None:
    editor = MemoryEditor([tmp_path])
    resolver = await tools_for(hub, tmp_path, editor, fake=fake_stdio(marks, safe=["echo"]))
    assert resolver.replay_safety("fake__echo") is ReplaySafety.SAFE
    assert resolver.replay_safety("fake__slow") is ReplaySafety.UNSAFE
    assert resolver.replay_safety("read_file") is ReplaySafety.SAFE


async def test_cancel_mid_call_cancels_it_on_the_server(
    hub: McpHub, tmp_path: Path, marks: Path
) -> None:
    editor = MemoryEditor([tmp_path])
    resolver = await tools_for(hub, tmp_path, editor, fake=fake_stdio(marks, allow=["slow"]))
    ctx = ToolContext()

    async def cancel_soon() -> None:
        await anyio.sleep(1.0)
        ctx.cancel.set()

    async with anyio.create_task_group() as group:
        group.start_soon(cancel_soon)
        with anyio.fail_after(20):
            result = await call(resolver, "fake__slow", {"seconds": 60}, ctx)
    assert result.is_error and "cancelled" in result.content
    await eventually((marks / "cancelled").exists, 10)


async def test_a_crashed_server_is_restarted(hub: McpHub, tmp_path: Path, marks: Path) -> None:
    editor = MemoryEditor([tmp_path])
    config = fake_stdio(marks, allow=["*"])
    resolver = await tools_for(hub, tmp_path, editor, fake=config)

    crashed = await call(resolver, "fake__crash", {})
    assert crashed.is_error and "stopped during the call" in crashed.content
    with anyio.fail_after(60):
        await eventually(lambda: len((marks / "starts").read_text().splitlines()) >= 2)
        while True:
            (report,) = await hub.status(Options({"fake": config}))
            if report.state == "ready":
                break
            await anyio.sleep(0.1)
    assert report.restarts == 1
    again = await call(resolver, "fake__echo", {"text": "back"})
    assert again.content == "echo: back"


async def test_streamable_http_with_a_header_from_the_environment(
    hub: McpHub, tmp_path: Path, http_server: str
) -> None:
    editor = MemoryEditor([tmp_path])
    remote = McpServerConfig(
        url=http_server, headers={"X-Token": "${FAKE_TOKEN}"}, allow=("echo", "nested")
    )
    resolver = await tools_for(hub, tmp_path, editor, remote=remote)

    assert isinstance(resolver, McpTools)
    result = await call(resolver, "remote__nested", {"point": {"x": 1, "y": 2}})
    assert (result.is_error, result.content) == (False, "point at 1,2")
    spec = next(s for s in resolver.specs() if s.name == "remote__nested")
    assert "$ref" not in str(spec.parameters)


async def test_a_server_whose_header_needs_an_unset_variable_fails_and_says_which(
    hub: McpHub, tmp_path: Path
) -> None:
    editor = MemoryEditor([tmp_path])
    remote = McpServerConfig(url="http://127.0.0.1:9/mcp", headers={"A": "${NOT_SET_ANYWHERE}"})
    resolver = await tools_for(hub, tmp_path, editor, remote=remote)
    assert not [s for s in resolver.specs() if s.name.startswith("remote__")]
    (report,) = await hub.status(Options({"remote": remote}))
    assert (report.state, report.restarts) == ("failed", 0)  # not retried: it cannot work
    assert report.error is not None and "NOT_SET_ANYWHERE" in report.error


async def test_outside_the_mcp_modes_nothing_starts(
    hub: McpHub, tmp_path: Path, marks: Path
) -> None:
    editor = MemoryEditor([tmp_path])
    plain = inner(tmp_path, editor)
    resolver = await hub.resolver(
        plain, "edit", tmp_path, editor, "openai", Options({"fake": fake_stdio(marks)})
    )
    assert resolver is plain
    assert not (marks / "starts").exists()


async def test_a_changed_entry_restarts_and_a_removed_one_stops(
    hub: McpHub, tmp_path: Path, marks: Path
) -> None:
    editor = MemoryEditor([tmp_path])
    await tools_for(hub, tmp_path, editor, fake=fake_stdio(marks))
    first = int((marks / "starts").read_text().split()[0])
    changed = await tools_for(hub, tmp_path, editor, fake=fake_stdio(marks, allow=["echo"]))
    assert (await call(changed, "fake__echo", {"text": "new"})).content == "echo: new"
    assert editor.asked == []  # the new entry's allow-list holds
    await eventually(lambda: not alive(first), 10)
    second = int((marks / "starts").read_text().split()[1])
    await tools_for(hub, tmp_path, editor)
    await eventually(lambda: not alive(second), 10)
    assert await hub.status(Options()) == []
