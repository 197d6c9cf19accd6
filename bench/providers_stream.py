"""Streaming throughput of each wire adapter against the raw read of the same stream.

A fake model server (a separate process, so it does not share this
interpreter's GIL) streams an answer of 20,000 one-character deltas. For each
wire the same response is read twice in the same run: raw (httpx bytes,
counting lines, no parsing) and through the adapter into a counting sink.
Each figure is the best of seven runs (the machines are shared; the best run
is the one least disturbed). Target: adapter rate >= 0.5 x raw.

Run: ``python -m bench.providers_stream``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import anyio
import httpx

from rhema_lsp.engine import Event, Message, ModelRequest
from rhema_lsp.providers import RetryPolicy, build_http_provider
from rhema_lsp.providers.transport import HttpStreamProvider
from tests.fakes.wire import text_reply

DELTAS = 20_000
RUNS = 7
TARGET = 0.5

Row = tuple[str, float, float, float, float]


class CountingSink:
    """Counts events; does nothing else."""

    def __init__(self) -> None:
        self.count = 0

    def emit(self, event: Event) -> None:
        self.count += 1


def start_server(wire: str, script_path: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fakes.model_server",
            "--wire",
            wire,
            "--port",
            "0",
            "--script",
            script_path,
            "--repeat",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    base_url = process.stdout.readline().strip()
    return process, base_url


async def raw_read(provider: HttpStreamProvider, request: ModelRequest) -> tuple[float, int, int]:
    """Seconds to read the whole stream with httpx, and its bytes and lines."""
    url = provider.request_url(request)
    body = json.dumps(provider.request_body(request)).encode()
    headers = provider.request_headers(None)
    async with httpx.AsyncClient(trust_env=False, timeout=30) as client:
        started = time.perf_counter()
        size = lines = 0
        async with client.stream("POST", url, content=body, headers=headers) as response:
            async for line in response.aiter_lines():
                size += len(line)
                lines += 1
        return time.perf_counter() - started, size, lines


async def adapter_read(provider: HttpStreamProvider, request: ModelRequest) -> tuple[float, int]:
    """Seconds to stream the answer through the adapter, and the text length."""
    sink = CountingSink()
    started = time.perf_counter()
    output = await provider.complete(request, sink)
    elapsed = time.perf_counter() - started
    return elapsed, len(output.message.text)


async def measure(wire: str, script_path: str) -> Row:
    process, base_url = start_server(wire, script_path)
    try:
        provider = build_http_provider(
            wire,
            name=wire,
            base_url=base_url,
            model="fake-model",
            key=None,
            retry=RetryPolicy(attempts=1),
        )
        request = ModelRequest(messages=[Message.user("go")])
        raw_best = adapter_best = float("inf")
        for _ in range(RUNS):
            elapsed, _size, _lines = await raw_read(provider, request)
            raw_best = min(raw_best, elapsed)
            elapsed, length = await adapter_read(provider, request)
            assert length == DELTAS, f"{wire}: got {length} characters"
            adapter_best = min(adapter_best, elapsed)
        await provider.aclose()
    finally:
        process.terminate()
        process.wait()
    raw_rate = DELTAS / raw_best
    adapter_rate = DELTAS / adapter_best
    return (
        f"{wire} adapter deltas/s (vs raw httpx read)",
        adapter_rate,
        raw_rate,
        adapter_rate / raw_rate,
        TARGET,
    )


def main() -> list[Row]:
    """Measure every wire; print a table; return its rows."""
    reply = text_reply("x" * DELTAS, chunk=1)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump([reply.to_json()], handle)
        script_path = handle.name
    try:
        rows = [anyio.run(measure, wire, script_path) for wire in ("openai", "anthropic", "gemini")]
    finally:
        os.unlink(script_path)
    print(f"{'figure':<48} {'value':>12} {'baseline':>12} {'ratio':>7} {'target':>7}")
    for figure, value, baseline, ratio, target in rows:
        print(f"{figure:<48} {value:>12,.0f} {baseline:>12,.0f} {ratio:>7.2f} {target:>7.2f}")
    return rows


if __name__ == "__main__":
    main()
