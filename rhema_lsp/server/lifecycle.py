"""The run owner: the sessions, the runs, and the life of each run.

:class:`RunLifecycle` owns everything a run touches (settings, the resolved
provider, the editor, the workspace folders with their stores (and the
journals that checkpoint each turn's changes into them),
the running turns, the sessions' event sequence numbers); the commands only
translate their arguments into a :class:`Plan` or a session operation.

The life of one run: lease the session, begin the progress, stream the
events, complete a round a crash left open (the store's one resume entry
point), commit the input, drive the engine's turn loop, and, whatever
happened, end with an ``error`` event when it failed, ``turn_end``, and the
progress end. For a client that does not render events, the run also
writes the session's transcript, shows it (``window/showDocument``) and
ends with a ``window/showMessage`` saying how it went.

A run is prepared (session and turn decided, the run registered) and then
executed; a detached run is executed by a task this class owns, cancelled
with the others at shutdown, and the command answers right after preparing.

Each session keeps one :class:`~rhema_lsp.engine.ContextBudget` for the life
of the server (the window, and the token estimate calibrated by every call),
so its requests are compacted before they would cross the threshold;
:meth:`RunLifecycle.compact` compacts one on demand, as a run of its own.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import anyio

from rhema_lsp.contract import EVENT_METHOD
from rhema_lsp.engine import (
    Agent,
    ChatParams,
    CommitHook,
    Compaction,
    ContextBudget,
    ErrorEvent,
    Message,
    ProviderError,
    ResumeReport,
    Session,
    ThinkingEffort,
    ToolContext,
    ToolResolver,
    TurnEnd,
)
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.mcp.resolver import mcp_instructions
from rhema_lsp.providers import ProviderSettings, ResolvedProvider, resolve_provider
from rhema_lsp.runs.driver import Outcome, drive
from rhema_lsp.runs.prompts import system_prompt
from rhema_lsp.runs.registry import Run, RunRegistry
from rhema_lsp.runs.settings import Mode, Settings
from rhema_lsp.server.clients import ClientFeatures
from rhema_lsp.server.folders import Folders, FolderState
from rhema_lsp.server.lsp_editor import LspEditor
from rhema_lsp.server.plain_output import PlainOutput, Tee
from rhema_lsp.server.progress import RunProgress
from rhema_lsp.server.stream import RunStream
from rhema_lsp.sessions import SessionInfo, SessionStoreError, TurnStart, title_from_prompt
from rhema_lsp.tools import WorkspaceTools

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

__all__ = [
    "Compacted",
    "Finish",
    "Plan",
    "Prepared",
    "RunLifecycle",
    "RunReport",
    "SessionOpened",
]

logger = logging.getLogger(__name__)

SHUTDOWN_WAIT = 5.0
"""Seconds shutdown gives cancelled runs to checkpoint their sessions."""

T = TypeVar("T")

MsgId = int | str | None


@dataclass
class Plan:
    """What one run is asked to do."""

    folder: Path
    session: str | None
    mode: Mode
    max_steps: int
    prompt: str | None
    title: str
    single_step: bool = False
    system: str | None = None
    tools: bool = True


Finish = Callable[[Outcome, Run, WorkspaceTools], Awaitable[T]]
"""What a command does with a successful run's outcome before the run ends
(``rhema.edit`` applies its rewrite here, with the run's tools)."""


@dataclass
class RunReport(Generic[T]):
    """How a run ended: its session and turn, the outcome, and what the
    command's finish step returned (``None`` when it did not run)."""

    session: str
    turn: int
    outcome: Outcome
    finished: T | None = None


@dataclass
class Prepared:
    """A run whose session and turn are decided and which is registered,
    not yet executing."""

    plan: Plan
    state: FolderState
    run: Run


@dataclass
class SessionOpened:
    """A session's history as :meth:`RunLifecycle.open_session` returns it."""

    info: SessionInfo
    session: Session
    resumed: ResumeReport = field(default_factory=ResumeReport)


@dataclass
class Compacted:
    """What :meth:`RunLifecycle.compact` did: the record it appended (``None``:
    nothing older than the latest round) and the estimated tokens of the
    session's next request before."""

    session: str
    record: Compaction | None
    before: int


class RunLifecycle:
    """Owns the sessions and the runs of this server (see the module docstring)."""

    def __init__(self, server: LanguageServer) -> None:
        self.server = server
        self.settings = Settings()
        self.editor = LspEditor(server)
        self.folders = Folders(server)
        self.runs = RunRegistry()
        self._provider: ResolvedProvider | None = None
        self._provider_key: ProviderSettings | None = None
        self._seq: dict[str, int] = {}
        self._budgets: dict[str, tuple[int | None, ContextBudget]] = {}
        self.mcp = McpHub()
        self._detached: set[asyncio.Task[Any]] = set()
        self.client = ClientFeatures()

    # -- what runs share -----------------------------------------------------

    def update_settings(self, settings: Settings) -> None:
        """Adopt new settings; the provider is resolved again on next use."""
        self.settings = settings
        self.editor.approval_timeout = settings.approval_timeout

    async def provider(self) -> ResolvedProvider:
        """The provider the settings name, resolved once per settings."""
        wanted = ProviderSettings.of(self.settings)
        if self._provider is None or self._provider_key != wanted:
            self._provider = await resolve_provider(wanted)
            self._provider_key = wanted
            chosen = self._provider
            logger.info(
                "provider %s, model %s at %s (%s, %s wire); context window %s",
                chosen.name,
                chosen.model,
                chosen.base_url or "(in process)",
                chosen.source,
                chosen.protocol,
                chosen.context_window or "unknown",
            )
        return self._provider

    def budget(self, session: str, resolved: ResolvedProvider) -> ContextBudget:
        """The session's context budget: the ``contextWindow`` setting, else
        the provider's window; kept (with its calibration and any window a
        "too long" error revealed) while that configured window stays."""
        s = self.settings
        configured = s.context_window or resolved.context_window
        kept = self._budgets.get(session)
        if kept is None or kept[0] != configured:
            kept = (configured, ContextBudget(window=configured))
            self._budgets[session] = kept
        kept[1].threshold = s.compact_threshold
        return kept[1]

    def agent(
        self,
        resolved: ResolvedProvider,
        session: str,
        resolver: ToolResolver | None,
        system: str,
        commit_hook: CommitHook | None = None,
    ) -> Agent:
        """The agent of a run on ``session``."""
        s = self.settings
        return Agent(
            resolved.provider,
            resolver=resolver,
            system=system,
            params=ChatParams(
                model=resolved.model,
                max_tokens=s.max_tokens,
                thinking=ThinkingEffort(s.thinking),
            ),
            commit_hook=commit_hook,
            context=self.budget(session, resolved),
        )

    def tools(self, state: FolderState, mode: Mode) -> WorkspaceTools:
        """The confined tools of a run in ``state``'s folder."""
        s = self.settings
        return WorkspaceTools(
            self.folders.roots() or [state.path],
            state.path,
            mode,
            self.editor,
            command_allowlist=s.command_allowlist,
            review=s.review,
            journal=state.journal,
            env=os.environ,
        )

    def _stream(self, session: str, turn: int, report: Callable[[str], None] | None) -> RunStream:
        def next_seq() -> int:
            value = self._seq.get(session, 0) + 1
            self._seq[session] = value
            return value

        def send(params: dict[str, Any]) -> None:
            self.server.protocol.notify(EVENT_METHOD, params)

        return RunStream(send, session=session, turn=turn, next_seq=next_seq, report=report)

    # -- sessions ------------------------------------------------------------

    async def state_of(self, session: str) -> FolderState:
        """The folder state whose store holds ``session``."""
        return await self.folders.find(session, self.settings.session_store)

    async def open_session(self, session_id: str) -> SessionOpened:
        """A session's history; a round a crash left open is completed first
        (unless the session is running here, or in another window)."""
        state = await self.state_of(session_id)
        info = await state.store.info(session_id)
        if self.runs.is_running(info.id):
            return SessionOpened(info, await state.store.load(info.id))
        stream = self._stream(info.id, info.turns, None)
        ctx = ToolContext(cwd=state.path, run_id=f"{info.id}:{info.turns}")
        try:
            session, report = await state.store.open_and_resume(
                info.id, self.tools(state, self.settings.mode), stream, ctx
            )
        finally:
            stream.close()
        return SessionOpened(info, session, report)

    async def compact(self, session_id: str) -> Compacted:
        """Compact ``session_id`` now, as a run of its own (cancellable with
        ``rhema.cancel``; its ``compaction`` and ``context`` events go out as
        ``rhema/event``), and commit the record.

        Raises
        ------
        SessionRunningError
            The session runs a turn in this server.
        SessionStoreError
            The session is unknown or busy in another window.
        ProviderError
            No provider can be resolved.
        """
        state = await self.state_of(session_id)
        info = await state.store.info(session_id)
        resolved = await self.provider()
        run = Run(session=info.id, turn=info.turns)
        self.runs.add(run)
        done = Compacted(info.id, None, 0)
        try:
            async with state.store.lease(info.id):
                stream = self._stream(info.id, info.turns, None)
                try:
                    with run.scope:
                        await self._compact(state, run, stream, resolved, done)
                finally:
                    stream.close()
        finally:
            self.runs.remove(run)
        return done

    async def _compact(
        self,
        state: FolderState,
        run: Run,
        stream: RunStream,
        resolved: ResolvedProvider,
        done: Compacted,
    ) -> None:
        mode = self.settings.mode
        tools = self.tools(state, mode)
        ctx = ToolContext(cwd=state.path, run_id=f"{run.session}:{run.turn}", cancel=run.signal)
        session, _ = await state.store.open_and_resume(run.session, tools, stream, ctx)
        agent = self.agent(resolved, run.session, tools, system_prompt(mode, state.path))
        done.before = agent.compactor().estimate(session)
        done.record = await agent.compact(session, stream)
        if done.record is not None:
            await state.store.commit(run.session, session)

    async def delete_session(self, session_id: str) -> bool:
        """Stop the session's run here, wait until it has let go, delete it."""
        state = await self.state_of(session_id)
        self.runs.cancel(session_id)
        await self.runs.wait_finished(session_id)
        deleted = await state.store.delete(session_id)
        self._seq.pop(session_id, None)
        self._budgets.pop(session_id, None)
        return deleted

    async def _session_for(self, state: FolderState, plan: Plan, model: str) -> SessionInfo:
        if plan.session is None:
            info = await state.store.create(title_from_prompt(plan.title), model=model)
        else:
            info = await state.store.info(plan.session)
        self.folders.remember(info.id, state.path)
        return info

    # -- runs ------------------------------------------------------------------

    async def run(
        self,
        plan: Plan,
        *,
        msg_id: MsgId,
        token: MsgId,
        finish: Finish[T] | None = None,
    ) -> RunReport[T]:
        """Run ``plan`` to its end (see the module docstring).

        Raises
        ------
        SessionRunningError
            The session already runs a turn in this server.
        SessionStoreError
            The session is unknown or busy in another window.
        """
        prepared = await self.prepare(plan, msg_id=msg_id)
        return await self.execute(prepared, token=token, finish=finish)

    async def start_detached(
        self, plan: Plan, *, token: MsgId, finish: Finish[T] | None = None
    ) -> Prepared:
        """Prepare ``plan`` and execute it in a task of its own; returns at once."""
        prepared = await self.prepare(plan, msg_id=None)
        task = asyncio.get_running_loop().create_task(
            self.execute(prepared, token=token, finish=finish),
            name=f"rhema run {prepared.run.session}:{prepared.run.turn}",
        )
        self._detached.add(task)
        task.add_done_callback(self._detached_done)
        return prepared

    def _detached_done(self, task: asyncio.Task[Any]) -> None:
        self._detached.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # already logged with its traceback where the run failed
            logger.error("detached run %s ended with %r", task.get_name(), task.exception())

    async def prepare(self, plan: Plan, *, msg_id: MsgId) -> Prepared:
        """Decide the run's session (created if new) and turn; register it."""
        settings = self.settings
        state = await self.folders.state(plan.folder, settings.session_store)
        info = await self._session_for(state, plan, settings.model or "")
        turn = info.turns + 1 if plan.prompt is not None or info.turns == 0 else info.turns
        run = Run(session=info.id, turn=turn, msg_id=msg_id)
        self.runs.add(run)
        return Prepared(plan, state, run)

    async def execute(
        self, prepared: Prepared, *, token: MsgId, finish: Finish[T] | None = None
    ) -> RunReport[T]:
        """Execute a prepared run to its end; it is unregistered however it ends."""
        plan, state, run = prepared.plan, prepared.state, prepared.run
        try:
            async with state.store.lease(run.session):
                return await self._lease_held(plan, state, run, token, finish)
        finally:
            self.runs.remove(run)
            self._account(run)

    def transcript_path(self, state: FolderState, session: str) -> Path:
        """Where the transcript of ``session`` is written."""
        return state.store.path.parent / "transcripts" / f"{session}.md"

    async def _lease_held(
        self,
        plan: Plan,
        state: FolderState,
        run: Run,
        token: MsgId,
        finish: Finish[T] | None,
    ) -> RunReport[T]:
        progress = await RunProgress.start(self.server, token, "starting")
        if progress.token is not None:
            self.runs.set_token(run, progress.token)
        stream = self._stream(run.session, run.turn, progress.report)
        plain: PlainOutput | None = None
        sink: RunStream | Tee = stream
        if not self.client.events:
            path = self.transcript_path(state, run.session)
            plain = PlainOutput(self.server, path, run.turn, plan.title or None)
            sink = await plain.open(stream)
        report: RunReport[T] = RunReport(run.session, run.turn, Outcome())
        try:
            tools = self.tools(state, plan.mode)
            if plain is not None and self.client.show_document:
                plain.show(self._detached)
            report.outcome = await self._drive(plan, state, run, sink, tools)
            if finish is not None and report.outcome.error is None and not run.cancelled:
                report.finished = await finish(report.outcome, run, tools)
        except SessionStoreError as exc:
            report.outcome = Outcome(stop_reason="error", error=str(exc))
        except Exception as exc:
            # A bug: the editor still learns that the run ended, and how.
            logger.exception("run %s:%d failed", run.session, run.turn)
            report.outcome = Outcome(stop_reason="error", error=f"internal error: {exc!r}")
            raise
        finally:
            outcome = report.outcome
            if outcome.error is not None:
                sink.emit(ErrorEvent(message=outcome.error))
            sink.emit(
                TurnEnd(
                    stop_reason=outcome.stop_reason,
                    text=outcome.text,
                    steps=outcome.steps,
                    usage=outcome.usage,
                )
            )
            stream.close()
            progress.end(outcome.error or outcome.stop_reason.replace("_", " "))
            if plain is not None:
                await plain.close(outcome)
        return report

    async def _drive(
        self,
        plan: Plan,
        state: FolderState,
        run: Run,
        stream: RunStream | Tee,
        tools: WorkspaceTools,
    ) -> Outcome:
        try:
            resolved = await self.provider()
        except ProviderError as exc:
            return Outcome(stop_reason="error", error=str(exc))
        store = state.store
        resolver: ToolResolver | None = None
        if plan.tools:
            wire, s = resolved.protocol, self.settings
            resolver = await self.mcp.resolver(
                tools,
                plan.mode,
                state.path,
                self.editor,
                wire,
                s,
                provider=resolved.provider,
                model=resolved.model,
                window=s.context_window or resolved.context_window,
            )
        ctx = ToolContext(cwd=state.path, run_id=f"{run.session}:{run.turn}", cancel=run.signal)
        session, _ = await store.open_and_resume(run.session, resolver, stream, ctx)
        if plan.prompt is not None:
            session.history.append(Message.user(plan.prompt))
            start = TurnStart(run.turn, title_from_prompt(plan.title))
            await store.commit(run.session, session, turn=start)
        elif not session.history:
            return Outcome(stop_reason="error", error="nothing to continue: send a prompt")
        agent = self.agent(
            resolved,
            run.session,
            resolver,
            (plan.system or system_prompt(plan.mode, state.path)) + mcp_instructions(resolver),
            store.commit_hook(run.session),
        )
        outcome = await drive(
            agent,
            session,
            stream,
            ctx,
            run,
            store=store,
            session_id=run.session,
            max_steps=plan.max_steps,
            single_step=plan.single_step,
        )
        if plan.prompt is not None:
            await store.record_turn(run.session, model=resolved.model)
        return outcome

    def _account(self, run: Run) -> None:
        """Log what the server holds after a run: the figures that would grow
        if runs leaked tasks or requests."""
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "run %s:%d ended; holding %d runs, %d open requests, %d tasks",
                run.session,
                run.turn,
                len(self.runs),
                len(self.server.protocol._request_futures),
                len(asyncio.all_tasks()),
            )

    async def shutdown(self) -> None:
        """Cancel every run, give them a moment to checkpoint, end the tasks
        left, close the stores."""
        self.runs.cancel()
        with anyio.move_on_after(SHUTDOWN_WAIT):
            await self.runs.wait_idle()
        tasks = list(self._detached)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.mcp.aclose()
        await self.folders.close()
