"""``rhema-lsp ask``: the headless client's turn, over a started server
(:mod:`.connection`; the one-command verbs are :mod:`.commands`).

``ask`` runs one turn and maps how it ended to an :class:`Exit` code (see
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
import signal
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from rhema_lsp.contract import (
    SESSIONS,
    TURN,
    ContextRef,
    Detached,
    ImageArg,
    RhemaEventParams,
    RunStopReason,
    SessionsArgs,
    SessionSummary,
    TurnArgs,
    TurnResult,
)
from rhema_lsp.headless.connection import ClientOptions, Connection, stderr_note
from rhema_lsp.headless.editor import HeadlessEditor
from rhema_lsp.headless.errors import Exit, UsageError
from rhema_lsp.headless.render import JsonRenderer, TerminalRenderer
from rhema_lsp.headless.wire import ContractDrift, read_event
from rhema_lsp.jsonrpc.child import StdioEndpoint

__all__ = ["AskOptions", "ask"]

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

T = TypeVar("T")


@dataclass
class AskOptions(ClientOptions):
    """``rhema-lsp ask``: the prompt, checked non-blank, and how to run it."""

    prompt: str = ""
    files: tuple[Path, ...] = ()
    images: tuple[ImageArg, ...] = ()
    session: str | None = None
    resume_last: bool = False
    json: bool = False
    yes: bool = False
    trust_project: bool = False
    show_thinking: bool = True
    worktree: bool = False


class _Interrupts:
    """Ctrl-C, as the run is at the moment: before the turn, stop at once;
    during it, the first cancels the turn and the second stops everything."""

    def __init__(self, note: Callable[[str], None], echoed: Callable[[], None]) -> None:
        self.note = note
        self.echoed = echoed
        self.count = 0
        self.cancel_turn: Callable[[], None] | None = None
        self.stopped = asyncio.Event()
        self.endpoint: StdioEndpoint | None = None

    def fire(self) -> None:
        self.count += 1
        self.echoed()
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


def _nothing() -> None:
    """Without a terminal nothing echoes ``^C``."""


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
    interrupts = _Interrupts(renderer.note, renderer.interrupted if tty else _nothing)
    loop.add_signal_handler(signal.SIGINT, interrupts.fire)
    try:
        if options.provider_note:
            stderr_note(options.provider_note)
        editor = HeadlessEditor(
            options.folder,
            options.settings,
            renderer.note,
            approve_all=options.yes,
            trust_project=options.trust_project,
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
    connection = await Connection.open(options, editor, events, started)
    spinner: asyncio.Task[None] | None = None
    background: set[asyncio.Task[None]] = set()
    try:
        session = await _session_to_continue(connection, options)
        args = TurnArgs(
            prompt=options.prompt,
            folder=str(options.folder),
            session=session,
            context=[ContextRef(uri=path.as_uri()) for path in options.files],
            images=list(options.images),
            worktree=options.worktree,
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
        tree = result.worktree
        if tree is not None:
            stderr_note(f"worktree: {tree.name} on branch {tree.branch} at {tree.path}")
            stderr_note(f"branch {tree.branch}: `rhema-lsp worktree apply {tree.name}`")
        stop_reason = result.stop_reason
        if stop_reason in _STOPPED:
            stderr_note(f"rhema-lsp: {_STOPPED[stop_reason]}")
        return _exit_code(stop_reason)
    finally:
        interrupts.cancel_turn = None
        if spinner is not None:
            spinner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await spinner
        await connection.close()


async def _session_to_continue(connection: Connection, options: AskOptions) -> str | None:
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
