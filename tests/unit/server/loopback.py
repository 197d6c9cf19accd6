"""The real language server in process, with a client that is a few lines:
what the server writes is parsed as it is written, what the client sends goes
in through pygls' own ``handle_message``. No child process, no pipes: the
server's code (router, handlers, state, execution, output, the pipeline) is
all real; only the transport is a loopback.

The client answers the server's requests as an editor that accepts: a
progress token is created, a question is dismissed, a document is shown.
A test may make it hold a method's requests unanswered (:attr:`Loopback.held`)
and answer them later, or refuse them (:attr:`Loopback.refused`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rhema_lsp.server.app import RhemaServer
from rhema_lsp.server.features import create_server
from tests.fakes.model_server import FakeModelServer

_ANSWERS: dict[str, Any] = {
    "window/workDoneProgress/create": None,
    "window/showMessageRequest": None,
    "window/showDocument": {"success": True},
    "workspace/configuration": [None],
    "client/registerCapability": None,
}


class Loopback:
    """The client side of one in-process server."""

    def __init__(self, server: RhemaServer) -> None:
        self.server = server
        self.notifications: list[tuple[str, Any]] = []
        self.asked: list[tuple[str, Any]] = []
        self.arrived = asyncio.Event()
        self._waiting: dict[int | str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = 0
        self.held: dict[str, list[dict[str, Any]]] = {}
        """Methods whose requests are held unanswered, and those held so far."""
        self.refused: set[str] = set()
        """Methods whose requests are answered with an error."""
        server.protocol.set_writer(self)

    # -- what the server writes -----------------------------------------------

    def write(self, data: bytes) -> None:
        message = json.loads(data.split(b"\r\n\r\n", 1)[1])
        if "method" in message and "id" in message:
            self.asked.append((message["method"], message.get("params")))
            asyncio.get_running_loop().call_soon(self._answer, message)
        elif "method" in message:
            self.notifications.append((message["method"], message.get("params")))
        else:
            self._waiting.pop(message["id"]).set_result(message)
        self.arrived.set()

    def close(self) -> None:
        """The server closes its writer on ``exit``."""

    def _answer(self, request: dict[str, Any]) -> None:
        method = request["method"]
        if method in self.held:
            self.held[method].append(request)
        elif method in self.refused:
            error = {"code": -32603, "message": f"{method} refused"}
            self._feed({"jsonrpc": "2.0", "id": request["id"], "error": error})
        else:
            self.answer(request)

    def answer(self, request: dict[str, Any]) -> None:
        """Answer ``request`` as an editor that accepts."""
        result = _ANSWERS.get(request["method"])
        self._feed({"jsonrpc": "2.0", "id": request["id"], "result": result})

    # -- what the client sends --------------------------------------------------

    def _feed(self, payload: dict[str, Any]) -> None:
        protocol = self.server.protocol
        protocol.handle_message(
            json.loads(json.dumps(payload), object_hook=protocol.structure_message)
        )

    def notify(self, method: str, params: Any = None) -> None:
        self._feed({"jsonrpc": "2.0", "method": method, "params": params})

    def send(
        self, method: str, params: Any = None, msg_id: str | None = None
    ) -> asyncio.Future[Any]:
        """Send a request; its future is the result (or raises its error)."""
        if msg_id is None:
            self._ids += 1
            msg_id = f"client-{self._ids}"
        answered = asyncio.get_running_loop().create_future()
        self._waiting[msg_id] = answered
        self._feed({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})

        async def result() -> Any:
            message = await answered
            if "error" in message:
                raise RuntimeError(message["error"]["message"])
            return message.get("result")

        return asyncio.ensure_future(result())

    async def command(self, name: str, args: dict[str, Any], msg_id: str | None = None) -> Any:
        return await self.send(
            "workspace/executeCommand", {"command": name, "arguments": [args]}, msg_id
        )

    # -- what the tests read ------------------------------------------------------

    def events(self) -> list[dict[str, Any]]:
        return [params for method, params in self.notifications if method == "rhema/event"]

    def of(self, method: str) -> list[Any]:
        return [params for name, params in self.notifications if name == method]

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        async with asyncio.timeout(10):
            while not predicate():
                self.arrived.clear()
                await self.arrived.wait()


async def start(
    folder: Path, settings: dict[str, Any], *, events: bool = True, progress: bool = True
) -> Loopback:
    """A server initialized by a client that renders ``rhema/event`` (or not)
    and shows work-done progress (or not)."""
    client = Loopback(create_server())
    options: dict[str, Any] = dict(settings)
    if events:
        options["clientCapabilities"] = {"events": True}
    init = {
        "processId": None,
        "rootUri": folder.as_uri(),
        "workspaceFolders": [{"uri": folder.as_uri(), "name": folder.name}],
        "capabilities": {
            "window": {"workDoneProgress": progress, "showDocument": {"support": True}}
        },
        "initializationOptions": options,
    }
    await client.send("initialize", init)
    client.notify("initialized", {})
    return client


async def stop(client: Loopback) -> None:
    """``shutdown`` (the service stops its runs and closes its stores)."""
    await client.send("shutdown")


@contextmanager
def kept_logging() -> Iterator[None]:
    """The server routes the ``rhema_lsp`` loggers to its client: put them back after."""
    root = logging.getLogger("rhema_lsp")
    saved = (list(root.handlers), root.propagate, root.level)
    try:
        yield
    finally:
        handlers, propagate, level = saved
        root.handlers[:] = handlers
        root.propagate = propagate
        root.setLevel(level)


LONG = "word " * 3000
"""An answer long enough to still be streaming when a test acts on its turn."""


def settings(fake: FakeModelServer) -> dict[str, Any]:
    """The settings of an editor of the fake model, in ``edit`` mode."""
    return {
        "provider": "custom",
        "protocol": "openai",
        "baseUrl": fake.base_url,
        "model": "fake-model",
        "mode": "edit",
    }
