"""A workspace ``.mcp.json`` is offered, never used on its own: only after the
user said yes for that folder and that exact content, remembered in the user
config file; its servers get no allow-list, no safe marks, no environment."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from rhema_lsp.engine import ReplaySafety, ToolResolver
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.mcp.userfile import read_user_config
from rhema_lsp.tools import MemoryEditor
from tests.unit.mcp.conftest import ROOT, alive, eventually
from tests.unit.mcp.test_servers import Options, call, inner

pytestmark = pytest.mark.process  # starts child processes


def write_file(folder: Path, marks: Path, **extra: object) -> None:
    entry = {
        "command": sys.executable,
        "args": ["-m", "tests.fakes.mcp_server", "stdio"],
        "env": {"FAKE_MCP_MARKS": str(marks), "PYTHONPATH": str(ROOT)},
        "allow": ["*"],
        "safe": ["*"],
        **extra,
    }
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": entry}}))


async def resolve(hub: McpHub, folder: Path, editor: MemoryEditor) -> ToolResolver:
    return await hub.resolver(inner(folder, editor), "agent", folder, editor, "openai", Options())


async def test_it_is_ignored_until_confirmed_then_remembered(
    hub: McpHub, tmp_path: Path, marks: Path
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    write_file(folder, marks)
    editor = MemoryEditor([folder], answer="Not now")

    first = await resolve(hub, folder, editor)
    assert not [s for s in first.specs() if s.name.startswith("repo__")]
    assert not (marks / "starts").exists()
    assert len(editor.asked) == 1 and ".mcp.json" in editor.asked[0][0]
    await resolve(hub, folder, editor)
    assert len(editor.asked) == 1  # "Not now" holds for this server's life

    other = McpHub(config_path=hub.config_path)  # a new server process
    try:
        editor.answer = "Always use them"
        used = await resolve(other, folder, editor)
        assert "repo__echo" in [s.name for s in used.specs()]
        assert len(editor.asked) == 2
        recorded = await anyio.to_thread.run_sync(read_user_config, hub.config_path)
        assert recorded.answers[str(folder)][1] is True
        # nothing allow-listed or safe from a workspace file
        assert used.replay_safety("repo__echo") is ReplaySafety.UNSAFE
        editor.answer = "Deny"
        denied = await call(used, "repo__echo", {"text": "x"})
        assert denied.is_error and "did not approve" in denied.content
    finally:
        await other.aclose()

    third = McpHub(config_path=hub.config_path)
    try:
        again = await resolve(third, folder, editor)
        assert "repo__echo" in [s.name for s in again.specs()]
        assert len(editor.asked) == 3  # the call above; no new trust question
        write_file(folder, marks, args=["-m", "tests.fakes.mcp_server", "stdio", "changed"])
        editor.answer = "Never"
        changed = await resolve(third, folder, editor)
        assert not [s for s in changed.specs() if s.name.startswith("repo__")]
        assert len(editor.asked) == 4 and ".mcp.json" in editor.asked[-1][0]
    finally:
        await third.aclose()
    answers = read_user_config(hub.config_path).answers
    assert answers[str(folder)][1] is False


async def test_a_workspace_server_may_not_read_the_environment(
    hub: McpHub, tmp_path: Path, marks: Path
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    write_file(folder, marks, env={"LEAK": "${FAKE_TOKEN}", "FAKE_MCP_MARKS": str(marks)})
    editor = MemoryEditor([folder], answer="Use them this time")
    resolver = await resolve(hub, folder, editor)
    assert not [s for s in resolver.specs() if s.name.startswith("repo__")]
    (report,) = [r for r in await hub.status(Options()) if r.name == "repo"]
    assert report.source == "workspace"
    assert report.error is not None and "user settings" in report.error
    assert "s3cret" not in report.error


async def test_the_hub_stops_its_servers(hub: McpHub, tmp_path: Path, marks: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    write_file(folder, marks)
    editor = MemoryEditor([folder], answer="Use them this time")
    await resolve(hub, folder, editor)
    pid = int((marks / "starts").read_text().split()[0])
    await hub.aclose()
    await eventually(lambda: not alive(pid), 10)


async def test_this_time_trusts_it_for_this_server_only(
    hub: McpHub, tmp_path: Path, marks: Path
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    write_file(folder, marks)
    editor = MemoryEditor([folder], answer="Use them this time")
    first = await resolve(hub, folder, editor)
    assert "repo__echo" in [s.name for s in first.specs()]
    assert editor.asked[0][1] == ("Use them this time", "Always use them", "Not now", "Never")
    await resolve(hub, folder, editor)
    assert len(editor.asked) == 1  # asked once in this server's life
    recorded = await anyio.to_thread.run_sync(read_user_config, hub.config_path)
    assert str(folder) not in recorded.answers  # nothing remembered

    other = McpHub(config_path=hub.config_path)  # the next run asks again
    try:
        editor.answer = "Not now"
        await resolve(other, folder, editor)
        assert len(editor.asked) == 2
    finally:
        await other.aclose()
