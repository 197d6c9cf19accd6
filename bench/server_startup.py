"""Server start-up: spawn to the ``initialize`` result and to the first
``rhema.status`` answer, and RSS after ``initialize``, next to bare pygls.

Both servers are started the same way in the same run — ``python <entry>``
over stdio, the same environment, the same ``initialize`` params (sent at
once after the spawn), then ``initialized`` and ``rhema.status`` (what an
editor's status line asks first) — alternately, ``STARTS`` times each; each
figure is the median. The times run from the spawn to the arrival of the
``initialize`` result and of the ``rhema.status`` answer; the RSS is
``VmRSS`` of the server process read right after ``initialize``. The
baseline is a minimal ``pygls.lsp.server.LanguageServer`` with one feature
and a ``rhema.status`` command answering ``{}`` (rhema-lsp's resolves the
provider, reads the rules and lists the MCP and language servers: the
ratio says what that costs, it has no target). Targets: rhema-lsp <= 1.3 x
the bare server on ``initialize``'s time and on the RSS, and
configured MCP servers (:data:`MCP_OPTIONS`) leave the start unchanged
(ratio to rhema-lsp without them <= 1.05: servers start on the first turn
that needs them, never with the editor).

Run: ``python -m bench.server_startup``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench._lsp_wire import LspProcess, cpu_seconds, initialize_params, rss_kib

STARTS = 5
TARGET = 1.3

Row = tuple[str, float, float, float, float]

BARE_SERVER = '''\
"""A bare pygls server: the start-up baseline."""
from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("bare", "0")


@server.feature(types.INITIALIZED)
def initialized(ls: LanguageServer, params: types.InitializedParams) -> None:
    pass


@server.command("rhema.status")
def status(ls: LanguageServer, *args: object) -> dict[str, object]:
    return {}


server.start_io()
'''

OPTIONS = {
    "provider": "custom",
    "protocol": "openai",
    "baseUrl": "http://127.0.0.1:9/v1",
    "model": "fake-model",
    "mode": "ask",
}


MCP_OPTIONS = {
    **OPTIONS,
    "mcpServers": {
        "time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]},
        "git": {"command": sys.executable, "args": ["-m", "mcp_server_git"]},
    },
    "mcpModes": ["ask", "edit", "agent"],
}
"""Two MCP servers configured (the reference servers the tests use)."""

MCP_TARGET = 1.05


async def start_once(
    argv: list[str], env: dict[str, str], folder: Path, options: Mapping[str, Any] | None = None
) -> tuple[float, float, int, float]:
    """Seconds from spawn to the ``initialize`` result and to the first
    ``rhema.status`` answer, RSS (KiB) and CPU seconds at ``initialize``."""
    server = await LspProcess.spawn(argv, env=env, cwd=folder)
    try:
        await server.request("initialize", initialize_params(folder, options or OPTIONS))
        initialized = time.perf_counter() - server.spawned
        cpu = cpu_seconds(server.pid)
        rss = rss_kib(server.pid)
        server.notify("initialized", {})
        await server.request(
            "workspace/executeCommand", {"command": "rhema.status", "arguments": [{}]}
        )
        return initialized, time.perf_counter() - server.spawned, rss, cpu
    finally:
        await server.close()


async def measure() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="rhema-bench-start-") as temp:
        root = Path(temp)
        folder = root / "workspace"
        folder.mkdir()
        bare = root / "bare_server.py"
        bare.write_text(BARE_SERVER)
        env = {**os.environ, "XDG_STATE_HOME": str(root / "state")}
        rhema_argv = [sys.executable, "-m", "rhema_lsp"]
        bare_argv = [sys.executable, str(bare)]
        # one unmeasured start each, so both find the same warm page cache
        await start_once(rhema_argv, env, folder)
        await start_once(bare_argv, env, folder)
        rhema_times, rhema_rss, bare_times, bare_rss = [], [], [], []
        rhema_status, bare_status, mcp_times = [], [], []
        rhema_cpu, bare_cpu = [], []
        for _ in range(STARTS):
            seconds, status, rss, cpu = await start_once(rhema_argv, env, folder)
            rhema_times.append(seconds)
            rhema_status.append(status)
            rhema_rss.append(rss)
            rhema_cpu.append(cpu)
            seconds, _, _, _ = await start_once(rhema_argv, env, folder, MCP_OPTIONS)
            mcp_times.append(seconds)
            seconds, status, rss, cpu = await start_once(bare_argv, env, folder)
            bare_times.append(seconds)
            bare_status.append(status)
            bare_rss.append(rss)
            bare_cpu.append(cpu)
    start_ms = statistics.median(rhema_times) * 1000
    bare_ms = statistics.median(bare_times) * 1000
    status_ms = statistics.median(rhema_status) * 1000
    bare_status_ms = statistics.median(bare_status) * 1000
    mcp_ms = statistics.median(mcp_times) * 1000
    cpu_ms = statistics.median(rhema_cpu) * 1000
    bare_cpu_ms = statistics.median(bare_cpu) * 1000
    rss_mib = statistics.median(rhema_rss) / 1024
    bare_mib = statistics.median(bare_rss) / 1024
    return [
        (
            "start -> initialize result, ms (ratio <= target)",
            start_ms,
            bare_ms,
            start_ms / bare_ms,
            TARGET,
        ),
        (
            "CPU time to the initialize result, ms",
            cpu_ms,
            bare_cpu_ms,
            cpu_ms / bare_cpu_ms,
            TARGET,
        ),
        (
            "start -> first rhema.status answered, ms",
            status_ms,
            bare_status_ms,
            status_ms / bare_status_ms,
            float("nan"),
        ),
        (
            "with 2 MCP servers configured, ms (vs without)",
            mcp_ms,
            start_ms,
            mcp_ms / start_ms,
            MCP_TARGET,
        ),
        (
            "RSS after initialize, MiB (ratio <= target)",
            rss_mib,
            bare_mib,
            rss_mib / bare_mib,
            TARGET,
        ),
    ]


def print_table(rows: list[Row]) -> None:
    """Print ``rows`` as the benchmarks' common table."""
    print(f"{'figure':<52} {'value':>10} {'baseline':>10} {'ratio':>7} {'target':>7}")
    for figure, value, baseline, ratio, target in rows:
        print(f"{figure:<52} {value:>10.1f} {baseline:>10.1f} {ratio:>7.2f} {target:>7.2f}")


def main() -> list[Row]:
    """Measure both servers' start-up; print a table; return its rows."""
    rows = asyncio.run(measure())
    print(f"median of {STARTS} starts each; baseline = bare pygls LanguageServer")
    print_table(rows)
    return rows


if __name__ == "__main__":
    main()
