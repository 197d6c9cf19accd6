"""Commands on what turns changed: ``rhema.undoTurn``, ``rhema.rewind``,
``rhema.changes``, ``rhema.checkpointContent``.

A rewind runs under the session's lease, so it is refused while the session
runs here or in another window; it restores through the editor, confined
to the workspace folders.
"""

from __future__ import annotations

from rhema_lsp.contract import (
    CHANGES,
    CHECKPOINT_CONTENT,
    REWIND,
    UNDO_TURN,
    ChangesArgs,
    ChangesResult,
    CheckpointContentArgs,
    CheckpointContentResult,
    FileConflict,
    RewindArgs,
    RewindResult,
    UndoTurnArgs,
    UndoTurnResult,
)
from rhema_lsp.runs.changes import describe_changes, parse_checkpoint_uri
from rhema_lsp.runs.registry import SessionRunningError
from rhema_lsp.runs.rewind import RewindReport, rewind
from rhema_lsp.server.errors import BadArguments
from rhema_lsp.server.router import Request, Service, serves
from rhema_lsp.vocabulary import RewindWhat

__all__: list[str] = []


async def _rewind(
    service: Service,
    session: str,
    turn: int,
    what: RewindWhat,
    *,
    force: bool,
    label: str,
    paths: list[str] | None = None,
) -> RewindReport:
    """Rewind under the session's lease (refused while it runs anywhere)."""
    state = service.state
    found = await state.state_of(session)
    if state.runs.is_running(session):
        raise SessionRunningError(session)
    async with found.store.lease(session):
        return await rewind(
            found.store,
            state.editor,
            state.folders.roots() or [found.path],
            session,
            turn,
            what,
            force=force,
            label=label,
            paths=paths,
        )


@serves(UNDO_TURN)
async def undo_turn(service: Service, args: UndoTurnArgs, request: Request) -> UndoTurnResult:
    found = await service.state.state_of(args.session)
    info = await found.store.info(args.session)
    # The last turn with a prompt (a number a crash left reserved has no changes).
    turn = args.turn or max(await found.store.turn_numbers.current(info.id), 1)
    report = await _rewind(
        service, info.id, turn, "code", force=False, label=f"rhema: undo turn {turn}"
    )
    return UndoTurnResult(
        reverted=report.restored,
        conflicts=[conflict.uri for conflict in report.conflicts],
        save=report.save,
    )


@serves(REWIND)
async def rewind_turn(service: Service, args: RewindArgs, request: Request) -> RewindResult:
    report = await _rewind(
        service,
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


@serves(CHANGES)
async def changes(service: Service, args: ChangesArgs, request: Request) -> ChangesResult:
    state = service.state
    found = await state.state_of(args.session)
    return await describe_changes(
        found.store, state.editor, args.session, args.turn, state.folders.display
    )


@serves(CHECKPOINT_CONTENT)
async def checkpoint_content(
    service: Service, args: CheckpointContentArgs, request: Request
) -> CheckpointContentResult:
    try:
        session, blob, _path = parse_checkpoint_uri(args.uri)
    except ValueError as exc:
        raise BadArguments(str(exc)) from exc
    found = await service.state.state_of(session)
    data = await found.store.checkpoints.blob(blob)
    return CheckpointContentResult(uri=args.uri, text=data.decode("utf-8", errors="replace"))
