"""Bounded start-up: a server that hangs at ``initialize`` costs one bounded
wait and is ``failed`` with its reason, tried again in the background while
later turns go on without waiting; a server that cannot start as configured
(no such command, a refused value) fails at once and is not retried; the
health check of ``status(check=True)`` starts the servers and reports them;
stopping a child that ignores end of input and ``SIGTERM`` takes about a second."""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rhema_lsp.engine import ToolResolver
from rhema_lsp.mcp.config import McpServerConfig
from rhema_lsp.mcp.connection import McpConnection
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.tools import MemoryEditor
from tests.fakes.mcp_hang import entry
from tests.unit.mcp.conftest import ROOT, alive, eventually, fake_stdio
from tests.unit.mcp.test_servers import Options, call, inner

pytestmark = pytest.mark.process  # starts child processes


def hanging(marks: Path) -> McpServerConfig:
    return McpServerConfig.model_validate(entry(marks))


def starts(marks: Path) -> int:
    path = marks / "starts"
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.fixture
async def quick(tmp_path: Path) -> AsyncIterator[McpHub]:
    """A hub whose restarts come after a tenth of a second."""
    made = McpHub(
        {}, config_path=tmp_path / "config.json", backoff=lambda _n: 0.1, state_dir=tmp_path
    )
    yield made
    await made.aclose()


async def turn(hub: McpHub, folder: Path, editor: MemoryEditor, options: Options) -> ToolResolver:
    return await hub.resolver(inner(folder, editor), "agent", folder, editor, "openai", options)


async def test_a_hung_server_fails_within_the_bound_and_is_retried_in_the_background(
    quick: McpHub, tmp_path: Path, marks: Path
) -> None:
    editor = MemoryEditor([tmp_path])
    healthy = fake_stdio(tmp_path, allow=["echo"])
    servers = {"stuck": hanging(marks), "fake": healthy}
    options = Options(servers, mcp_start_timeout=60)

    resolver = await quick.resolver(
        inner(tmp_path, editor), "agent", tmp_path, editor, "openai", options
    )

    names = [spec.name for spec in resolver.specs()]
    assert "fake__echo" in names and not [n for n in names if n.startswith("stuck__")]
    reports = {r.name: r for r in await quick.status(options)}
    assert reports["fake"].state == "ready"
    assert reports["stuck"].state == "failed"
    assert "did not finish starting" in (reports["stuck"].error or "")
    assert "within 2 s" in (reports["stuck"].error or "")
    # tried again in the background, and still `failed` (not `starting`) meanwhile
    await eventually(lambda: starts(marks) >= 2)
    retrying = {r.name: r for r in await quick.status(options)}["stuck"]
    assert retrying.state == "failed" and retrying.restarts >= 1
    later = await quick.resolver(
        inner(tmp_path, editor), "agent", tmp_path, editor, "openai", options
    )
    assert (await call(later, "fake__echo", {"text": "on"})).content == "echo: on"


async def test_a_missing_command_fails_at_once_with_the_reason_and_is_not_retried(
    quick: McpHub, tmp_path: Path
) -> None:
    editor = MemoryEditor([tmp_path])
    missing = McpServerConfig(command="no-such-mcp-server-anywhere", args=("--x",))
    options = Options({"gone": missing})

    await turn(quick, tmp_path, editor, options)
    await turn(quick, tmp_path, editor, options)

    (report,) = await quick.status(options)
    assert report.state == "failed"
    assert report.error is not None
    assert "no such command 'no-such-mcp-server-anywhere'" in report.error
    assert "not found on PATH" in report.error
    assert report.restarts == 0


async def test_a_missing_working_directory_fails_at_once(quick: McpHub, tmp_path: Path) -> None:
    editor = MemoryEditor([tmp_path])
    entry = McpServerConfig(command=sys.executable, cwd=str(tmp_path / "nowhere"))
    options = Options({"lost": entry})
    await turn(quick, tmp_path, editor, options)
    (report,) = await quick.status(options)
    assert (report.state, report.restarts) == ("failed", 0)
    assert "working directory" in (report.error or "") and "nowhere" in (report.error or "")


async def test_a_server_that_exits_at_once_is_failed_with_its_stderr(
    quick: McpHub, tmp_path: Path
) -> None:
    editor = MemoryEditor([tmp_path])
    entry = McpServerConfig(
        command=sys.executable, args=("-c", "import sys; sys.exit('bad flag --nope')")
    )
    options = Options({"broken": entry})
    await turn(quick, tmp_path, editor, options)
    (report,) = await quick.status(options)
    assert report.state == "failed"
    assert "bad flag --nope" in (report.error or "")


async def test_the_health_check_starts_the_configured_servers(
    quick: McpHub, tmp_path: Path, marks: Path
) -> None:
    options = Options({"fake": fake_stdio(marks)}, mcp_start_timeout=30)
    (before,) = await quick.status(options)
    assert before.state == "idle" and starts(marks) == 0

    (checked,) = await quick.status(options, check=True)

    assert (checked.state, checked.tools, checked.error) == ("ready", 17, None)
    assert starts(marks) == 1


async def test_the_server_runs_in_the_session_folder(quick: McpHub, tmp_path: Path) -> None:
    folder = tmp_path / "session"
    folder.mkdir()
    editor = MemoryEditor([folder], answer="Allow")
    pwd = McpServerConfig(
        command=sys.executable,
        args=("-m", "tests.fakes.mcp_server", "stdio"),
        env={"PYTHONPATH": str(ROOT), "FAKE_MCP_MARKS": str(tmp_path)},
    )
    resolver = await quick.resolver(
        inner(folder, editor), "agent", folder, editor, "openai", Options({"fake": pwd})
    )
    assert (await call(resolver, "fake__where", {})).content == str(folder)


async def test_stopping_never_waits_long_on_a_child_that_ignores_eof_and_sigterm(
    tmp_path: Path, marks: Path
) -> None:
    stubborn = entry(marks, start_timeout=60)
    stubborn["env"] = {**stubborn["env"], "FAKE_HANG_STUBBORN": "1"}  # type: ignore[dict-item]
    connection = McpConnection(
        "stuck", McpServerConfig.model_validate(stubborn), environ={}, cwd=tmp_path
    )
    connection.start()
    await eventually(lambda: starts(marks) == 1)
    (pid,) = [int(line) for line in (marks / "starts").read_text().split()]
    began = time.monotonic()
    await connection.aclose()
    assert time.monotonic() - began < 2.5  # the SDK's own waits alone were 4 s
    await eventually(lambda: not alive(pid), 5)
