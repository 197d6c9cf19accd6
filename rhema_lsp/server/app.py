"""The language server: :class:`RhemaServer`, the connection it serves
and the agent service it creates on the first command.

pygls' internals, and every correction of them, are in
:mod:`rhema_lsp.server.pygls_adapter`; this module uses pygls' public API
only. The server is built, with its LSP features, by
:func:`~rhema_lsp.server.features.create_server`.

**The wire.** pygls 2.1 reads frames with a pattern that only knows
``Content-Length: N\r\n`` spelled exactly so: a lowercase header, LF-only
line ends or a bad length desynchronise the stream for good (the server
stays up and never answers again). It hands every decoded body to
``handle_message`` unchecked: a message that is not a request object, a
wrong ``jsonrpc``, a non-string method, params that do not structure,
invalid UTF-8 or deep nesting get no answer at all, a request after
``shutdown`` none either; an object id gets -32603 with a Python traceback
in ``error.data``. Every error it answers or swallows is logged with a full
traceback on stderr, and the ones that are not a request's answer pop
"Error in server: ..." at the user. ``exit`` without ``shutdown`` exits 0,
because ``sys.exit`` is raised inside a handler and swallowed.

So the server reads its connection itself (:meth:`RhemaServer.serve`):
:class:`~rhema_lsp.server.framing.FrameDecoder` cuts the frames (exiting
non-zero on one it cannot delimit, so the client restarts the server);
:func:`~rhema_lsp.jsonrpc.read_message` checks each body (-32700, -32600,
-32602 for a lone surrogate); :class:`~rhema_lsp.server.phases.Phases`
keeps the lifecycle (-32002 before ``initialize``, a second ``initialize``
and requests after ``shutdown`` -32600, unknown methods -32601);
:class:`~rhema_lsp.server.pygls_adapter.RhemaProtocol` structures params
with pygls' converter, validates the client's responses, answers failures
without a traceback in ``error.data``, never pops a message for a client's
mistake, exits with the code LSP says, and serves commands and their
cancellation itself (see its module).

**The end.** pygls' stdio loop ends without a word on ``SIGTERM``. Here
stdin's end, ``exit`` and ``SIGTERM`` end the same way
(:func:`~rhema_lsp.runs.lifetime.serve_until_stopped`): every run cancelled
and checkpointed, the stores closed (the agent service's shutdown, as the
``shutdown`` request does), then the loop.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, BinaryIO

from pygls.io_ import StdoutWriter

from rhema_lsp import __version__
from rhema_lsp.jsonrpc.stdio import FdReader
from rhema_lsp.runs.lifetime import serve_until_stopped
from rhema_lsp.runs.settings import Settings
from rhema_lsp.server.clients import ClientFeatures
from rhema_lsp.server.connection import accept_one, serve_connection
from rhema_lsp.server.logs import EditorLogHandler
from rhema_lsp.server.pygls_adapter import LspServer, RhemaProtocol

if TYPE_CHECKING:
    from rhema_lsp.server.service import AgentService

__all__ = ["RhemaServer"]

logger = logging.getLogger("rhema_lsp")

CHUNK = 65536


class RhemaServer(LspServer):
    """The rhema language server.

    The agent service, and with it the engine, providers, tools and session
    stores, loads on the first command, not at start-up: an editor starting
    the server waits for pygls and the settings only.
    """

    protocol: RhemaProtocol

    def __init__(self) -> None:
        super().__init__("rhema-lsp", __version__, protocol_cls=RhemaProtocol)
        self.settings = Settings()
        self.init_options: Any = None
        self.client_features = ClientFeatures()
        self._service: AgentService | None = None
        self._closing: asyncio.Future[None] | None = None
        self._settings_loading = False

    @property
    def service(self) -> AgentService:
        """The agent service, created on first use."""
        if self._service is None:
            from rhema_lsp.server.service import AgentService

            self._service = AgentService(self)
            self._service.state.client = self.client_features
            self._service.update_settings(self.settings)
        return self._service

    @property
    def started_service(self) -> AgentService | None:
        """The agent service if a command already created it."""
        return self._service

    def apply_settings(self, settings: Settings) -> None:
        """Adopt validated settings."""
        self.settings = settings
        EditorLogHandler.set_level(settings.log_level)
        if self._service is not None:
            self._service.update_settings(settings)

    async def close_service(self) -> None:
        """Shut the agent service down (once, however often it is asked):
        cancel every run, let it checkpoint, close the stores."""
        if self._service is None:
            return
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._service.shutdown())
        await asyncio.shield(self._closing)

    # -- the connection --------------------------------------------------------------

    async def serve(self, read: Callable[[], Awaitable[bytes]]) -> int:
        """Serve one connection (:func:`~rhema_lsp.server.connection.serve_connection`)
        until it ends or ``SIGTERM``, then shut the service down; the process's
        exit code.

        Parameters
        ----------
        read
            The next bytes from the client (``b""`` at its end); replies go
            to the protocol's writer.
        """
        code = 0

        async def connection() -> None:
            nonlocal code
            code = await serve_connection(self.protocol, read)

        async def close() -> None:
            await self.close_service()
            self.shutdown()  # type: ignore[no-untyped-call]

        # stdin's end, `exit` and SIGTERM all end here: every run cancelled
        # and checkpointed, the stores closed, then pygls' own shutdown.
        await serve_until_stopped(connection(), close, name="rhema lsp connection")
        return code

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
        """Serve the client on stdin and stdout; the exit code."""
        reader = FdReader((stdin or sys.stdin.buffer).fileno())
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        return asyncio.run(self.serve(reader.read))

    def start_tcp(self, host: str, port: int) -> int:  # type: ignore[override]
        """Serve the first client that connects on ``host:port``; the exit code."""

        async def serve_tcp() -> int:
            reader, writer = await accept_one(host, port)
            self.protocol.set_writer(writer)
            try:
                return await self.serve(lambda: reader.read(CHUNK))
            finally:
                writer.close()

        return asyncio.run(serve_tcp())
