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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Listening:
    """A server process on a loopback port, which a test may stop and start again."""

    def __init__(self, command: list[str], port: int, env: dict[str, str]) -> None:
        self.command = command
        self.port = port
        self.env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **env}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            self.command,
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            assert self.process.poll() is None, f"{self.command} exited"
            time.sleep(0.1)
        raise AssertionError(f"{self.command} did not listen within 60 s")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:  # uvicorn waits for a stream still open (a client's subscriptions/listen)
                self.process.wait(3)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
            self.process = None


def fake_http(marks: Path, *extra: str) -> Listening:
    """The fake server over Streamable HTTP on a free loopback port."""
    port = free_port()
    command = [sys.executable, "-m", "tests.fakes.mcp_server", "http", str(port), *extra]
    return Listening(command, port, {"FAKE_MCP_MARKS": str(marks)})


def fake_oauth(marks: Path, refuse: str = "") -> Listening:
    """The OAuth-protected fake server (``tests.fakes.mcp_oauth_server``) on a free
    loopback port; its authorization server denies the client names in ``refuse``."""
    port = free_port()
    command = [sys.executable, "-m", "tests.fakes.mcp_oauth_server", str(port)]
    return Listening(command, port, {"FAKE_MCP_MARKS": str(marks), "FAKE_OAUTH_REFUSE": refuse})


@pytest.fixture
def http_server(marks: Path) -> Iterator[str]:
    """The fake server over Streamable HTTP on loopback; yields its URL."""
    server = fake_http(marks)
    server.start()
    try:
        yield f"http://127.0.0.1:{server.port}/mcp"
    finally:
        server.stop()


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[McpHub]:
    made = McpHub(
        {"FAKE_TOKEN": "s3cret"},
        config_path=tmp_path / "config" / "config.json",
        state_dir=tmp_path / "state",
    )
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
