"""The headless client's connection: the real server started as a child
process, initialised on a folder as an LSP client that renders ``rhema/event``
itself, and the contract's commands sent to it, read back by the contract.

:class:`Connection` is one started server; :func:`one_command` starts one,
runs a command that needs no editor and stops it.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rhema_lsp.contract import EVENT_METHOD, Args, CommandSpec
from rhema_lsp.headless.editor import CLIENT_CAPABILITIES, HeadlessEditor
from rhema_lsp.headless.errors import HeadlessError, UsageError
from rhema_lsp.headless.wire import read_result, write_args
from rhema_lsp.jsonrpc.child import RpcError, StdioEndpoint
from rhema_lsp.vocabulary import (
    ASK_MCP_WAIT_S,
    ASK_SIGN_IN_WAIT_S,
    MCP_RUN_WAIT_ENV,
    MCP_SIGN_IN_WAIT_ENV,
)

__all__ = ["ClientOptions", "Connection", "one_command", "stderr_note"]

INVALID_PARAMS = -32602


@dataclass
class ClientOptions:
    """What every headless command shares.

    ``settings`` are the ``rhema`` settings (camelCase keys) the server is
    given, provider pinned; ``provider_note`` says which provider and why.
    """

    folder: Path
    settings: dict[str, Any] = field(default_factory=dict)
    provider_note: str = ""
    server_command: tuple[str, ...] = (sys.executable, "-m", "rhema_lsp", "serve")
    debug: bool = False


def _server_env() -> dict[str, str]:
    """The server's environment: this one, its runs waiting at most
    :data:`~rhema_lsp.vocabulary.ASK_MCP_WAIT_S` for MCP servers to start
    (one question: a slow server joins the run once ready), and, in a
    terminal, :data:`~rhema_lsp.vocabulary.ASK_SIGN_IN_WAIT_S` for a sign-in."""
    env = {**os.environ, MCP_RUN_WAIT_ENV: f"{ASK_MCP_WAIT_S:g}"}
    if sys.stdin.isatty() and sys.stderr.isatty():  # someone there to sign in
        env[MCP_SIGN_IN_WAIT_ENV] = f"{ASK_SIGN_IN_WAIT_S:g}"
    return env


async def _spawn(options: ClientOptions) -> StdioEndpoint:
    """Start the server; a cancellation waits for the start, then stops it.

    Python 3.11's ``create_subprocess_exec`` can hang for good when cancelled
    while the child starts, so the start is shielded and finished first.
    """
    spawning = asyncio.ensure_future(
        StdioEndpoint.spawn(options.server_command, _server_env(), show_stderr=options.debug)
    )
    try:
        return await asyncio.shield(spawning)
    except asyncio.CancelledError:
        endpoint = await spawning
        endpoint.kill()
        await endpoint.close()
        raise


class Connection:
    """A started, initialised server and the editor answering it."""

    def __init__(self, endpoint: StdioEndpoint, editor: HeadlessEditor) -> None:
        self.endpoint = endpoint
        self.editor = editor

    @classmethod
    async def open(
        cls,
        options: ClientOptions,
        editor: HeadlessEditor,
        on_event: Callable[[Any], None],
        started: Callable[[StdioEndpoint], None] = lambda endpoint: None,
    ) -> Connection:
        folder = options.folder
        if not folder.is_dir():
            raise UsageError(f"{folder} is not a folder: pass an existing folder with --folder")
        endpoint = await _spawn(options)
        started(endpoint)
        endpoint.on("workspace/applyEdit", editor.apply_edit)
        endpoint.on("window/showMessageRequest", editor.show_message_request)
        endpoint.on("window/showMessage", editor.show_message)
        endpoint.on("window/showDocument", editor.show_document)
        endpoint.on("window/logMessage", editor.show_message)
        endpoint.on("workspace/configuration", editor.configuration)
        endpoint.on(EVENT_METHOD, on_event)
        try:
            await endpoint.request(
                "initialize",
                {
                    "processId": os.getpid(),
                    "clientInfo": {"name": "rhema-lsp ask"},
                    "rootUri": folder.as_uri(),
                    "workspaceFolders": [{"uri": folder.as_uri(), "name": folder.name}],
                    "capabilities": CLIENT_CAPABILITIES,
                    # it renders rhema/event itself: no transcript, no detaching
                    "initializationOptions": {
                        **editor.settings,
                        "clientCapabilities": {"events": True},
                    },
                },
            )
            await endpoint.notify("initialized", {})
        except BaseException:
            await endpoint.close()
            raise
        return cls(endpoint, editor)

    async def command(
        self, spec: CommandSpec[Any], args: Args, *, msg_id: int | None = None
    ) -> Any:
        """Run a contract command; its result is read as ``spec.result``.

        Raises
        ------
        HeadlessError
            The server refused the command (:class:`UsageError` for bad arguments).
        ContractDrift
            The result is not what the contract says.
        """
        try:
            raw = await self.endpoint.request(
                "workspace/executeCommand",
                {"command": spec.name, "arguments": [write_args(args)]},
                msg_id=msg_id,
            )
        except RpcError as exc:
            error = UsageError if exc.code == INVALID_PARAMS else HeadlessError
            raise error(f"the server refused {spec.name}: {exc.message}") from exc
        return read_result(spec.result, raw, spec.name)

    async def close(self) -> None:
        await self.endpoint.close()


def stderr_note(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


async def one_command(options: ClientOptions, spec: CommandSpec[Any], args: Args) -> Any:
    """Start the server, run one command that needs no editor, stop it."""
    editor = HeadlessEditor(
        options.folder,
        options.settings,
        stderr_note,
        approve_all=False,
        interactive=False,
        color=False,
    )
    connection = await Connection.open(options, editor, lambda params: None)
    try:
        return await connection.command(spec, args)
    finally:
        await connection.close()
