"""The headless client: start the real server as a child process, open a
folder as the workspace, and drive it as an LSP client.

``rewind`` restores a session's files (written atomically on disk, as every
headless edit) and/or its conversation to before a turn. ``ask`` runs one
turn and maps how it ended to an :class:`Exit` code (see
:mod:`.errors`). The command line has already chosen the provider and
checked every flag, so a turn that cannot start fails before a session
exists. Ctrl-C reaches this process only (the server runs in its own
session): before the turn, it stops at once; during the turn, the first one
sends ``$/cancelRequest``, so the server checkpoints the session and answers
``cancelled``, and a second kills the server's process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from rhema_lsp.contract import (
    EVENT_METHOD,
    REWIND,
    SESSIONS,
    STATUS,
    TURN,
    Args,
    CommandSpec,
    ContextRef,
    Detached,
    RewindArgs,
    RewindResult,
    RewindWhat,
    RhemaEventParams,
    RunStopReason,
    SessionsArgs,
    SessionSummary,
    StatusArgs,
    StatusResult,
    TurnArgs,
    TurnResult,
)
from rhema_lsp.headless.editor import CLIENT_CAPABILITIES, HeadlessEditor
from rhema_lsp.headless.errors import Exit, HeadlessError, UsageError
from rhema_lsp.headless.jsonrpc import RpcError, StdioEndpoint
from rhema_lsp.headless.render import JsonRenderer, TerminalRenderer
from rhema_lsp.headless.wire import ContractDrift, read_event, read_result, write_args
from rhema_lsp.tools.positions import path_to_uri, uri_to_path

__all__ = [
    "AskOptions",
    "ClientOptions",
    "RewindRequest",
    "ask",
    "rewind",
    "sessions",
    "status",
]

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
INVALID_PARAMS = -32602

T = TypeVar("T")


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


@dataclass
class AskOptions(ClientOptions):
    """``rhema-lsp ask``: the prompt, checked non-blank, and how to run it."""

    prompt: str = ""
    files: tuple[Path, ...] = ()
    session: str | None = None
    resume_last: bool = False
    json: bool = False
    yes: bool = False
    show_thinking: bool = True


async def _spawn(options: ClientOptions) -> StdioEndpoint:
    """Start the server; a cancellation waits for the start, then stops it.

    Python 3.11's ``create_subprocess_exec`` can hang for good when cancelled
    while the child starts, so the start is shielded and finished first.
    """
    spawning = asyncio.ensure_future(
        StdioEndpoint.spawn(options.server_command, dict(os.environ), show_stderr=options.debug)
    )
    try:
        return await asyncio.shield(spawning)
    except asyncio.CancelledError:
        endpoint = await spawning
        endpoint.kill()
        await endpoint.close()
        raise


class _Connection:
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
    ) -> _Connection:
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


class _Interrupts:
    """Ctrl-C, as the run is at the moment: before the turn, stop at once;
    during it, the first cancels the turn and the second stops everything."""

    def __init__(self, note: Callable[[str], None]) -> None:
        self.note = note
        self.count = 0
        self.cancel_turn: Callable[[], None] | None = None
        self.stopped = asyncio.Event()
        self.endpoint: StdioEndpoint | None = None

    def fire(self) -> None:
        self.count += 1
        if self.count == 1 and self.cancel_turn is not None:
            self.note("cancelling… (Ctrl-C again to stop the server now)")
            self.cancel_turn()
        elif not self.stopped.is_set():
            if self.endpoint is not None:
                self.endpoint.kill()
            self.stopped.set()

    async def run(self, work: Coroutine[Any, Any, T]) -> T | None:
        """Run ``work`` until it ends or a Ctrl-C stops it (``None``)."""
        task = asyncio.ensure_future(work)
        stop = asyncio.ensure_future(self.stopped.wait())
        try:
            await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            raise
        finally:
            stop.cancel()
        if task.done():
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return None


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


_STOPPED = {
    "max_tokens": (
        "stopped before an answer: the model reached its output token limit; raise "
        '--max-tokens, or go on with `rhema-lsp ask --continue "go on"`'
    ),
    "max_steps": (
        "stopped before an answer: the turn used all its steps; raise --max-steps, or go "
        'on with `rhema-lsp ask --continue "go on"`'
    ),
}
"""Why a turn ended without an answer (exit 3), and what to do."""


class _Events:
    """The run's ``rhema/event`` notifications, read by the contract and
    rendered; the first that does not read is noted at once and kept, so the
    run fails with it."""

    def __init__(
        self, render: Callable[[RhemaEventParams], None], note: Callable[[str], None]
    ) -> None:
        self.render = render
        self.note = note
        self.drift: ContractDrift | None = None

    def __call__(self, raw: Any) -> None:
        try:
            params = read_event(raw)
        except ContractDrift as exc:
            if self.drift is None:
                self.drift = exc
                self.note(f"rhema-lsp: {exc}")
            return
        self.render(params)


def _exit_code(stop_reason: RunStopReason) -> Exit:
    if stop_reason in ("end_turn", "pause_turn"):
        return Exit.OK
    if stop_reason in _STOPPED:
        return Exit.STOPPED
    if stop_reason == "cancelled":
        return Exit.CANCELLED
    return Exit.FAILED


def _stderr_note(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


async def ask(options: AskOptions) -> int:
    """Run one turn; returns the exit code.

    Raises
    ------
    UsageError
        The folder or the session named cannot be used.
    HeadlessError
        The server refused the turn.
    ServerGone
        The server exited before answering.
    """
    loop = asyncio.get_running_loop()
    tty = sys.stderr.isatty()
    renderer: TerminalRenderer | JsonRenderer
    if options.json:
        renderer = JsonRenderer(sys.stdout, sys.stderr)
    else:
        renderer = TerminalRenderer(
            sys.stdout, sys.stderr, color=tty, show_thinking=options.show_thinking
        )
    interrupts = _Interrupts(renderer.note)
    loop.add_signal_handler(signal.SIGINT, interrupts.fire)
    try:
        if options.provider_note:
            _stderr_note(options.provider_note)
        editor = HeadlessEditor(
            options.folder,
            options.settings,
            renderer.note,
            approve_all=options.yes,
            interactive=sys.stdin.isatty() and tty,
            color=tty and not options.json,
        )
        code = await interrupts.run(_ask(options, editor, renderer, interrupts, tty))
    finally:
        loop.remove_signal_handler(signal.SIGINT)
    if code is None:
        renderer.note("— stopped: the server was stopped; `--continue` picks the session up")
        return Exit.CANCELLED
    return code


async def _ask(
    options: AskOptions,
    editor: HeadlessEditor,
    renderer: TerminalRenderer | JsonRenderer,
    interrupts: _Interrupts,
    tty: bool,
) -> int:
    def started(endpoint: StdioEndpoint) -> None:
        interrupts.endpoint = endpoint

    events = _Events(renderer.notification, renderer.note)
    connection = await _Connection.open(options, editor, events, started)
    spinner: asyncio.Task[None] | None = None
    background: set[asyncio.Task[None]] = set()
    try:
        session = await _session_to_continue(connection, options)
        args = TurnArgs(
            prompt=options.prompt,
            folder=str(options.folder),
            session=session,
            context=[ContextRef(uri=path.as_uri()) for path in options.files],
        )
        turn_id = connection.endpoint.next_id()

        def cancel_turn() -> None:
            task = asyncio.ensure_future(
                connection.endpoint.notify("$/cancelRequest", {"id": turn_id})
            )
            background.add(task)
            task.add_done_callback(background.discard)

        if isinstance(renderer, TerminalRenderer) and tty:
            spinner = asyncio.create_task(_spin(renderer))
        interrupts.cancel_turn = cancel_turn
        result: TurnResult | Detached = await connection.command(TURN, args, msg_id=turn_id)
        if events.drift is not None:
            raise events.drift
        if not isinstance(result, TurnResult):  # this client renders events: never detached
            raise ContractDrift(f"the server detached turn {result.turn} instead of running it")
        stop_reason = result.stop_reason
        if stop_reason in _STOPPED:
            _stderr_note(f"rhema-lsp: {_STOPPED[stop_reason]}")
        return _exit_code(stop_reason)
    finally:
        interrupts.cancel_turn = None
        if spinner is not None:
            spinner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await spinner
        await connection.close()


async def _session_to_continue(connection: _Connection, options: AskOptions) -> str | None:
    """The session ``--session`` or ``--continue`` names, checked to exist."""
    if options.session is None and not options.resume_last:
        return None
    listed: list[SessionSummary] = await connection.command(
        SESSIONS, SessionsArgs(folder=str(options.folder))
    )
    if options.resume_last:
        if not listed:
            raise UsageError(f"no session to continue in {options.folder}: drop --continue")
        return listed[0].session
    if not any(item.session == options.session for item in listed):
        raise UsageError(
            f"--session {options.session}: no such session in {options.folder}; "
            f"`rhema-lsp sessions --folder {options.folder}` lists them"
        )
    return options.session


async def _one_command(options: ClientOptions, spec: CommandSpec[Any], args: Args) -> Any:
    """Start the server, run one command that needs no editor, stop it."""
    editor = HeadlessEditor(
        options.folder,
        options.settings,
        _stderr_note,
        approve_all=False,
        interactive=False,
        color=False,
    )
    connection = await _Connection.open(options, editor, lambda params: None)
    try:
        return await connection.command(spec, args)
    finally:
        await connection.close()


async def sessions(options: ClientOptions, as_json: bool) -> int:
    """List the folder's sessions, most recent first."""
    listed: list[SessionSummary] = await _one_command(
        options, SESSIONS, SessionsArgs(folder=str(options.folder))
    )
    if as_json:
        print(json.dumps([item.wire() for item in listed], ensure_ascii=False, indent=2))
    elif not listed:
        print(f"no sessions in {options.folder}")
    for item in [] if as_json else listed:
        running = " (running)" if item.running else ""
        print(
            f"{item.session}  {item.updated_at[:19]}  {item.turns:>3} turn(s)  "
            f"{item.title}{running}"
        )
    return Exit.OK


