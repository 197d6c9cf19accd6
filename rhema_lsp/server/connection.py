"""One client connection: its bytes cut into frames, each frame received,
until the connection ends, and with which exit code.

:func:`serve_connection` reads the client's bytes, feeds them to a
:class:`~rhema_lsp.server.framing.FrameDecoder` and hands each body to the
:class:`Endpoint` (the protocol), yielding to the event loop between two
frames so the handlers a frame started begin before the next frame is read
(a ``$/cancelRequest`` right behind its request finds the run). It ends on:

- ``exit``: the code the endpoint set (0 after ``shutdown``, else 1),
  once the requests already received are answered (the endpoint cancels
  its runs, which answer ``cancelled``, and waits a moment for the rest: a
  client may send ``exit`` right behind ``shutdown``);
- the end of the stream: 0 if ``shutdown`` came first, else 1, once the
  requests already received are answered as for ``exit`` (a client that
  closed its side may still read the answers: ``serve < in > out``);
- a lost connection: the same codes, with nothing more sent;
- cancellation (``SIGTERM``, through
  :func:`~rhema_lsp.runs.lifetime.serve_until_stopped`): the requests in
  flight are answered as for ``exit`` first, then the cancellation goes on
  (the code is the door's: 0);
- a frame that cannot be delimited: the reason is logged in one line, the
  requests already received are answered as for ``exit``, the endpoint
  says why to the client (an error without an id), and the code is 1, so
  that the client restarts the server instead of waiting on a stream
  nobody can read.

After it returns the endpoint is disconnected: nothing more is sent.
:func:`accept_one` waits for the one client of ``--tcp``. No pygls here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from rhema_lsp.server.framing import FrameDecoder, FrameError

__all__ = ["Endpoint", "accept_one", "serve_connection"]

logger = logging.getLogger("rhema_lsp")


class Endpoint(Protocol):
    """What a connection drives (the server's protocol)."""

    exit_code: int | None
    """Set when ``exit`` was received."""

    def receive(self, body: bytes) -> None:
        """Serve one frame's body."""

    def ended(self) -> int:
        """The exit code when the connection ends without ``exit``."""

    async def settle(self) -> None:
        """Answer the requests in flight (cancelling what would take long)."""

    def send_fatal(self, message: str) -> None:
        """Tell the client why the connection ends."""

    def disconnect(self) -> None:
        """Send nothing more."""


async def serve_connection(endpoint: Endpoint, read: Callable[[], Awaitable[bytes]]) -> int:
    """Serve the connection ``read`` gives the bytes of (``b""`` at its end);
    the process's exit code (see the module docstring)."""
    frames = FrameDecoder()
    code: int | None = None
    try:
        while endpoint.exit_code is None:
            data = await read()
            if not data:
                frames.close()
                break
            frames.feed(data)
            while endpoint.exit_code is None and (body := frames.frame()) is not None:
                endpoint.receive(body)
                await asyncio.sleep(0)
        await endpoint.settle()  # `exit` or the input's end: answer what is in flight
    except asyncio.CancelledError:  # SIGTERM: the same, before the connection goes
        await asyncio.shield(endpoint.settle())
        raise
    except FrameError as exc:
        logger.error("exiting: the client's stream cannot be read any more: %s", exc)
        await endpoint.settle()
        endpoint.send_fatal(f"Parse error: {exc}; the server exits (restart it)")
        code = 1
    except (BrokenPipeError, ConnectionError) as exc:
        logger.warning("exiting: the connection to the client is lost (%s)", exc)
    finally:
        endpoint.disconnect()
    if code is None:
        code = endpoint.exit_code if endpoint.exit_code is not None else endpoint.ended()
    return code


async def accept_one(host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """The streams of the first client to connect on ``host:port`` (later
    ones are turned away); the port is closed once it connected."""
    connected: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]]
    connected = asyncio.get_running_loop().create_future()

    def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if connected.done():
            writer.close()
        else:
            connected.set_result((reader, writer))

    listening = await asyncio.start_server(accept, host, port)
    logger.info("listening on %s:%s", host, port)
    async with listening:
        return await connected
