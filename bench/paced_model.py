"""The paced model and the table the streaming benchmarks share.

:class:`PacedModelServer` is a tiny OpenAI-wire SSE server in this process
(its own thread and event loop) that sends deltas at a set rate, each text
naming its index (``<000123>``) and each send stamped with
``time.perf_counter()``; :class:`Sink` and :func:`adapter_read` read one
answer with the OpenAI adapter alone (the baseline every streaming bench sets
beside the real server); :func:`print_table` prints the rows.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rhema_lsp.engine import Event, Message, ModelRequest, TextDelta
from rhema_lsp.providers import ProviderSettings, resolve_provider
from tests.fakes.wire import render, text_reply

Row = tuple[str, float, float, float, float]

MARKER = re.compile(r"<(\d{6})>")
"""How a paced delta names its index."""


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


# -- the adapter alone ---------------------------------------------------------


class Sink:
    """The adapter's event sink: counts text, and stamps marked deltas."""

    def __init__(self) -> None:
        self.chars = 0
        self.arrived: dict[int, float] = {}

    def emit(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            now = time.perf_counter()
            self.chars += len(event.text)
            for match in MARKER.finditer(event.text):
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


# -- the table -----------------------------------------------------------------


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