@dataclass(frozen=True, slots=True)
class RewindRequest:
    """``rhema-lsp rewind``: which session, to before which turn, what;
    ``paths`` (relative to the folder, or absolute): those files only."""

    session: str
    turn: int
    what: RewindWhat = "both"
    force: bool = False
    paths: tuple[Path, ...] = ()


async def rewind(options: ClientOptions, request: RewindRequest, as_json: bool) -> int:
    """Rewind a session through the server, files written on disk atomically;
    exit 1 when a file was left alone."""
    if request.turn < 1:
        raise UsageError(f"--turn {request.turn}: turns count from 1")
    if request.paths and request.what != "code":
        raise UsageError(f"--path restores files only: it does not go with --{request.what}")
    args = RewindArgs(
        session=request.session,
        turn=request.turn,
        what=request.what,
        force=request.force,
        paths=_file_uris(options.folder, request.paths),
    )
    result: RewindResult = await _one_command(options, REWIND, args)
    if as_json:
        print(json.dumps(result.wire(), ensure_ascii=False, indent=2))
    else:
        for uri in result.restored:
            print(f"restored  {_shown(options.folder, uri)}")
        for conflict in result.conflicts:
            print(f"conflict  {_shown(options.folder, conflict.uri)}: {conflict.reason}")
        if result.messages is not None:
            print(f"conversation: {result.messages} message(s) kept, before turn {request.turn}")
    if result.conflicts:
        _stderr_note(
            f"rhema-lsp: {len(result.conflicts)} file(s) changed since were left alone; "
            "--force overwrites them"
        )
        return Exit.FAILED
    return Exit.OK


