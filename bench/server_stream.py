"""End-to-end streaming through the real server process, next to the adapter alone.

Full speed: a fake OpenAI-wire model server (a separate process, so it does
not share a GIL with anyone) streams 20,000 one-character deltas per request.
In the same run the bench reads that stream (a) with the OpenAI adapter in
this process into a counting sink, and (b) through ``python -m rhema_lsp``:
a ``rhema.turn`` whose ``rhema/event`` notifications a raw JSON-RPC reader
(:mod:`bench._lsp_wire`) collects. Rates run from the request to the end of
the answer (the adapter's ``complete`` returning; the ``turn_end``
notification arriving); each is the best of ``RUNS`` after one warm-up turn.
Targets: server rate >= 0.5 x adapter rate; <= 60 notifications/s.

Notifications: how many ``rhema/event`` notifications carried the 20,000
deltas, and the most that arrived within any one second of that run (the
whole run lasts well under a second at full speed, so the sustained rate is
measured on paced streams below). Target: <= 60 per second.

Paced: a tiny SSE server in this process (its own thread and event loop)
sends deltas at 100/s for 6 s, each text naming its index (``<000123>``) and
each send stamped with ``time.perf_counter()``; the delta's added latency is
its arrival at the client minus its send. Measured through the server and, as
the baseline, through the adapter alone. Target: server p99 <= 25 ms. Then
3 s at 2,000/s give the sustained ``text_delta`` notification rate under a
fast model (first to last delta notification).

Run: ``python -m bench.server_stream``.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._lsp_wire import LspProcess, initialize_params
from bench.paced_model import MARKER, Pace, PacedModelServer, Row, adapter_read, print_table
from tests.fakes.wire import text_reply

DELTAS = 20_000
RUNS = 3
RATE_TARGET = 0.5
NOTIFICATIONS_TARGET = 60.0
PACED_RATE = 100.0
PACED_SECONDS = 6.0
LATENCY_TARGET_MS = 25.0
FAST_RATE = 2000.0
FAST_SECONDS = 3.0

# -- the real server ------------------------------------------------------------


@dataclass
class Turn:
    """What one ``rhema.turn`` delivered to the client."""

    started: float = 0.0
    seconds: float = 0.0
    seq_errors: int = 0
    notifications: int = 0
    delta_notifications: int = 0
    chars: int = 0
    first_delta: float = 0.0
    last_delta: float = 0.0
    arrived: dict[int, float] = field(default_factory=dict)
    stamps: list[float] = field(default_factory=list)


class RhemaClient:
    """A ``python -m rhema_lsp`` process initialised on a workspace, running turns."""

    def __init__(self, server: LspProcess) -> None:
        self.server = server
        self._turn = Turn()
        self._done: asyncio.Future[None] | None = None
        self._seq = 0
        server.on_notification = self._on_notification

    @classmethod
    async def start(cls, base_url: str, root: Path) -> RhemaClient:
        folder = root / "workspace"
        folder.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "XDG_STATE_HOME": str(root / "state")}
        server = await LspProcess.spawn([sys.executable, "-m", "rhema_lsp"], env=env, cwd=folder)
        options = {
            "provider": "custom",
            "protocol": "openai",
            "baseUrl": base_url,
            "model": "fake-model",
            "mode": "ask",
            "clientCapabilities": {"events": True},  # it reads rhema/event: turns answer
        }
        await server.request("initialize", initialize_params(folder, options))
        server.notify("initialized", {})
        return cls(server)

    def _on_notification(self, method: str, params: Any, arrived: float) -> None:
        if method != "rhema/event":
            return
        turn = self._turn
        turn.notifications += 1
        turn.stamps.append(arrived)
        if params["seq"] <= self._seq:
            turn.seq_errors += 1
        self._seq = params["seq"]
        event = params["event"]
        if event["type"] == "text_delta":
            text = event["text"]
            turn.delta_notifications += 1
            turn.chars += len(text)
            turn.first_delta = turn.first_delta or arrived
            turn.last_delta = arrived
            for match in MARKER.finditer(text):
                turn.arrived[int(match.group(1))] = arrived
        elif event["type"] == "turn_end" and self._done is not None and not self._done.done():
            turn.seconds = arrived - turn.started
            self._done.set_result(None)

    async def turn(self, prompt: str) -> Turn:
        """Run one turn; returns what arrived (``seconds``: request to ``turn_end``)."""
        self._turn = Turn(started=time.perf_counter())
        self._seq = 0  # every turn without a session starts a new one
        self._done = asyncio.get_running_loop().create_future()
        result = await self.server.request(
            "workspace/executeCommand",
            {"command": "rhema.turn", "arguments": [{"prompt": prompt}]},
        )
        await self._done
        if result["stopReason"] != "end_turn":
            raise AssertionError(f"turn ended with {result['stopReason']}: {result}")
        if self._turn.seq_errors:
            raise AssertionError(f"seq did not rise {self._turn.seq_errors} times")
        return self._turn

    async def close(self) -> None:
        await self.server.close()


# -- the measures ---------------------------------------------------------------


def start_fake_model(script_path: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "tests.fakes.model_server"),
            *("--wire", "openai", "--port", "0", "--script", script_path, "--repeat"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


async def full_speed(root: Path) -> list[Row]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump([text_reply("x" * DELTAS, chunk=1).to_json()], handle)
        script_path = handle.name
    process, base_url = start_fake_model(script_path)
    client = await RhemaClient.start(base_url, root / "full")
    try:
        await client.turn("warm up")
        adapter_best = server_best = math.inf
        best = Turn()
        for run in range(RUNS):
            elapsed, sink = await adapter_read(base_url)
            assert sink.chars == DELTAS, f"adapter got {sink.chars} characters"
            adapter_best = min(adapter_best, elapsed)
            turn = await client.turn(f"run {run}")
            assert turn.chars == DELTAS, f"server delivered {turn.chars} characters"
            if turn.seconds < server_best:
                server_best, best = turn.seconds, turn
    finally:
        await client.close()
        process.terminate()
        process.wait()
        os.unlink(script_path)
    adapter_rate = DELTAS / adapter_best
    server_rate = DELTAS / best.seconds
    return [
        (
            "deltas/s client-side via server (vs adapter alone)",
            server_rate,
            adapter_rate,
            server_rate / adapter_rate,
            RATE_TARGET,
        ),
        (
            "rhema/event notifs in the run's busiest 1 s [value]",
            _busiest_second(best.stamps),
            DELTAS,
            _busiest_second(best.stamps) / DELTAS,
            NOTIFICATIONS_TARGET,
        ),
        (
            f"notifications carrying the {DELTAS:,} deltas",
            best.delta_notifications,
            DELTAS,
            best.delta_notifications / DELTAS,
            math.nan,
        ),
        (
            "turn ms, request -> turn_end (vs adapter's complete)",
            best.seconds * 1000,
            adapter_best * 1000,
            best.seconds / adapter_best,
            math.nan,
        ),
    ]


def _busiest_second(stamps: list[float]) -> int:
    """The most notifications that arrived within any one second."""
    most = first = 0
    for last, stamp in enumerate(stamps):
        while stamp - stamps[first] >= 1.0:
            first += 1
        most = max(most, last - first + 1)
    return most


def _latencies_ms(pace: Pace, arrived: dict[int, float]) -> list[float]:
    missing = [index for index in range(pace.count) if index not in arrived]
    assert not missing, f"{len(missing)} deltas never arrived"
    return sorted((arrived[index] - pace.sent[index]) * 1000 for index in range(pace.count))


def _percentile(values: list[float], fraction: float) -> float:
    return values[min(len(values) - 1, math.ceil(fraction * len(values)) - 1)]


async def paced(root: Path) -> list[Row]:
    count = int(PACED_RATE * PACED_SECONDS)
    interval = 1 / PACED_RATE
    with PacedModelServer() as model:
        client = await RhemaClient.start(model.base_url, root / "paced")
        try:
            model.expect(Pace(20, 0.0))
            await client.turn("warm up")
            pace = model.expect(Pace(count, interval))
            turn = await client.turn("paced")
            server_ms = _latencies_ms(pace, turn.arrived)
            fast = model.expect(Pace(int(FAST_RATE * FAST_SECONDS), 1 / FAST_RATE))
            fast_turn = await client.turn("fast")
            _latencies_ms(fast, fast_turn.arrived)
        finally:
            await client.close()
        pace = model.expect(Pace(count, interval))
        _elapsed, sink = await adapter_read(model.base_url)
        adapter_ms = _latencies_ms(pace, sink.arrived)
    rows: list[Row] = []
    for name, fraction, target in (("p50", 0.50, math.nan), ("p99", 0.99, LATENCY_TARGET_MS)):
        value = _percentile(server_ms, fraction)
        baseline = _percentile(adapter_ms, fraction)
        rows.append(
            (
                f"added latency/delta @100/s {name}, ms (vs adapter) [value]",
                value,
                baseline,
                value / baseline,
                target,
            )
        )
    rows.append(
        (
            "added latency/delta @100/s max, ms (vs adapter)",
            server_ms[-1],
            adapter_ms[-1],
            server_ms[-1] / adapter_ms[-1],
            math.nan,
        )
    )
    for rate, done in ((PACED_RATE, turn), (FAST_RATE, fast_turn)):
        span = done.last_delta - done.first_delta
        deltas = len(done.arrived)
        rows.append(
            (
                f"text_delta notifs/s while streaming @{rate:,.0f}/s [value]",
                (done.delta_notifications - 1) / span,
                (deltas - 1) / span,
                (done.delta_notifications - 1) / (deltas - 1),
                NOTIFICATIONS_TARGET,
            )
        )
    return rows


async def measure() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="rhema-bench-stream-") as temp:
        root = Path(temp)
        return [*await full_speed(root), *await paced(root)]


def main() -> list[Row]:
    """Measure full-speed and paced streaming; print a table; return its rows."""
    rows = asyncio.run(measure())
    print(
        f"best of {RUNS} runs of {DELTAS:,} deltas; paced {PACED_RATE:.0f}/s for "
        f"{PACED_SECONDS:.0f} s; [value]: target applies to the value, else to the ratio"
    )
    print_table(rows)
    return rows


if __name__ == "__main__":
    main()
