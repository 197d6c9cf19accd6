"""The contract's commands, translated.

:class:`AgentService` serves each command of :data:`rhema_lsp.contract.COMMANDS`
with one handler (marked :func:`serves`): it parses nothing and owns nothing,
only turns typed arguments into a :class:`~rhema_lsp.server.lifecycle.Plan`
or a session operation of the :class:`~rhema_lsp.server.lifecycle.RunLifecycle`,
and its outcome into the command's typed result. Parsing the argument object,
dumping the result and mapping errors to JSON-RPC happen once, in
:meth:`AgentService.execute`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError

from rhema_lsp import __version__
from rhema_lsp.contract import (
    CANCEL,
    CHANGES,
    CHECKPOINT_CONTENT,
    COMMANDS,
    COMPACT,
    DELETE_SESSION,
    EDIT,
    FORK_SESSION,
    MCP_PROMPT,
    MCP_PROMPTS,
    MCP_RESTART,
    OPEN_SESSION,
    REWIND,
    SESSIONS,
    STATUS,
    STEP,
    TURN,
    UNDO_TURN,
    CallSummary,
    CancelArgs,
    CancelResult,
    ChangesArgs,
    ChangesResult,
    CheckpointContentArgs,
    CheckpointContentResult,
    CommandSpec,
    CompactionInfo,
    CompactResult,
    ContextRef,
    DeleteResult,
    Detached,
    EditArgs,
    EditResult,
    FileConflict,
    ForkArgs,
    ForkResult,
    McpPromptArgs,
    McpPromptArgument,
    McpPromptInfo,
    McpPromptResult,
    McpPromptsArgs,
    McpRestartArgs,
    McpServerStatus,
    OpenSessionArgs,
    OpenSessionResult,
    ProviderStatus,
    ResumedCalls,
    RewindArgs,
    RewindResult,
    SessionArgs,
    SessionsArgs,
    SessionSummary,
    StatusArgs,
    StatusResult,
    StepArgs,
    StepResult,
    TurnArgs,
    TurnResult,
    UndoTurnArgs,
    UndoTurnResult,
    UsageTally,
    command_named,
)
from rhema_lsp.engine import ProviderError, ToolContext, Usage
from rhema_lsp.mcp import McpError
from rhema_lsp.runs.changes import describe_changes, parse_checkpoint_uri
from rhema_lsp.runs.context import ContextRefused, read_context
from rhema_lsp.runs.driver import Outcome
from rhema_lsp.runs.prompts import (
    EDIT_SYSTEM,
    ContextPiece,
    edit_prompt,
    render_context,
    replacement_for,
)
from rhema_lsp.runs.registry import Run, SessionRunningError
from rhema_lsp.runs.rewind import RewindReport, rewind
from rhema_lsp.runs.settings import Settings
from rhema_lsp.server.errors import BadArguments, CommandFailed
from rhema_lsp.server.folders import FolderError
from rhema_lsp.server.lifecycle import Finish, Plan, RunLifecycle, RunReport
from rhema_lsp.sessions import RewindWhat, SessionInfo, SessionStoreError
from rhema_lsp.tools import ToolError, WorkspaceTools
from rhema_lsp.tools.positions import uri_to_path

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

__all__ = ["AgentService", "Request", "serves"]

logger = logging.getLogger(__name__)

S = TypeVar("S", bound="AgentService")
T = TypeVar("T")
Handler = Callable[["AgentService", Any, "Request"], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Request:
    """The JSON-RPC request a command arrived in: its id (for
    ``$/cancelRequest``) and the client's progress token."""

    msg_id: int | str | None = None
    token: int | str | None = None


_HANDLERS: dict[str, Handler] = {}


def serves(spec: CommandSpec[Any]) -> Callable[[Handler], Handler]:
    """Mark a method of :class:`AgentService` as the handler of ``spec``."""

    def register(handler: Handler) -> Handler:
        if spec.name in _HANDLERS:
            raise RuntimeError(f"{spec.name} has two handlers")
        _HANDLERS[spec.name] = handler
        return handler

    return register


