"""The agent's own slash commands: ``/status``, ``/compact``, ``/rewind N``,
``/undo`` (see :mod:`~rhema_lsp.acp.commands` for how they are offered and
run).

Each is what the language server's commands do (``rhema.compact``,
``rhema.rewind``, ``rhema.undoTurn``), on the run pipeline and the session
store: a compaction or a rewind is registered as the session's run (so a
prompt cannot start meanwhile, and ``session/cancel`` stops a compaction)
and holds the session's lease (refused while another window runs it).
Their answers are plain text for the user.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from rhema_lsp.acp.commands import SlashCommand, SlashCommands
from rhema_lsp.acp.sessions import AcpSession
from rhema_lsp.engine import Event, ProviderError
from rhema_lsp.runs.outside import compact as compact_session
from rhema_lsp.runs.registry import Run, RunRegistry, SessionRunningError
from rhema_lsp.runs.rewind import RewindReport, rewind
from rhema_lsp.runs.settings import Settings
from rhema_lsp.runs.turn import Turns
from rhema_lsp.runs.workplace import Backend
from rhema_lsp.sessions import SessionStoreError
from rhema_lsp.vocabulary import RewindWhat

__all__ = ["CommandSeat", "Discard", "builtin_commands"]


class Discard:
    """An event sink for work nobody watches (a command's compaction,
    resuming a session on load)."""

    def emit(self, event: Event) -> None:
        """Drop ``event``."""


@dataclass
class CommandSeat:
    """What the commands run with: the pipeline, the connection's runs, and
    each session's settings and provider."""

    turns: Turns
    runs: RunRegistry
    settings: Callable[[AcpSession], Settings]
    backend: Callable[[AcpSession], Awaitable[Backend]]


def _files(report: RewindReport) -> str:
    lines = [f"restored {uri}" for uri in report.restored]
    lines += [f"⚠ left {c.uri} alone: {c.reason}" for c in report.conflicts]
    return "\n".join(lines) or "no files to restore"


def builtin_commands(seat: CommandSeat) -> SlashCommands:
    """The built-in commands, on ``seat``."""
    commands = SlashCommands()

    async def status(session: AcpSession, _arg: str) -> str:
        turns = (await session.store.info(session.id)).turns if session.stored else 0
        settings = seat.settings(session)
        model = settings.model
        if model is None:  # the provider's own, as the model picker names it
            try:
                model = (await seat.backend(session)).model
            except ProviderError:
                model = "none (no provider is set up)"
        return (
            f"Session {session.id} in {session.cwd}\n"
            f"mode {session.mode}, model {model}, "
            f"thinking {session.thinking}; {turns} turn{'s' if turns != 1 else ''}"
        )

    async def _registered(session: AcpSession, work: Callable[[Run], Awaitable[str]]) -> str:
        if not session.stored:
            return "Nothing yet: the session has no turns."
        info = await session.store.info(session.id)
        run = Run(session=session.id, turn=info.turns)
        try:
            seat.runs.add(run)
        except SessionRunningError:
            return "⚠ The session is running a turn: wait for it, or cancel it first."
        try:
            return await work(run)
        except (SessionStoreError, ProviderError) as exc:
            return f"⚠ {exc}"
        finally:
            seat.runs.remove(run)

    async def compact(session: AcpSession, _arg: str) -> str:
        async def work(run: Run) -> str:
            settings, place = seat.settings(session), session.place
            done = await compact_session(
                seat.turns, run, place, lambda: seat.backend(session), settings, Discard()
            )
            if done.record is None:
                return "Nothing to compact: the conversation is only its latest round."
            return f"Compacted the conversation (about {done.before} tokens before)."

        return await _registered(session, work)

    async def _rewind(session: AcpSession, turn: int, what: RewindWhat, label: str) -> str:
        async def work(run: Run) -> str:
            async with session.store.lease(session.id):
                report = await rewind(
                    session.store,
                    session.editor,
                    session.roots,
                    session.id,
                    turn,
                    what,
                    label=label,
                )
            return f"{label}:\n{_files(report)}"

        return await _registered(session, work)

    async def rewind_to(session: AcpSession, arg: str) -> str:
        if not arg.isdigit() or int(arg) < 1:
            return "⚠ Say which turn to go back before: /rewind 3"
        turn = int(arg)
        return await _rewind(session, turn, "both", f"Rewound to before turn {turn}")

    async def undo(session: AcpSession, _arg: str) -> str:
        if not session.stored:
            return "Nothing to undo: the session has no turns."
        turn = max(await session.store.turn_numbers.current(session.id), 1)
        return await _rewind(session, turn, "code", f"Undid the changes of turn {turn}")

    commands.add(SlashCommand("status", "Show the session's mode, model and turns", status))
    commands.add(SlashCommand("compact", "Compact the conversation now", compact))
    commands.add(
        SlashCommand(
            "rewind",
            "Files and conversation back to before a turn",
            rewind_to,
            hint="the turn to go back before",
        )
    )
    commands.add(SlashCommand("undo", "Undo the file changes of the last turn", undo))
    return commands
