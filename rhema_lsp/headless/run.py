"""The headless client: start the real server as a child process, open a
folder as the workspace, and drive it as an LSP client.

``ask`` runs one turn and maps how it ended to an exit code: 0 answered, 1 a
provider or tool failure (or the step limit), 2 a usage error, 130
cancelled. Ctrl-C sends ``$/cancelRequest`` for the running turn, so the
server checkpoints the session and answers ``cancelled``; a second Ctrl-C
stops waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rhema_lsp.headless.editor import CLIENT_CAPABILITIES, HeadlessEditor
from rhema_lsp.headless.jsonrpc import RpcError, StdioEndpoint
from rhema_lsp.headless.render import JsonRenderer, TerminalRenderer

__all__ = [
    "EXIT_CANCELLED",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "AskOptions",
    "ClientOptions",
    "UsageError",
    "ask",
    "sessions",
    "status",
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class UsageError(Exception):
    """The command line or the folder is not usable; exit code 2."""


@dataclass
class ClientOptions:
    """What every headless command shares."""

    folder: Path
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    protocol: str | None = None
    thinking: str | None = None
    server_command: tuple[str, ...] = (sys.executable, "-m", "rhema_lsp", "serve")
    debug: bool = False

    def settings(self) -> dict[str, Any]:
        values = {
            "provider": self.provider,
            "model": self.model,
            "baseUrl": self.base_url,
            "protocol": self.protocol,
            "thinking": self.thinking,
        }
        return {key: value for key, value in values.items() if value is not None}


@dataclass
class AskOptions(ClientOptions):
    """``rhema-lsp ask``."""

    prompt: str = ""
    files: tuple[str, ...] = ()
    mode: str = "ask"
    session: str | None = None
    resume_last: bool = False
    max_steps: int | None = None
    json: bool = False
    yes: bool = False
    show_thinking: bool = True


class _Connection:
    """A started, initialised server and the editor answering it."""

    def __init__(self, endpoint: StdioEndpoint, editor: HeadlessEditor) -> None:
        self.endpoint = endpoint
        self.editor = editor

    @classmethod
    async def open(
        cls, options: ClientOptions, editor: HeadlessEditor, on_event: Any
    ) -> _Connection:
        folder = options.folder
        if not folder.is_dir():
            raise UsageError(f"{folder} is not a folder: pass an existing folder with --folder")
        endpoint = await StdioEndpoint.spawn(
            options.server_command, dict(os.environ), show_stderr=options.debug
        )
        endpoint.on("workspace/applyEdit", editor.apply_edit)
        endpoint.on("window/showMessageRequest", editor.show_message_request)
        endpoint.on("window/showMessage", editor.show_message)
        endpoint.on("workspace/configuration", editor.configuration)
        endpoint.on("rhema/event", on_event)
        await endpoint.request(
            "initialize",
            {
                "processId": os.getpid(),
                "clientInfo": {"name": "rhema-lsp ask"},
                "rootUri": folder.as_uri(),
                "workspaceFolders": [{"uri": folder.as_uri(), "name": folder.name}],
                "capabilities": CLIENT_CAPABILITIES,
                "initializationOptions": editor.settings,
            },
        )
        await endpoint.notify("initialized", {})
        return cls(endpoint, editor)

    async def command(self, name: str, args: dict[str, Any], *, msg_id: int | None = None) -> Any:
        return await self.endpoint.request(
            "workspace/executeCommand", {"command": name, "arguments": [args]}, msg_id=msg_id
        )

    async def close(self) -> None:
        await self.endpoint.close()


async def _spin(renderer: TerminalRenderer) -> None:
    for frame in _frames():
        if renderer.first_output:
            break
        renderer.err.write(f"\r{frame} waiting for the model…")
        renderer.err.flush()
        await asyncio.sleep(0.1)
    renderer.err.write("\r\x1b[K")
    renderer.err.flush()


def _frames() -> Any:
    while True:
        yield from SPINNER


def _file_uris(options: AskOptions) -> list[str]:
    uris = []
    if options.files and not options.folder.is_dir():
        raise UsageError(f"{options.folder} is not a folder: pass an existing folder with --folder")
    for name in options.files:
        path = Path(name)
        if not path.is_absolute():
            path = options.folder / path
        if not path.is_file():
            raise UsageError(f"--file {name}: no such file in {options.folder}")
        uris.append(path.resolve().as_uri())
    return uris


def _exit_code(stop_reason: str) -> int:
    if stop_reason in ("end_turn", "max_tokens"):
        return EXIT_OK
    if stop_reason == "cancelled":
        return EXIT_CANCELLED
    return EXIT_FAILED


async def ask(options: AskOptions) -> int:
    """Run one turn; returns the exit code."""
    tty = sys.stderr.isatty()
    renderer: TerminalRenderer | JsonRenderer
    if options.json:
        renderer = JsonRenderer(sys.stdout)
    else:
        renderer = TerminalRenderer(
            sys.stdout, sys.stderr, color=tty, show_thinking=options.show_thinking
        )

    file_uris = _file_uris(options)
    settings = {**options.settings(), "mode": options.mode}
    if options.max_steps is not None:
        settings["maxSteps"] = options.max_steps
    editor = HeadlessEditor(
        options.folder,
        settings,
        renderer.note,
        approve_all=options.yes,
        interactive=sys.stdin.isatty() and tty,
        color=tty and not options.json,
    )
    connection = await _Connection.open(options, editor, renderer.notification)
    spinner: asyncio.Task[None] | None = None
    loop = asyncio.get_running_loop()
    interrupts = 0
    background: set[asyncio.Task[None]] = set()
    turn_id = connection.endpoint.next_id()
    done = asyncio.Event()

    def on_interrupt() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts == 1:
            renderer.note("cancelling… (Ctrl-C again to stop waiting)")
            task = asyncio.ensure_future(
                connection.endpoint.notify("$/cancelRequest", {"id": turn_id})
            )
            background.add(task)
            task.add_done_callback(background.discard)
        else:
            done.set()

    try:
        session = options.session
        if options.resume_last:
            listed = await connection.command("rhema.sessions", {"folder": str(options.folder)})
            if not listed:
                raise UsageError(f"no session to continue in {options.folder}: drop --continue")
            session = listed[0]["session"]
        args: dict[str, Any] = {"prompt": options.prompt, "folder": str(options.folder)}
        if file_uris:
            args["context"] = [{"uri": uri} for uri in file_uris]
        if session is not None:
            args["session"] = session
        if isinstance(renderer, TerminalRenderer) and tty:
            spinner = asyncio.create_task(_spin(renderer))
        loop.add_signal_handler(signal.SIGINT, on_interrupt)
        turn = asyncio.ensure_future(connection.command("rhema.turn", args, msg_id=turn_id))
        waiter = asyncio.ensure_future(done.wait())
        await asyncio.wait({turn, waiter}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if not turn.done():
            turn.cancel()
            return EXIT_CANCELLED
        try:
            result = turn.result()
        except RpcError as exc:
            raise UsageError(exc.message) from exc
        return _exit_code(result["stopReason"])
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        if spinner is not None:
            spinner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await spinner
        await connection.close()


async def _one_command(options: ClientOptions, name: str, args: dict[str, Any]) -> Any:
    """Start the server, run one command that needs no editor, stop it."""
    editor = HeadlessEditor(
        options.folder,
        options.settings(),
        _stderr_note,
        approve_all=False,
        interactive=False,
        color=False,
    )
    connection = await _Connection.open(options, editor, lambda params: None)
    try:
        return await connection.command(name, args)
    finally:
        await connection.close()


async def sessions(options: ClientOptions, as_json: bool) -> int:
    """List the folder's sessions, most recent first."""
    listed = await _one_command(options, "rhema.sessions", {"folder": str(options.folder)})
    if as_json:
        print(json.dumps(listed, ensure_ascii=False, indent=2))
    elif not listed:
        print(f"no sessions in {options.folder}")
    for item in [] if as_json else listed:
        running = " (running)" if item["running"] else ""
        print(
            f"{item['session']}  {item['updatedAt'][:19]}  {item['turns']:>3} turn(s)  "
            f"{item['title']}{running}"
        )
    return EXIT_OK


async def status(options: ClientOptions, as_json: bool) -> int:
    """Print the resolved provider and where it came from, and the MCP servers."""
    result = await _one_command(options, "rhema.status", {})
    if as_json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return EXIT_OK
    provider = result["provider"]
    print(f"rhema-lsp {result['version']}")
    if provider.get("error"):
        print(f"provider: none — {provider['error']}")
        return EXIT_FAILED
    print(f"provider: {provider['name']} · model {provider['model']} · {provider['baseUrl']}")
    print(f"source:   {provider['source']}")
    print(f"folders:  {', '.join(result['folders'])}")
    print(f"mode:     {result['mode']}")
    servers = result.get("mcpServers") or []
    print(f"mcp:      {len(servers)} server(s)" if servers else "mcp:      no servers configured")
    for server in servers:
        error = f" — {server['error']}" if server.get("error") else ""
        print(
            f"  {server['name']} ({server['transport']}, {server['source']}): "
            f"{server['state']}, {server['tools']} tool(s){error}"
        )
    return EXIT_OK


def _stderr_note(line: str) -> None:
    sys.stderr.write(line + "\n")
