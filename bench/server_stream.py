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
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._lsp_wire import LspProcess, initialize_params
from rhema_lsp.engine import Event, Message, ModelRequest, TextDelta
from rhema_lsp.providers import ProviderSettings, resolve_provider
from tests.fakes.wire import render, text_reply

DELTAS = 20_000
RUNS = 3
RATE_TARGET = 0.5
NOTIFICATIONS_TARGET = 60.0
PACED_RATE = 100.0
PACED_SECONDS = 6.0
LATENCY_TARGET_MS = 25.0
FAST_RATE = 2000.0
FAST_SECONDS = 3.0

Row = tuple[str, float, float, float, float]

_MARKER = re.compile(r"<(\d{6})>")


# -- the paced SSE server ------------------------------------------------------


@dataclass
class Pace:
    """One streamed answer: ``count`` marked deltas, ``interval`` seconds apart."""

    count: int
    interval: float
    sent: list[float] = field(default_factory=list)


class PacedModelServer:
    """An OpenAI-wire SSE server on 127.0.0.1 that paces its deltas and stamps each send.

    Each POST takes the next :class:`Pace` from the queue (``expect``) and fills
    its ``sent`` list: ``sent[i]`` is when delta ``i`` was written to the socket.
    """

    def __init__(self) -> None:
        self._queue: list[Pace] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self.port = 0

    @property
    def base_url(self) -> str:
        """The provider base URL (``.../v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def expect(self, pace: Pace) -> Pace:
        """Queue the plan of the next answer; returns it, to read ``sent`` later."""
        self._queue.append(pace)
        return pace

    def __enter__(self) -> PacedModelServer:
        self._thread.start()
        self._ready.wait()
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()
        self._loop.run_until_complete(server.wait_closed())
        self._loop.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method = lines[0].split(" ", 1)[0]
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            await reader.readexactly(length)
            if method == "GET":
                body = json.dumps({"object": "list", "data": [{"id": "fake-model"}]}).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body)
                )
            else:
                await self._stream(writer, self._queue.pop(0))
            await writer.drain()
        finally:
            writer.close()

    async def _stream(self, writer: asyncio.StreamWriter, pace: Pace) -> None:
        text = "".join(f"<{index:06d}>" for index in range(pace.count))
        _status, _headers, pieces = render(text_reply(text, chunk=8), "openai")
        head, deltas, tail = pieces[0], pieces[1 : 1 + pace.count], pieces[1 + pace.count :]
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
        )
        writer.write(b"%x\r\n%s\r\n" % (len(head), head))
        await writer.drain()
        start = time.perf_counter()
        for index, piece in enumerate(deltas):
            wait = start + index * pace.interval - time.perf_counter()
            if wait > 0:
                await asyncio.sleep(wait)
            pace.sent.append(time.perf_counter())
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
        for piece in tail:
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        writer.write(b"0\r\n\r\n")


# -- clients ------------------------------------------------------------------


class Sink:
    """The adapter's event sink: counts text, and stamps marked deltas."""

    def __init__(self) -> None:
        self.chars = 0
        self.arrived: dict[int, float] = {}

    def emit(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            now = time.perf_counter()
            self.chars += len(event.text)
            for match in _MARKER.finditer(event.text):
                self.arrived[int(match.group(1))] = now


async def adapter_read(base_url: str) -> tuple[float, Sink]:
    """Seconds the OpenAI adapter takes to stream one answer, and its sink."""
    resolved = await resolve_provider(
        ProviderSettings(
            provider="custom", protocol="openai", base_url=base_url, model="fake-model"
        )
    )
    sink = Sink()
    started = time.perf_counter()
    await resolved.provider.complete(ModelRequest(messages=[Message.user("go")]), sink)
    elapsed = time.perf_counter() - started
    close: Callable[[], Any] | None = getattr(resolved.provider, "aclose", None)
    if close is not None:
        await close()
    return elapsed, sink


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
            "clientCapabilities": {"events": True},  # else turns are detached (plain clients)
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
            for match in _MARKER.finditer(text):
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


def _cell(number: float, width: int, digits: int) -> str:
    return f"{'-':>{width}}" if math.isnan(number) else f"{number:>{width},.{digits}f}"


def print_table(rows: list[Row]) -> None:
    """Print ``rows``; ``[value]`` marks a target on the value, else on the ratio."""
    print(f"{'figure':<56} {'value':>10} {'baseline':>10} {'ratio':>7} {'target':>7}")
    for figure, value, baseline, ratio, target in rows:
        digits = 1 if value < 1000 else 0
        print(
            f"{figure:<56} {_cell(value, 10, digits)} {_cell(baseline, 10, digits)}"
            f" {_cell(ratio, 7, 3)} {_cell(target, 7, 1)}"
        )


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
