"""Fixtures for the MCP tests: real servers as subprocesses (the SDK-written
fake of ``tests.fakes.mcp_server`` over stdio and Streamable HTTP, and the
reference servers from PyPI), and a hub whose user config lives in tmp."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import anyio
import pytest

from rhema_lsp.mcp.config import McpServerConfig
from rhema_lsp.mcp.hub import McpHub

ROOT = Path(__file__).resolve().parents[3]


def fake_stdio(marks: Path, **extra: object) -> McpServerConfig:
    """The fake server over stdio, writing its marks to ``marks``."""
    env = {"FAKE_MCP_MARKS": str(marks), "PYTHONPATH": str(ROOT)}
    return McpServerConfig.model_validate(
        {
            "command": sys.executable,
            "args": ["-m", "tests.fakes.mcp_server", "stdio"],
            "env": env,
            **extra,
        }
    )


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    folder = tmp_path / "marks"
    folder.mkdir()
    return folder


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def http_server(marks: Path) -> Iterator[str]:
    """The fake server over Streamable HTTP on loopback; yields its URL."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.mcp_server", "http", str(port)],
        cwd=ROOT,
        env={"FAKE_MCP_MARKS": str(marks), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert process.poll() is None, "the fake MCP server exited"
            time.sleep(0.1)
        else:
            raise AssertionError("the fake MCP server did not listen within 60 s")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[McpHub]:
    made = McpHub({"FAKE_TOKEN": "s3cret"}, config_path=tmp_path / "config" / "config.json")
    yield made
    await made.aclose()


async def eventually(condition: Callable[[], bool], timeout_s: float = 30.0) -> None:
    """Wait until ``condition()`` holds; fail after ``timeout_s`` seconds."""
    for _ in range(int(timeout_s / 0.05)):
        if condition():
            return
        await anyio.sleep(0.05)
    raise AssertionError(f"not true within {timeout_s} s")


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A git repository with one untracked file."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "new.txt").write_text("hello\n")
    return repo


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rfind(")") + 2] != "Z"
