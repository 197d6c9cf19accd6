"""The real language server in-process (an :class:`InProcessPeer`), exactly
as ``rhema-lsp serve`` runs it (the same ``RhemaServer.serve`` loop, frame
decoder, message check and protocol), and the client side of the contract
(:class:`LspClient`, also driving the child process of the e2e suite)."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from rhema_lsp.server import create_server
from tests.fakes.in_process import Frames, InProcessPeer, frame

__all__ = ["InProcessServer", "LspClient", "frame"]


class LspClient(InProcessPeer):
    """The client side of the LSP contract, for a peer that speaks it."""

    @property
    def server_requests(self) -> list[dict[str, Any]]:
        return self.peer_requests

    def command(self, name: str, args: Any = None) -> dict[str, Any]:
        """``workspace/executeCommand`` with one argument object."""
        return self.request(
            "workspace/executeCommand", {"command": name, "arguments": [args or {}]}
        )

    def initialize(self, settings: dict[str, Any], folders: list[Any], **extra: Any) -> None:
        answer = self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": None,
                "capabilities": extra.pop("capabilities", {}),
                "workspaceFolders": [{"uri": f.as_uri(), "name": f.name} for f in folders],
                "initializationOptions": settings,
                **extra,
            },
        )
        assert "result" in answer, answer
        self.notify("initialized", {})

    def stop(self) -> None:
        """shutdown, exit, and wait for the end."""
        if self.exit_code is None:
            with contextlib.suppress(AssertionError):
                self.request("shutdown")
            self.notify("exit")
            self.wait_exit()

    def popups(self) -> list[dict[str, Any]]:
        """Every ``window/showMessage`` the server sent."""
        return [m for m in self.messages if m.get("method") == "window/showMessage"]


class InProcessServer(Frames, LspClient):
    """One language server connection in a thread."""

    async def serve(self, read: Callable[[], Awaitable[bytes]]) -> int:
        server = create_server()
        self.keep_logs()
        server.protocol.set_writer(self)
        return await server.serve(read)

    def write(self, data: bytes) -> None:
        """pygls' writer interface."""
        self.output(data)

    def close(self) -> None:
        """pygls' writer interface."""