def _file_uris(folder: Path, paths: tuple[Path, ...]) -> list[str] | None:
    """The ``file://`` URIs of ``paths`` (relative to ``folder`` or absolute), normalised
    (the server refuses what lies outside the workspace); ``None`` for none."""
    return [path_to_uri(Path(os.path.normpath(folder / path))) for path in paths] or None


def _shown(folder: Path, uri: str) -> str:
    path = uri_to_path(uri)
    try:
        return str(path.relative_to(folder))
    except ValueError:
        return str(path)


async def status(options: ClientOptions, as_json: bool, mode_note: str) -> int:
    """Print the provider (``options.provider_note``), the server's version
    and folders, the mode ``ask`` runs in (``mode_note``) and the MCP servers."""
    result: StatusResult = await _one_command(options, STATUS, StatusArgs(check=True))
    provider = result.provider
    if as_json:
        shown = result.model_copy(
            update={"provider": provider.model_copy(update={"source": options.provider_note})}
        )
        print(json.dumps(shown.wire(), ensure_ascii=False, indent=2))
        return Exit.OK
    print(f"rhema-lsp {result.version}")
    if provider.error:
        print(f"provider: none — {provider.error}")
        return Exit.FAILED
    where = provider.base_url or "in process"
    print(f"provider: {provider.name} · model {provider.model} · {where}")
    print(f"source:   {options.provider_note}")
    print(f"folders:  {', '.join(result.folders)}")
    print(f"mode:     {mode_note}")
    servers = result.mcp_servers
    print(f"mcp:      {len(servers)} server(s)" if servers else "mcp:      no servers configured")
    for server in servers:
        error = f" — {server.error}" if server.error else ""
        deferred = " (behind find_tools)" if server.deferred else ""
        print(
            f"  {server.name} ({server.transport}, {server.source}): "
            f"{server.state}, {server.tools} tool(s){deferred}{error}"
        )
    return Exit.OK
