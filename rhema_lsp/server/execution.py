"""Running the server's runs: prepared, executed through the pipeline,
detached when the client cannot wait.

A run is prepared by the door kit (:class:`~rhema_lsp.runs.door.Door`, the
same steps in the same order as over ACP: its folder's store, the session's
choices over the settings, the run registered, so it can be cancelled from
then on and a busy session refuses it before any turn number is reserved,
then its turn decided) and then executed: the
pipeline (:meth:`~rhema_lsp.runs.turn.Turns.run`) does everything from the
lease to the recorded turn, showing it through an
:class:`~rhema_lsp.server.output.LspOutput`; the run is unregistered however
it ends. A detached run is executed by a task this class owns (cancelled at
shutdown) while the command answers right after preparing.

Sessions opened (``rhema.openSession``) or compacted (``rhema.compact``)
outside a turn go through the pipeline's resume and compaction, under the
same registry; deleting one is the door kit's (its run stopped first).
:meth:`Execution.shutdown` is the door kit's shutdown (runs, then the
detached tasks left, MCP servers, language servers, stores), however the
server is asked to stop.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rhema_lsp.engine import ResumeReport, Session
from rhema_lsp.runs.outside import Compacted, compact, reopen
from rhema_lsp.runs.refs import TurnRef
from rhema_lsp.runs.registry import MsgId, ProgressToken, Run
from rhema_lsp.runs.settings import Settings
from rhema_lsp.runs.turn import Finish, TurnReport
from rhema_lsp.runs.workplace import Plan
from rhema_lsp.runs.worktrees import Worktree
from rhema_lsp.server.folders import FolderState
from rhema_lsp.server.output import LspOutput, event_stream
from rhema_lsp.server.worktrees import decide, forget_new, inside
from rhema_lsp.sessions import SessionInfo

if TYPE_CHECKING:
    from rhema_lsp.server.state import ServerState

__all__ = ["Execution", "Prepared", "SessionOpened"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass
class Prepared:
    """A run whose session and turn are decided and which is registered,
    not yet executing."""

    plan: Plan
    state: FolderState
    run: Run
    settings: Settings
    """The server's settings with the session's stored choices."""
    worktree: Worktree | None = None
    """The session's worktree, where the run goes (``None``: the checkout)."""


@dataclass
class SessionOpened:
    """A session's history as :meth:`Execution.open_session` returns it."""

    info: SessionInfo
    session: Session
    resumed: ResumeReport = field(default_factory=ResumeReport)