def _describe(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "argument"
        if item["type"] == "string_pattern_mismatch":
            problems.append(f"`{where}` must not be blank")
        else:
            problems.append(f"`{where}` {item['msg'].lower()}")
    return "; ".join(problems)


def _argument_object(name: str, arguments: list[Any] | None) -> Any:
    if not arguments:
        return {}
    if len(arguments) > 1:
        raise BadArguments(f"{name}: expected one argument object, got {len(arguments)}")
    raw = arguments[0]
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise BadArguments(f"{name}: the argument must be an object with camelCase keys")
    return raw


def _tally(usage: Usage) -> UsageTally:
    return UsageTally(
        input=usage.input,
        output=usage.output,
        cache_read=usage.cache_read,
        cache_write=usage.cache_write,
    )


class AgentService:
    """Serves the contract's commands on a :class:`RunLifecycle`."""

    def __init__(self, server: LanguageServer) -> None:
        missing = [spec.name for spec in COMMANDS if spec.name not in _HANDLERS]
        if missing:
            raise RuntimeError(f"no handler for {', '.join(missing)}")
        self.lifecycle = RunLifecycle(server)

    @property
    def settings(self) -> Settings:
        return self.lifecycle.settings

    def update_settings(self, settings: Settings) -> None:
        """Adopt new settings."""
        self.lifecycle.update_settings(settings)

    async def execute(self, name: str, arguments: list[Any] | None, request: Request) -> Any:
        """Run one contract command with its raw arguments; the result as JSON.

        Raises
        ------
        BadArguments
            No such command, or the arguments do not validate or name
            nothing usable.
        CommandFailed
            The command cannot be served now (unknown or busy session, ...).
        """
        spec = command_named(name)
        if spec is None:
            raise BadArguments(f"unknown command {name!r}")
        try:
            args = spec.parse(_argument_object(name, arguments))
        except ValidationError as exc:
            raise BadArguments(f"{name}: {_describe(exc)}") from exc
        try:
            result = await _HANDLERS[name](self, args, request)
        except FolderError as exc:
            raise BadArguments(str(exc)) from exc
        except (SessionRunningError, SessionStoreError) as exc:
            raise CommandFailed(str(exc)) from exc
        return spec.dump(result)

    # -- translating arguments -------------------------------------------------

    async def _context(self, refs: list[ContextRef], folder: Path) -> list[ContextPiece]:
        """The attached documents, read through the workspace's gate."""
        folders = self.lifecycle.folders
        try:
            return await read_context(
                refs, folders.roots() or [folder], folder, self.lifecycle.editor, folders.display
            )
        except ContextRefused as exc:
            raise BadArguments(str(exc)) from exc

    async def _folder_for(
        self, folder: str | None, refs: list[ContextRef], session: str | None
    ) -> Path:
        """The folder of ``session`` when one is named, else as ``folder`` and
        the context say."""
        folders = self.lifecycle.folders
        if session is None:
            return folders.resolve(folder, [ref.uri for ref in refs])
        state = await self.lifecycle.state_of(session)
        if folder is not None and folders.resolve(folder, []) != state.path:
            raise FolderError(f"`folder` {folder} is not the folder of session {session}")
        return state.path

    async def _prompt_with_context(self, prompt: str, refs: list[ContextRef], folder: Path) -> str:
        if not refs:
            return prompt
        return f"{prompt}\n\n{render_context(await self._context(refs, folder))}"

    def _detaches(self, detach: bool | None, request: Request) -> bool:
        """Whether the command answers at once and the run goes on: as asked,
        else when the client could show neither progress nor events."""
        if detach is not None:
            return detach
        return self.lifecycle.client.detaches(request.token)

    async def _start(
        self,
        plan: Plan,
        request: Request,
        detach: bool | None,
        finish: Finish[T] | None = None,
    ) -> RunReport[T] | Detached:
        """Run ``plan`` to its end, or start it detached and answer at once."""
        if self._detaches(detach, request):
            prepared = await self.lifecycle.start_detached(plan, token=request.token, finish=finish)
            return Detached(session=prepared.run.session, turn=prepared.run.turn, started=True)
        return await self.lifecycle.run(
            plan, msg_id=request.msg_id, token=request.token, finish=finish
        )

    # -- commands --------------------------------------------------------------

    @serves(TURN)
    async def turn(self, args: TurnArgs, request: Request) -> TurnResult | Detached:
        folder = await self._folder_for(args.folder, args.context, args.session)
        plan = Plan(
            folder=folder,
            session=args.session,
            mode=args.mode or self.settings.mode,
            max_steps=args.max_steps or self.settings.max_steps,
            prompt=await self._prompt_with_context(args.prompt, args.context, folder),
            title=args.prompt,
        )
        report: RunReport[None] | Detached = await self._start(plan, request, args.detach)
        if isinstance(report, Detached):
            return report
        outcome = report.outcome
        return TurnResult(
            session=report.session,
            turn=report.turn,
            stop_reason=outcome.stop_reason,
            text=outcome.text,
            steps=outcome.steps,
            usage=_tally(outcome.usage),
        )

    @serves(STEP)
    async def step(self, args: StepArgs, request: Request) -> StepResult | Detached:
        if args.session is None and args.prompt is None:
            raise FolderError("`prompt` is required to start a new session")
        folder = await self._folder_for(args.folder, args.context, args.session)
        plan = Plan(
            folder=folder,
            session=args.session,
            mode=args.mode or self.settings.mode,
            max_steps=1,
            prompt=None
            if args.prompt is None
            else await self._prompt_with_context(args.prompt, args.context, folder),
            title=args.prompt or "",
            single_step=True,
        )
        report: RunReport[None] | Detached = await self._start(plan, request, args.detach)
        if isinstance(report, Detached):
            return report
        outcome = report.outcome
        return StepResult(
            session=report.session,
            turn=report.turn,
            stop_reason=outcome.stop_reason,
            text=outcome.text,
            tool_calls=[
                CallSummary(id=c.id, name=c.name, is_error=c.is_error) for c in outcome.tool_calls
            ],
            usage=_tally(outcome.usage),
        )

    @serves(CANCEL)
    async def cancel(self, args: CancelArgs, request: Request) -> CancelResult:
        return CancelResult(cancelled=self.lifecycle.runs.cancel(args.session))

    @serves(SESSIONS)
    async def sessions(self, args: SessionsArgs, request: Request) -> list[SessionSummary]:
        folders = self.lifecycle.folders
        roots = [folders.resolve(args.folder, [])] if args.folder else folders.roots()
        listed: list[SessionInfo] = []
        for folder in roots:
            state = await folders.state(folder, self.settings.session_store)
            for info in await state.store.list():
                folders.remember(info.id, folder)
                listed.append(info)
        listed.sort(key=lambda info: info.updated_at, reverse=True)
        return [
            SessionSummary(
                session=info.id,
                folder=info.folder,
                title=info.title,
                created_at=info.created_at,
                updated_at=info.updated_at,
                turns=info.turns,
                running=info.running or self.lifecycle.runs.is_running(info.id),
            )
            for info in listed
        ]

    @serves(OPEN_SESSION)
    async def open_session(self, args: OpenSessionArgs, request: Request) -> OpenSessionResult:
        opened = await self.lifecycle.open_session(args.session)
        session = opened.session
        latest = session.compaction
        return OpenSessionResult(
            session=opened.info.id,
            folder=opened.info.folder,
            title=opened.info.title,
            messages=session.history if args.full else session.view(),
            resumed=ResumedCalls(
                rerun=opened.resumed.rerun, interrupted=opened.resumed.interrupted
            ),
            compaction=None
            if latest is None
            else CompactionInfo(
                upto=latest.upto,
                summary_tokens=latest.summary_tokens,
                before=latest.before,
                after=latest.after,
                dropped=latest.dropped,
            ),
        )

    @serves(COMPACT)
    async def compact(self, args: SessionArgs, request: Request) -> CompactResult:
        try:
            done = await self.lifecycle.compact(args.session)
        except ProviderError as exc:
            raise CommandFailed(str(exc)) from exc
        record = done.record
        return CompactResult(
            session=done.session,
            compacted=record is not None,
            before=done.before,
            after=record.after if record is not None else done.before,
            summary_tokens=record.summary_tokens if record is not None else 0,
        )

    @serves(DELETE_SESSION)
    async def delete_session(self, args: SessionArgs, request: Request) -> DeleteResult:
        return DeleteResult(deleted=await self.lifecycle.delete_session(args.session))

    async def _rewind(
        self,
        session: str,
        turn: int,
        what: RewindWhat,
        *,
        force: bool,
        label: str,
        paths: list[str] | None = None,
    ) -> RewindReport:
        """Rewind under the session's lease (refused while it runs anywhere)."""
        state = await self.lifecycle.state_of(session)
        if self.lifecycle.runs.is_running(session):
            raise SessionRunningError(session)
        async with state.store.lease(session):
            return await rewind(
                state.store,
                self.lifecycle.editor,
                self.lifecycle.folders.roots() or [state.path],
                session,
                turn,
                what,
                force=force,
                label=label,
                paths=paths,
            )

    @serves(UNDO_TURN)
    async def undo_turn(self, args: UndoTurnArgs, request: Request) -> UndoTurnResult:
        state = await self.lifecycle.state_of(args.session)
        info = await state.store.info(args.session)
        turn = args.turn or max(info.turns, 1)
        report = await self._rewind(
            info.id, turn, "code", force=False, label=f"rhema: undo turn {turn}"
        )
        return UndoTurnResult(
            reverted=report.restored,
            conflicts=[conflict.uri for conflict in report.conflicts],
            save=report.save,
        )

    @serves(REWIND)
    async def rewind(self, args: RewindArgs, request: Request) -> RewindResult:
        report = await self._rewind(
            args.session,
            args.turn,
            args.what,
            force=args.force,
            label=f"rhema: rewind to before turn {args.turn}",
            paths=args.paths,
        )
        return RewindResult(
            session=args.session,
            turn=args.turn,
            what=args.what,
            restored=report.restored,
            conflicts=[FileConflict(uri=c.uri, reason=c.reason) for c in report.conflicts],
            save=report.save,
            messages=report.messages,
        )

    @serves(FORK_SESSION)
    async def fork_session(self, args: ForkArgs, request: Request) -> ForkResult:
        state = await self.lifecycle.state_of(args.session)
        info = await state.store.fork(args.session, args.turn)
        self.lifecycle.folders.remember(info.id, state.path)
        return ForkResult(session=info.id, title=info.title, turns=info.turns)

    @serves(CHANGES)
    async def changes(self, args: ChangesArgs, request: Request) -> ChangesResult:
        state = await self.lifecycle.state_of(args.session)
        return await describe_changes(
            state.store,
            self.lifecycle.editor,
            args.session,
            args.turn,
            self.lifecycle.folders.display,
        )

    @serves(CHECKPOINT_CONTENT)
    async def checkpoint_content(
        self, args: CheckpointContentArgs, request: Request
    ) -> CheckpointContentResult:
        try:
            session, blob, _path = parse_checkpoint_uri(args.uri)
        except ValueError as exc:
            raise BadArguments(str(exc)) from exc
        state = await self.lifecycle.state_of(session)
        data = await state.store.checkpoints.blob(blob)
        return CheckpointContentResult(uri=args.uri, text=data.decode("utf-8", errors="replace"))

    @serves(EDIT)
    async def edit(self, args: EditArgs, request: Request) -> EditResult | Detached:
        folders = self.lifecycle.folders
        folder = folders.resolve(None, [args.uri])
        if folders.root_of(uri_to_path(args.uri)) is None:
            raise FolderError(f"`uri` {args.uri} is outside every workspace folder")
        if args.session is not None:
            folder = (await self.lifecycle.state_of(args.session)).path
        piece = (await self._context([ContextRef(uri=args.uri, range=args.range)], folder))[0]
        assert piece.start is not None and piece.end is not None
        before = self.lifecycle.editor.open_document(args.uri)
        plan = Plan(
            folder=folder,
            session=args.session,
            mode="edit",
            max_steps=1,
            prompt=edit_prompt(args.instruction, piece, piece.text[piece.start : piece.end]),
            title=f"Edit: {args.instruction}",
            single_step=True,
            system=EDIT_SYSTEM,
            tools=False,
        )

        async def finish(outcome: Outcome, run: Run, tools: WorkspaceTools) -> bool:
            assert piece.start is not None and piece.end is not None
            replacement = replacement_for(piece.text[piece.start : piece.end], outcome.text)
            new_text = piece.text[: piece.start] + replacement + piece.text[piece.end :]
            ctx = ToolContext(cwd=folder, run_id=f"{run.session}:{run.turn}", cancel=run.signal)
            try:
                await tools.editing.replace_text(
                    ctx,
                    "edit",
                    str(uri_to_path(args.uri)),
                    old=piece.text,
                    version=before.version if before else None,
                    is_open=before is not None,
                    new=new_text,
                    tool="edit selection",
                )
            except ToolError as exc:
                logger.info("rhema.edit not applied: %s", exc)
                return False
            return True

        report = await self._start(plan, request, args.detach, finish)
        if isinstance(report, Detached):
            return report
        outcome = report.outcome
        return EditResult(
            session=report.session,
            applied=bool(report.finished),
            stop_reason=outcome.stop_reason,
            text=outcome.text,
            usage=_tally(outcome.usage),
        )

    @serves(STATUS)
    async def status(self, args: StatusArgs, request: Request) -> StatusResult:
        try:
            resolved = await self.lifecycle.provider()
            provider = ProviderStatus(
                name=resolved.name,
                model=resolved.model,
                base_url=resolved.base_url,
                source=resolved.source,
                context_window=self.settings.context_window or resolved.context_window,
            )
        except ProviderError as exc:
            provider = ProviderStatus(
                name=None, model=None, base_url=None, source=None, error=str(exc)
            )
        return StatusResult(
            version=__version__,
            provider=provider,
            folders=[str(root) for root in self.lifecycle.folders.roots()],
            mode=self.settings.mode,
            running=self.lifecycle.runs.sessions(),
            mcp_servers=[
                McpServerStatus.model_validate(asdict(report))
                for report in await self.lifecycle.mcp.status(
                    self.settings, check=args.check, editor=self.lifecycle.editor
                )
            ],
        )

    @serves(MCP_RESTART)
    async def mcp_restart(self, args: McpRestartArgs, request: Request) -> list[McpServerStatus]:
        reports = await self.lifecycle.mcp.restart(
            args.name, self.settings, editor=self.lifecycle.editor
        )
        if not reports:
            raise BadArguments(f"`name`: no MCP server named {args.name!r} is configured")
        return [McpServerStatus.model_validate(asdict(report)) for report in reports]

    @serves(MCP_PROMPTS)
    async def mcp_prompts(self, args: McpPromptsArgs, request: Request) -> list[McpPromptInfo]:
        listed = await self.lifecycle.mcp.prompts(self.settings, editor=self.lifecycle.editor)
        return [
            McpPromptInfo(
                server=server,
                name=prompt.name,
                title=prompt.title,
                description=prompt.description,
                arguments=[McpPromptArgument.model_validate(asdict(a)) for a in prompt.arguments],
                command=f"mcp__{server}__{prompt.name}",
            )
            for server, prompt in listed
        ]

    @serves(MCP_PROMPT)
    async def mcp_prompt(self, args: McpPromptArgs, request: Request) -> McpPromptResult:
        try:
            text = await self.lifecycle.mcp.get_prompt(args.server, args.name, args.arguments)
        except McpError as exc:
            raise CommandFailed(str(exc)) from exc
        return McpPromptResult(text=text)

    async def shutdown(self) -> None:
        """Cancel every run, give them a moment to checkpoint, close the stores."""
        await self.lifecycle.shutdown()
