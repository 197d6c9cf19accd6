"""Commands that run the model: ``rhema.turn``, ``rhema.step``, ``rhema.edit``,
and ``rhema.cancel`` that stops them; ``rhema.newConversation``.

An ask without a ``session`` from a client that renders no events continues
the folder's latest session (:mod:`~rhema_lsp.server.conversation`).

A run answers when it ends, or at once while it goes on (``detach``, or by
default for a client that does not render events:
:meth:`~rhema_lsp.server.clients.ClientFeatures.detaches`); ``rhema.edit`` asks the
model for the selection's replacement without tools and applies it, after
the turn, through the run's tools.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TypeVar

from rhema_lsp.contract import (
    CANCEL,
    EDIT,
    NEW_CONVERSATION,
    STEP,
    TURN,
    CancelArgs,
    CancelResult,
    ContextRef,
    Detached,
    EditArgs,
    EditResult,
    NewConversationResult,
    SessionsArgs,
    StepArgs,
    StepResult,
    TurnArgs,
    TurnResult,
    UsageTally,
)
from rhema_lsp.engine import ImagePart, ToolContext, Usage
from rhema_lsp.runs.driver import Outcome
from rhema_lsp.runs.prompts import EDIT_SYSTEM, edit_prompt, replacement_for
from rhema_lsp.runs.registry import Run
from rhema_lsp.runs.turn import Finish, TurnReport
from rhema_lsp.runs.workplace import Plan
from rhema_lsp.server.context import folder_for, prompt_and_images, read_context
from rhema_lsp.server.errors import BadArguments
from rhema_lsp.server.folders import FolderError
from rhema_lsp.server.router import Request, Service, serves
from rhema_lsp.server.worktrees import worktree_of
from rhema_lsp.tools import ToolError, WorkspaceTools
from rhema_lsp.tools.positions import uri_to_path

__all__ = ["tally"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


def tally(usage: Usage) -> UsageTally:
    """A run's usage as the contract reports it."""
    return UsageTally(
        input=usage.input,
        output=usage.output,
        cache_read=usage.cache_read,
        cache_write=usage.cache_write,
    )


async def _start(
    service: Service,
    folder: Path,
    session: str | None,
    plan: Plan,
    request: Request,
    detach: bool | None,
    finish: Finish[T] | None = None,
) -> TurnReport[T] | Detached:
    """Run ``plan`` to its end, or start it detached and answer at once, as
    the client's negotiation decides."""
    execution, client = service.execution, service.state.client
    detached = client.detaches(detach)
    token = client.progress_token(request.token, detached=detached)
    if detached:
        prepared = await execution.start_detached(folder, session, plan, token=token, finish=finish)
        return Detached(session=prepared.run.session, turn=prepared.run.turn, started=True)
    return await execution.run(
        folder, session, plan, msg_id=request.msg_id, token=token, finish=finish
    )


@serves(TURN)
async def turn(service: Service, args: TurnArgs, request: Request) -> TurnResult | Detached:
    state = service.state
    folder = await folder_for(state, args.folder, args.context, args.session)
    prompt, images = await prompt_and_images(state, args.prompt, args.context, args.images, folder)
    session = args.session
    if session is None and not args.worktree:  # a worktree: true without a session is a new one
        session = (await state.conversations.session_for(state, folder)).session
    chosen = await service.execution.chosen(folder, session)
    plan = Plan(
        prompt=prompt,
        title=args.prompt,
        mode=args.mode or chosen.mode,
        max_steps=args.max_steps or state.settings.max_steps,
        images=images,
        worktree=args.worktree,
    )
    report: TurnReport[None] | Detached = await _start(
        service, folder, session, plan, request, args.detach
    )
    if isinstance(report, Detached):
        return report
    outcome = report.outcome
    return TurnResult(
        session=report.ref.session,
        turn=report.ref.turn,
        stop_reason=outcome.stop_reason,
        text=outcome.text,
        steps=outcome.steps,
        usage=tally(outcome.usage),
        worktree=await worktree_of(report.ref.session),
    )


@serves(STEP)
async def step(service: Service, args: StepArgs, request: Request) -> StepResult | Detached:
    state = service.state
    if args.session is None and args.prompt is None:
        raise FolderError("`prompt` is required to start a new session")
    folder = await folder_for(state, args.folder, args.context, args.session)
    prompt: str | None = None
    images: tuple[ImagePart, ...] = ()
    if args.prompt is not None:
        prompt, images = await prompt_and_images(
            state, args.prompt, args.context, args.images, folder
        )
    elif args.images:
        raise BadArguments("`images` go with a `prompt`")
    session = args.session or (await state.conversations.session_for(state, folder)).session
    chosen = await service.execution.chosen(folder, session)
    plan = Plan(
        prompt=prompt,
        title=args.prompt or "",
        mode=args.mode or chosen.mode,
        max_steps=1,
        single_step=True,
        images=images,
    )
    report: TurnReport[None] | Detached = await _start(
        service, folder, session, plan, request, args.detach
    )
    if isinstance(report, Detached):
        return report
    outcome = report.outcome
    return StepResult(
        session=report.ref.session,
        turn=report.ref.turn,
        stop_reason=outcome.stop_reason,
        text=outcome.text,
        tool_calls=outcome.tool_calls,
        usage=tally(outcome.usage),
    )


@serves(NEW_CONVERSATION)
async def new_conversation(
    service: Service, args: SessionsArgs, request: Request
) -> NewConversationResult:
    state = service.state
    chosen = [state.folders.resolve(args.folder, [])] if args.folder else state.folders.roots()
    for folder in chosen:
        state.conversations.start_new(folder, state)
    return NewConversationResult(folders=[str(folder) for folder in chosen])


@serves(CANCEL)
async def cancel(service: Service, args: CancelArgs, request: Request) -> CancelResult:
    return CancelResult(cancelled=service.state.runs.cancel(args.session))


@serves(EDIT)
async def edit(service: Service, args: EditArgs, request: Request) -> EditResult | Detached:
    state = service.state
    folders = state.folders
    folder = folders.resolve(None, [args.uri])
    if folders.root_of(uri_to_path(args.uri)) is None:
        raise FolderError(f"`uri` {args.uri} is outside every workspace folder")
    if args.session is not None:
        folder = (await state.state_of(args.session)).path
    piece = (await read_context(state, [ContextRef(uri=args.uri, range=args.range)], folder))[0]
    assert piece.start is not None and piece.end is not None
    before = state.editor.open_document(args.uri)
    plan = Plan(
        prompt=edit_prompt(args.instruction, piece, piece.text[piece.start : piece.end]),
        title=f"Edit: {args.instruction}",
        mode="edit",
        max_steps=1,
        single_step=True,
        system=EDIT_SYSTEM,
        tools=False,
    )

    async def finish(outcome: Outcome, run: Run, tools: WorkspaceTools) -> bool:
        assert piece.start is not None and piece.end is not None
        replacement = replacement_for(piece.text[piece.start : piece.end], outcome.text)
        new_text = piece.text[: piece.start] + replacement + piece.text[piece.end :]
        ctx = ToolContext(cwd=folder, run_id=run.ref.run_id, cancel=run.signal)
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

    report = await _start(service, folder, args.session, plan, request, args.detach, finish)
    if isinstance(report, Detached):
        return report
    outcome = report.outcome
    return EditResult(
        session=report.ref.session,
        applied=bool(report.finished),
        stop_reason=outcome.stop_reason,
        text=outcome.text,
        usage=tally(outcome.usage),
    )
