"""ACP start-up as the user waits for it: spawn to the ``session/new``
answer, and RSS then, next to a bare ACP SDK agent.

Zed and JetBrains show a spinner until ``session/new`` answers, so that is
the figure (``initialize`` alone flatters an agent that loads lazily).
Both agents are started the same way in the same run — ``python <entry>``
over stdio, the same environment, ``initialize`` (the capabilities Zed and
CodeCompanion send) and ``session/new`` (a project folder, no MCP server)
written together right after the spawn — alternately, :data:`STARTS` times
each; each figure is the median. The time runs from the spawn to the
arrival of the ``session/new`` answer's line; the RSS is ``VmRSS`` of the
agent process read right after it. ``rhema-lsp acp`` runs with a custom
OpenAI-wire provider on a closed port (nothing is contacted before a
prompt). The baseline is the smallest agent the SDK
(``agent-client-protocol``) makes: ``run_agent`` with an ``initialize``
that answers the protocol version and a ``new_session`` that answers a
session id. Target: ``rhema-lsp acp`` ready in at most :data:`TARGET` of
the bare agent's time (its ``import acp`` alone is longer: ``rhema-lsp
acp`` answers both before loading it).

Run: ``python -m bench.acp_startup``.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench._lsp_wire import rss_kib
from bench.server_startup import print_table

STARTS = 5
TARGET = 0.5
CLOSE_WAIT = 10.0

Row = tuple[str, float, float, float, float]

REPO = Path(__file__).resolve().parents[1]

BARE_AGENT = '''\
"""A bare ACP SDK agent: the start-up baseline."""
import asyncio
import uuid
from typing import Any

from acp import PROTOCOL_VERSION, InitializeResponse, NewSessionResponse, run_agent


class Bare:
    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=min(protocol_version, PROTOCOL_VERSION))

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id=uuid.uuid4().hex)


asyncio.run(run_agent(Bare()))
'''

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": 1,
        "clientCapabilities": {
            "fs": {"readTextFile": True, "writeTextFile": True},
            "terminal": True,
        },
        "clientInfo": {"name": "rhema-bench", "version": "1"},
    },
}


def new_session(folder: Path) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/new",
        "params": {"cwd": str(folder), "mcpServers": []},
    }


async def start_once(argv: list[str], env: dict[str, str], folder: Path) -> tuple[float, int]:
    """Seconds from spawn to the ``session/new`` answer, and RSS (KiB) then."""
    spawned = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        cwd=folder,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        both = [INITIALIZE, new_session(folder)]
        process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in both))
        await process.stdin.drain()
        while True:
            line = await process.stdout.readline()
            if not line:
                raise RuntimeError(f"{argv[1:]} ended before answering session/new")
            answer = json.loads(line)
            if answer.get("id") == 1:
                break
        seconds = time.perf_counter() - spawned
        if "sessionId" not in answer.get("result", {}):
            raise RuntimeError(f"{argv[1:]} answered {line[:200]!r}")
        rss = rss_kib(process.pid)
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), CLOSE_WAIT)
        except TimeoutError:
            process.kill()
            await process.wait()
        return seconds, rss
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def measure() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="rhema-bench-acp-start-") as temp:
        root = Path(temp)
        folder = root / "project"
        folder.mkdir()
        bare = root / "bare_agent.py"
        bare.write_text(BARE_AGENT)
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "XDG_STATE_HOME": str(root / "state"),
            "XDG_CONFIG_HOME": str(root / "config"),
        }
        provider = ("--provider", "custom", "--protocol", "openai")
        rhema_argv = [
            sys.executable,
            *("-m", "rhema_lsp", "acp", *provider),
            *("--base-url", "http://127.0.0.1:9/v1", "--model", "fake-model"),
        ]
        bare_argv = [sys.executable, str(bare)]
        # one unmeasured start each, so both find the same warm page cache
        await start_once(rhema_argv, env, folder)
        await start_once(bare_argv, env, folder)
        rhema_times, rhema_rss, bare_times, bare_rss = [], [], [], []
        for _ in range(STARTS):
            seconds, rss = await start_once(rhema_argv, env, folder)
            rhema_times.append(seconds)
            rhema_rss.append(rss)
            seconds, rss = await start_once(bare_argv, env, folder)
            bare_times.append(seconds)
            bare_rss.append(rss)
    ready_ms = statistics.median(rhema_times) * 1000
    bare_ms = statistics.median(bare_times) * 1000
    rss_mib = statistics.median(rhema_rss) / 1024
    bare_mib = statistics.median(bare_rss) / 1024
    return [
        (
            "spawn -> session/new answered, ms (ratio <= target)",
            ready_ms,
            bare_ms,
            ready_ms / bare_ms,
            TARGET,
        ),
        ("RSS at the session/new answer, MiB", rss_mib, bare_mib, rss_mib / bare_mib, float("nan")),
    ]


def main() -> list[Row]:
    """Measure both agents' start-up; print a table; return its rows."""
    rows = asyncio.run(measure())
    print(f"median of {STARTS} starts each; baseline = bare ACP SDK agent (run_agent)")
    print_table(rows)
    return rows


if __name__ == "__main__":
    main()
