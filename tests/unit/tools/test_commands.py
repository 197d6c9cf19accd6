"""run_command: streaming, exit codes, approval, allow-list, timeout and
cancellation killing the whole process group, scrubbed environment."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from rhema_lsp.engine import ToolCall, ToolContext, ToolResult
from rhema_lsp.tools import is_allowlisted, scrubbed_environment
from rhema_lsp.tools.commands import live_group_members

from .conftest import Bench

pytestmark = pytest.mark.process  # starts child processes


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"


async def test_lines_stream_before_the_command_ends(bench: Bench) -> None:
    bench.editor.answer = "Run"
    go = bench.root / "go"
    seen: list[str] = []

    def progress(chunk: str) -> None:
        seen.append(chunk)
        if chunk == "first\n":
            go.write_text("")  # the command only finishes after this line arrived

    call = ToolCall(
        id="c1",
        name="run_command",
        args={"command": "echo first; while [ ! -f go ]; do sleep 0.02; done; echo second >&2"},
    )
    result = await bench.tools.resolve_streaming(call, ToolContext(cwd=bench.root), progress)
    assert not result.is_error, result.content
    assert seen == ["first\n", "second\n"]
    assert result.content == "first\nsecond\n[exit code 0]"
    assert result.code == 0


async def test_exit_code_and_cwd(bench: Bench) -> None:
    bench.editor.answer = "Run"
    result = await bench.call("run_command", command="pwd; exit 3")
    assert result.is_error
    assert result.code == 3
    assert result.content == f"{bench.root}\n[exit code 3]"


async def test_denied_command_does_not_run(bench: Bench) -> None:
    bench.editor.answer = "Deny"
    result = await bench.call("run_command", command="touch ran")
    assert result.is_error and "did not approve" in result.content
    assert not (bench.root / "ran").exists()
    assert bench.editor.asked and "touch ran" in bench.editor.asked[0][0]


async def test_allowlisted_command_runs_without_asking(bench: Bench) -> None:
    bench.make("agent", command_allowlist=["echo"])
    result = await bench.call("run_command", command="echo hi there")
    assert not result.is_error and result.content.startswith("hi there\n")
    assert bench.editor.asked == []


async def test_timeout_kills_the_group(bench: Bench) -> None:
    bench.editor.answer = "Run"
    result = await bench.call(
        "run_command", command="sleep 300 & echo $! > child.pid; echo started; wait", timeout_s=1
    )
    assert result.is_error and "timed out" in result.content
    assert "started" in result.content
    child = int((bench.root / "child.pid").read_text())
    assert not _alive(child)


async def test_cancel_signal_kills_the_group(bench: Bench) -> None:
    bench.editor.answer = "Run"
    ctx = ToolContext(cwd=bench.root)

    def progress(chunk: str) -> None:
        if chunk == "started\n":
            ctx.cancel.set()

    call = ToolCall(
        id="c",
        name="run_command",
        args={"command": "sleep 300 & echo $! > child.pid; echo started; wait"},
    )
    result = await bench.tools.resolve_streaming(call, ctx, progress)
    assert result.is_error and "cancelled" in result.content
    assert not _alive(int((bench.root / "child.pid").read_text()))


async def test_task_cancellation_kills_the_group(bench: Bench) -> None:
    bench.editor.answer = "Run"
    results: list[ToolResult] = []
    async with anyio.create_task_group() as group:

        def progress(chunk: str) -> None:
            if chunk == "started\n":
                group.cancel_scope.cancel()

        async def run() -> None:
            call = ToolCall(
                id="c",
                name="run_command",
                args={"command": "sleep 300 & echo $! > child.pid; echo started; wait"},
            )
            results.append(
                await bench.tools.resolve_streaming(call, ToolContext(cwd=bench.root), progress)
            )

        group.start_soon(run)
    assert results == []
    assert not _alive(int((bench.root / "child.pid").read_text()))


async def test_background_children_do_not_outlive_the_call(bench: Bench) -> None:
    bench.editor.answer = "Run"
    result = await bench.call(
        "run_command", command="sleep 300 > /dev/null 2>&1 & echo $! > child.pid; echo done"
    )
    assert not result.is_error
    child = int((bench.root / "child.pid").read_text())
    assert not _alive(child)
    assert live_group_members(child) == []


async def test_environment_has_no_provider_keys(bench: Bench) -> None:
    bench.editor.answer = "Run"
    env = {
        "PATH": "/usr/bin:/bin",
        "OPENAI_API_KEY": "sk-visible-1",
        "GITHUB_TOKEN": "ghp-visible-2",
        "RHEMA_API_KEY": "rk-visible-3",
        "KEEP_ME": "kept",
    }
    bench.make("agent", env=env)
    result = await bench.call("run_command", command="env")
    assert "KEEP_ME=kept" in result.content
    assert "visible" not in result.content


async def test_run_command_is_agent_mode_only(bench: Bench) -> None:
    bench.make("edit")
    result = await bench.call("run_command", command="echo no")
    assert result.is_error and "not available in edit mode" in result.content


def test_allowlist_matching_rules() -> None:
    allow = ["pytest", "npm test", "make && make check"]
    assert is_allowlisted("pytest", allow)
    assert is_allowlisted("  pytest -q tests/x.py ", allow)
    assert is_allowlisted("npm test -- -u", allow)
    assert is_allowlisted("make && make check", allow)
    assert not is_allowlisted("pytestx", allow)
    assert not is_allowlisted("npm install", allow)
    assert not is_allowlisted("pytest; rm -rf ~", allow)
    assert not is_allowlisted("pytest $(rm -rf ~)", allow)
    assert not is_allowlisted("pytest | sh", allow)
    assert not is_allowlisted("make && make check && rm x", allow)
    assert not is_allowlisted("", allow)


def test_scrubbed_environment_rules() -> None:
    env = {"GROQ_API_KEY": "1", "my_service_token": "2", "DB_PASSWORD": "3", "HOME": "/h"}
    assert scrubbed_environment(env) == {"HOME": "/h"}


async def test_status_reports_approval_then_running(bench: Bench) -> None:
    bench.editor.answer = "Run"
    statuses: list[str] = []
    call = ToolCall(id="c", name="run_command", args={"command": "true"})
    result = await bench.tools.resolve_streaming(
        call, ToolContext(cwd=bench.root), lambda _c: None, lambda s: statuses.append(s.activity)
    )
    assert not result.is_error
    assert statuses == ["waiting for approval", f"running in {bench.root}"]


async def test_huge_output_keeps_head_and_tail(bench: Bench) -> None:
    bench.make("agent", command_allowlist=["seq"])
    lines: list[str] = []
    call = ToolCall(id="c", name="run_command", args={"command": "seq 1 200000"})
    result = await bench.tools.resolve_streaming(call, ToolContext(cwd=bench.root), lines.append)
    assert len(lines) == 200000 and lines[-1] == "200000\n"
    assert result.content.startswith("1\n2\n")
    assert "bytes of output omitted" in result.content
    assert result.content.endswith("199999\n200000\n[exit code 0]")