class Execution:
    """Executes the runs of one server (see the module docstring)."""

    def __init__(self, state: ServerState) -> None:
        self.state = state
        self._detached: set[asyncio.Task[Any]] = set()

    async def run(
        self,
        folder: Path,
        session: str | None,
        plan: Plan,
        *,
        msg_id: MsgId | None,
        token: ProgressToken | None,
        finish: Finish[T] | None = None,
    ) -> TurnReport[T]:
        """Run ``plan`` in ``folder`` (on ``session``, else a new one) to its end.

        Raises
        ------
        SessionRunningError
            The session already runs a turn in this server.
        SessionStoreError
            The session is unknown or busy in another window.
        """
        prepared = await self.prepare(folder, session, plan, msg_id=msg_id)
        return await self.execute(prepared, token=token, finish=finish)

    async def start_detached(
        self,
        folder: Path,
        session: str | None,
        plan: Plan,
        *,
        token: ProgressToken | None,
        finish: Finish[T] | None = None,
    ) -> Prepared:
        """Prepare ``plan`` and execute it in a task of its own; returns at once."""
        prepared = await self.prepare(folder, session, plan, msg_id=None)
        task = asyncio.get_running_loop().create_task(
            self.execute(prepared, token=token, finish=finish),
            name=f"rhema run {prepared.run.ref}",
        )
        self._detached.add(task)
        task.add_done_callback(self._detached_done)
        return prepared

    def _detached_done(self, task: asyncio.Task[Any]) -> None:
        self._detached.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # already logged with its traceback where the run failed
            logger.error("detached run %s ended with %r", task.get_name(), task.exception())

    async def prepare(
        self, folder: Path, session: str | None, plan: Plan, *, msg_id: MsgId | None
    ) -> Prepared:
        """Register the run and decide its session (created if new) and turn
        (the door kit's :meth:`~rhema_lsp.runs.door.Door.start`).

        Raises
        ------
        SessionRunningError
            The session runs a turn here; no turn number was reserved.
        SessionStoreError
            The session is unknown, or the store cannot be opened.
        """
        state = self.state
        folder_state = await state.folders.state(folder, state.settings.session_store)
        settings = await state.door.settings(state.settings, folder_state.store, session)
        plan, model = await state.door.expand(plan, state.place(folder_state), session)
        if model is not None:
            settings = settings.model_copy(update={"model": model})
        new_id, tree = await decide(folder_state.path, session, plan)
        try:
            run = await state.door.start(
                folder_state.store,
                session,
                plan,
                model=settings.model or "",
                msg_id=msg_id,
                new_id=new_id,
            )
        except BaseException:
            await forget_new(new_id, tree)  # a new session's worktree: never left behind
            raise
        state.folders.remember(run.session, folder_state.path)
        return Prepared(plan, folder_state, run, settings, tree)

    async def chosen(self, folder: Path, session: str | None) -> Settings:
        """The settings a run of ``session`` in ``folder`` uses (its stored
        choices over the server's: :mod:`~rhema_lsp.runs.choices`)."""
        state = self.state
        folder_state = await state.folders.state(folder, state.settings.session_store)
        return await state.door.settings(state.settings, folder_state.store, session)

    async def execute(
        self,
        prepared: Prepared,
        *,
        token: ProgressToken | None,
        finish: Finish[T] | None = None,
    ) -> TurnReport[T]:
        """Execute a prepared run to its end; it is unregistered however it ends."""
        state, (plan, folder, run) = self.state, (prepared.plan, prepared.state, prepared.run)
        settings = prepared.settings
        output = LspOutput(state, folder, run, plan.title, token, self._detached)
        try:
            async with inside(state, state.place(folder), prepared.worktree, plan.title) as place:
                return await state.turns.run(
                    run,
                    plan,
                    place,
                    lambda: state.provider(settings.model),
                    settings,
                    output,
                    finish=finish,
                )
        finally:
            state.door.end(run)
            self._account(run)

    # -- sessions outside a turn -----------------------------------------------

    async def open_session(self, session_id: str) -> SessionOpened:
        """A session's history; a round a crash left open is completed first
        (unless the session is running here, or in another window)."""
        state = self.state
        folder = await state.state_of(session_id)
        info = await folder.store.info(session_id)
        if state.runs.is_running(info.id):
            return SessionOpened(info, await folder.store.load(info.id))
        ref = TurnRef(info.id, info.turns)
        settings = await state.door.settings(state.settings, folder.store, info.id)
        stream = event_stream(state, ref)
        try:
            session, report = await reopen(
                state.place(folder), ref, settings.mode, settings, stream
            )
        finally:
            stream.close()
        return SessionOpened(info, session, report)

    async def compact(self, session_id: str) -> Compacted:
        """Compact ``session_id`` now, as a run of its own (cancellable with
        ``rhema.cancel``; its ``compaction`` and ``context`` events go out as
        ``rhema/event``).

        Raises
        ------
        SessionRunningError
            The session runs a turn in this server.
        SessionStoreError
            The session is unknown or busy in another window.
        ProviderError
            No provider can be resolved.
        """
        state = self.state
        folder = await state.state_of(session_id)
        info = await folder.store.info(session_id)
        run = Run(session=info.id, turn=info.turns)
        state.runs.add(run)
        stream = event_stream(state, run.ref)
        try:
            return await compact(
                state.turns, run, state.place(folder), state.provider, state.settings, stream
            )
        finally:
            stream.close()
            state.runs.remove(run)

    async def delete_session(self, session_id: str) -> bool:
        """Stop the session's run here, wait until it has let go, delete it
        (the door kit's :meth:`~rhema_lsp.runs.door.Door.delete`)."""
        state = self.state
        folder = await state.state_of(session_id)
        return await state.door.delete(folder.store, session_id, forget=state.forget)

    # -- the end -----------------------------------------------------------------

    def _account(self, run: Run) -> None:
        """Log what the server holds after a run: the figures that would grow
        if runs leaked tasks or requests."""
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "run %s ended; holding %d runs, %d open requests, %d tasks",
                run.ref,
                len(self.state.runs),
                self.state.server.protocol.open_requests(),
                len(asyncio.all_tasks()),
            )

    async def shutdown(self) -> None:
        """The door kit's shutdown (:meth:`~rhema_lsp.runs.door.Door.shutdown`):
        every run cancelled and given a moment to checkpoint, the detached
        tasks left ended, the MCP servers and the language servers stopped,
        the stores closed (once: later calls return at once)."""
        state = self.state
        await state.door.shutdown(tasks=self._end_detached, languages=[state.languages])

    async def _end_detached(self) -> None:
        tasks = list(self._detached)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
