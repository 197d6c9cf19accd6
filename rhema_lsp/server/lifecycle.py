"""The life of one run: lease the session, begin the progress, stream the
events, drive the engine, and, whatever happened, end with an ``error`` event
when it failed, ``turn_end``, and the progress end.

``rhema.turn``, ``rhema.step`` and ``rhema.edit`` are all a :class:`Plan`
handed to :meth:`RunLifecycle.run`; the commands differ only in the plan and
in what they do with the outcome.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rhema_lsp.engine import (
    Agent,
    ChatParams,
    ErrorEvent,
    Message,
    ProviderError,
    Session,
    ThinkingEffort,
    ToolContext,
    ToolResolver,
    TurnEnd,
    pending_calls,
    resume,
)
from rhema_lsp.providers import ResolvedProvider
from rhema_lsp.server.driver import Outcome, drive
from rhema_lsp.server.folders import Folders, FolderState
from rhema_lsp.server.lsp_editor import LspEditor
from rhema_lsp.server.progress import RunProgress
from rhema_lsp.server.prompts import system_prompt
from rhema_lsp.server.runs import Run, RunRegistry
from rhema_lsp.server.settings import Mode, Settings
from rhema_lsp.server.stream import RunStream
from rhema_lsp.sessions import SessionInfo, SessionStoreError, title_from_prompt
from rhema_lsp.tools import WorkspaceTools

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

__all__ = ["RHEMA_EVENT", "Finish", "Plan", "RunLifecycle"]

logger = logging.getLogger(__name__)

RHEMA_EVENT = "rhema/event"
UNDOABLE_TURNS = 50
"""Turns per folder whose edits ``rhema.undoTurn`` can still revert."""


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


Finish = Callable[[Outcome, Run], Awaitable[dict[str, Any]]]
"""What a command does with a run's outcome before the run ends."""


class RunLifecycle:
    """Runs plans: what every run shares (editor, folders, runs, sequence
    numbers) and the steps every run goes through."""

    def __init__(
        self,
        server: LanguageServer,
        editor: LspEditor,
        folders: Folders,
        runs: RunRegistry,
        settings: Callable[[], Settings],
        provider: Callable[[], Awaitable[ResolvedProvider]],
    ) -> None:
        self.server = server
        self.editor = editor
        self.folders = folders
        self.runs = runs
        self._settings = settings
        self._provider = provider
        self._seq: dict[str, int] = {}

    @property
    def settings(self) -> Settings:
        return self._settings()

    async def provider(self) -> ResolvedProvider:
        return await self._provider()

    def forget(self, session: str) -> None:
        """Drop what is kept of a deleted session."""
        self._seq.pop(session, None)

    def next_seq(self, session: str) -> Callable[[], int]:
        def next_seq() -> int:
            value = self._seq.get(session, 0) + 1
            self._seq[session] = value
            return value

        return next_seq

    def send_event(self, params: dict[str, Any]) -> None:
        self.server.protocol.notify(RHEMA_EVENT, params)

    async def session_for(self, state: FolderState, plan: Plan, model: str) -> SessionInfo:
        if plan.session is None:
            info = await state.store.create(title_from_prompt(plan.title), model=model)
        else:
            info = await state.store.info(plan.session)
        self.folders.remember(info.id, state.path)
        return info

    async def run(
        self,
        plan: Plan,
        *,
        msg_id: int | str | None,
        token: int | str | None,
        finish: Finish | None = None,
    ) -> dict[str, Any]:
        settings = self.settings
        state = await self.folders.state(plan.folder, settings.session_store)
        info = await self.session_for(state, plan, settings.model or "")
        turn = info.turns + 1 if plan.prompt is not None or info.turns == 0 else info.turns
        run = Run(session=info.id, turn=turn, msg_id=msg_id)
        self.runs.add(run)
        try:
            async with state.store.lease(info.id):
                return await self._lease_held(plan, state, info, run, token, finish)
        finally:
            self.runs.remove(run)
            state.journal.keep_last(UNDOABLE_TURNS)
            self._account(run)

    async def _lease_held(
        self,
        plan: Plan,
        state: FolderState,
        info: SessionInfo,
        run: Run,
        token: int | str | None,
        finish: Finish | None,
    ) -> dict[str, Any]:
        progress = await RunProgress.start(self.server, token, "starting")
        if progress.token is not None:
            self.runs.set_token(run, progress.token)
        stream = RunStream(
            self.send_event,
            session=info.id,
            turn=run.turn,
            next_seq=self.next_seq(info.id),
            report=progress.report,
        )
        outcome = Outcome()
        result: dict[str, Any] = {}
        try:
            outcome = await self._drive(plan, state, info, run, stream)
            if finish is not None and outcome.error is None and not run.cancelled:
                result = await finish(outcome, run)
        except SessionStoreError as exc:
            outcome = Outcome(stop_reason="error", error=str(exc))
        except Exception as exc:
            # A bug: the editor still learns that the run ended, and how.
            logger.exception("run %s:%d failed", run.session, run.turn)
            outcome = Outcome(stop_reason="error", error=f"internal error: {exc!r}")
            raise
        finally:
            if outcome.error is not None:
                stream.emit(ErrorEvent(message=outcome.error))
            stream.emit(
                TurnEnd(
                    stop_reason=outcome.stop_reason,
                    text=outcome.text,
                    steps=outcome.steps,
                    usage=outcome.usage,
                )
            )
            stream.close()
            progress.end(outcome.error or outcome.stop_reason.replace("_", " "))
        return {
            "session": info.id,
            "turn": run.turn,
            "stopReason": outcome.stop_reason,
            "text": outcome.text,
            "steps": outcome.steps,
            "usage": {"input": outcome.usage.input, "output": outcome.usage.output},
            "toolCalls": [
                {"id": c.id, "name": c.name, "isError": c.is_error} for c in outcome.tool_calls
            ],
            **result,
        }

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

    def tools(self, state: FolderState, mode: Mode) -> WorkspaceTools:
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

    async def _drive(
        self, plan: Plan, state: FolderState, info: SessionInfo, run: Run, stream: RunStream
    ) -> Outcome:
        try:
            resolved = await self.provider()
        except ProviderError as exc:
            return Outcome(stop_reason="error", error=str(exc))
        store = state.store
        session: Session = await store.load(info.id)
        resolver: ToolResolver | None = self.tools(state, plan.mode) if plan.tools else None
        ctx = ToolContext(cwd=state.path, run_id=f"{info.id}:{run.turn}", cancel=run.signal)
        if pending_calls(session):
            await resume(session, resolver, stream, ctx)
            await store.commit(info.id, session)
        if plan.prompt is not None:
            session.history.append(Message.user(plan.prompt))
            await store.commit(info.id, session)
        elif not session.history:
            return Outcome(stop_reason="error", error="nothing to continue: send a prompt")
        s = self.settings
        agent = Agent(
            resolved.provider,
            resolver=resolver,
            system=plan.system or system_prompt(plan.mode, state.path),
            params=ChatParams(
                model=resolved.model,
                max_tokens=s.max_tokens,
                thinking=ThinkingEffort(s.thinking),
            ),
            commit_hook=store.commit_hook(info.id),
        )
        outcome = await drive(
            agent,
            session,
            stream,
            ctx,
            run,
            store=store,
            session_id=info.id,
            max_steps=plan.max_steps,
            single_step=plan.single_step,
        )
        if plan.prompt is not None:
            await store.record_turn(info.id, model=resolved.model)
        return outcome
