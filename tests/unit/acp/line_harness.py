"""The real ACP agent in-process (an :class:`InProcessPeer`), exactly as
``rhema-lsp acp`` runs it (:func:`rhema_lsp.acp.connection.connect`: the SDK's
connection on our line transport), fed lines; and the client side of ACP
(:class:`AcpClient`, also driving the child process of the e2e suite)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from rhema_lsp.acp.agent import RhemaAcpAgent
from rhema_lsp.acp.connection import connect
from rhema_lsp.runs.settings import Settings
from tests.fakes.in_process import InProcessPeer, Lines, line

__all__ = ["AcpClient", "InProcessAgent", "line"]


class AcpClient(InProcessPeer):
    """The client side of ACP, for a peer that speaks it."""

    def initialize(self, fs: bool = False) -> dict[str, Any]:
        capabilities = {"fs": {"readTextFile": fs, "writeTextFile": fs}}
        answer = self.request(
            "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities}
        )
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result

    def new_session(self, cwd: Any) -> str:
        answer = self.request("session/new", {"cwd": str(cwd), "mcpServers": []})
        assert "result" in answer, answer
        session: str = answer["result"]["sessionId"]
        return session

    def prompt_params(self, session: str, text: str) -> dict[str, Any]:
        return {"sessionId": session, "prompt": [{"type": "text", "text": text}]}

    def updates(self, kind: str) -> list[dict[str, Any]]:
        """The ``session/update``s of one kind (``agent_message_chunk``, ...)."""
        return [
            m["params"]["update"]
            for m in self.messages
            if m.get("method") == "session/update"
            and m["params"]["update"].get("sessionUpdate") == kind
        ]

    def stop(self) -> None:
        """Hang up, and wait for the agent to shut down."""
        if self.exit_code is None:
            self.send_bytes(b"")
            self.wait_exit()


class InProcessAgent(Lines, AcpClient):
    """One ACP connection in a thread."""

    def __init__(
        self, settings: Settings, answer: Callable[[dict[str, Any]], Any] | None = None
    ) -> None:
        self._settings = settings
        super().__init__(answer)

    async def serve(self, read: Callable[[], Awaitable[bytes]]) -> int:
        self.agent = RhemaAcpAgent(self._settings)
        self.keep_logs()
        log = logging.getLogger("rhema_lsp.acp")
        log.setLevel(logging.INFO)  # the level at which a client's mistake is logged

        async def write(data: bytes) -> None:
            self.output(data)

        try:
            await connect(self.agent, read, write)
        finally:
            log.setLevel(logging.NOTSET)
        return 0
