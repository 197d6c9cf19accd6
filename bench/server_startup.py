"""Server start-up: spawn to ``initialize`` result, and RSS after it, next to bare pygls.

Both servers are started the same way in the same run — ``python <entry>``
over stdio, the same environment, the same ``initialize`` params (sent at
once after the spawn) — alternately, ``STARTS`` times each; each figure is the
median. The time runs from the spawn to the arrival of the ``initialize``
result; the RSS is ``VmRSS`` of the server process read right after it.
The baseline is a minimal ``pygls.lsp.server.LanguageServer`` with one
feature. Targets: rhema-lsp <= 1.3 x the bare server on each figure, and
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

from bench._lsp_wire import LspProcess, initialize_params, rss_kib

STARTS = 7
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
) -> tuple[float, int]:
    """Seconds from spawn to the ``initialize`` result, and RSS (KiB) after it."""
    server = await LspProcess.spawn(argv, env=env, cwd=folder)
    try:
        await server.request("initialize", initialize_params(folder, options or OPTIONS))
        seconds = time.perf_counter() - server.spawned
        return seconds, rss_kib(server.pid)
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
        mcp_times = []
        for _ in range(STARTS):
            seconds, rss = await start_once(rhema_argv, env, folder)
            rhema_times.append(seconds)
            rhema_rss.append(rss)
            seconds, _ = await start_once(rhema_argv, env, folder, MCP_OPTIONS)
            mcp_times.append(seconds)
            seconds, rss = await start_once(bare_argv, env, folder)
            bare_times.append(seconds)
            bare_rss.append(rss)
    start_ms = statistics.median(rhema_times) * 1000
    bare_ms = statistics.median(bare_times) * 1000
    mcp_ms = statistics.median(mcp_times) * 1000
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
